"""The accounts service on the store contract (memory here; the Cluster in test_accounts_e2e):
register, login, keys, rehash, a new password and the attempt limits."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest
from argon2 import PasswordHasher

from server.accounts.domain.accounts import account_stream, key_hash
from server.accounts.services.accounts import Accounts
from server.accounts.services.passwords import Passwords, passwords_of
from server.kernel.errors import BadCredentials, NameTaken, NotLoggedIn, RateLimited
from server.runtime.clock import FakeClock
from server.runtime.config import Config, parse_config
from server.store import MemoryEventStore
from shared.protocol import BadField

# Real Argon2id, with small parameters so the tests run quickly on a loaded machine.
CHEAP = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)


@pytest.fixture
async def store() -> AsyncIterator[MemoryEventStore]:
    s = MemoryEventStore()
    yield s
    await s.aclose()


def accounts(store: MemoryEventStore, clock: FakeClock, **limits: int) -> Accounts:
    return Accounts(store, clock, Config(**limits), Passwords(CHEAP))  # type: ignore[arg-type]


async def test_a_name_is_claimed_once_even_at_the_same_time(store: MemoryEventStore) -> None:
    service = accounts(store, FakeClock())
    results = await asyncio.gather(
        service.register("Ann", "password one", address="a"),
        service.register("ANN", "password two", address="b"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, NameTaken) for r in results) == 1
    assert await store.last_version(account_stream("ann")) == 2


async def test_keys_log_in_until_revoked(store: MemoryEventStore) -> None:
    service = accounts(store, FakeClock())
    first = await service.register("Ann", "password one", address="a")
    second = await service.login("ann", "password one", address="a")
    assert (await service.authenticate(first.key)) is not None
    assert await service.logout(first.key) is True
    assert await service.authenticate(first.key) is None
    assert await service.logout(first.key) is False
    found = await service.authenticate(second.key)
    assert found is not None
    assert found.name == "Ann"
    with pytest.raises(BadCredentials):
        await service.login("ann", "password two", address="a")


async def test_login_rehashes_a_password_hashed_with_older_parameters(
    store: MemoryEventStore,
) -> None:
    clock = FakeClock()
    await accounts(store, clock).register("Ann", "password one", address="a")
    stronger = PasswordHasher(time_cost=2, memory_cost=8192, parallelism=1)
    service = Accounts(store, clock, Config(), Passwords(stronger))
    await service.login("ann", "password one", address="a")
    kinds = [e.data["type"] for e in await store.read(account_stream("ann"))]
    assert kinds == ["account_created", "key_issued", "password_changed", "key_issued"]
    account = await service.account("ann")
    assert account is not None
    assert not stronger.check_needs_rehash(account.password_hash)
    await service.login("ann", "password one", address="a")  # no second rehash
    assert len(await store.read(account_stream("ann"))) == 5


async def test_the_hash_cost_is_the_servers_option_and_argon2_cffis_defaults_by_default() -> None:
    default = passwords_of(parse_config([], env={})).hasher
    assert (default.time_cost, default.memory_cost, default.parallelism) == (3, 65536, 4)
    args = ["--password-time-cost", "2", "--password-memory-kib", "16384"]
    config = parse_config(args, env={"ARENA_PASSWORD_PARALLELISM": "2"})
    passwords = passwords_of(config)
    assert passwords.hasher.hash("password one").startswith("$argon2id$v=19$m=16384,t=2,p=2$")
    with pytest.raises(SystemExit, match="at least 8 per lane"):
        parse_config(["--password-memory-kib", "8", "--password-parallelism", "2"], env={})


async def test_attempts_are_limited_per_name_and_per_address(store: MemoryEventStore) -> None:
    clock = FakeClock()
    service = accounts(store, clock, auth_attempts_per_name=2, auth_attempts_per_address=2)
    for _ in range(2):
        with pytest.raises(BadCredentials):
            await service.login("zed", "password", address="x")
    with pytest.raises(RateLimited):
        await service.login("zed", "password", address="y")  # the name's limit
    with pytest.raises(RateLimited):
        await service.login("other", "password", address="x")  # the address's limit
    clock.advance(600_000)  # the next window
    with pytest.raises(BadCredentials):
        await service.login("zed", "password", address="z")


async def test_a_new_password_ends_every_other_login(store: MemoryEventStore) -> None:
    service = accounts(store, FakeClock())
    first = await service.register("Ann", "password one", address="a")
    here = await service.login("ann", "password one", address="b")
    third = await service.login("ann", "password one", address="c")
    revoked = await service.change_password(here.key, "password one", "password two", address="b")
    assert revoked == 2
    assert await service.authenticate(first.key) is None
    assert await service.authenticate(third.key) is None
    assert await service.authenticate(here.key) is not None
    assert await store.index_get("account-keys", key_hash(first.key)) is None  # none stale
    with pytest.raises(BadCredentials):
        await service.login("ann", "password one", address="a")
    await service.login("ann", "password two", address="a")
    # The same password again: only ends the other logins (the one just made).
    assert await service.change_password(here.key, "password two", "password two", address="b") == 1
    with pytest.raises(NotLoggedIn):  # a revoked key cannot set a password
        await service.change_password(first.key, "password two", "password 3", address="a")


async def test_a_new_password_is_refused_without_the_current_one(store: MemoryEventStore) -> None:
    clock = FakeClock()
    service = accounts(store, clock, auth_attempts_per_name=3)
    login = await service.register("Ann", "password one", address="a")
    with pytest.raises(BadField, match="new_password"):
        await service.change_password(login.key, "password one", "short", address="a")
    for _ in range(2):
        with pytest.raises(BadCredentials):
            await service.change_password(login.key, "guess", "password two", address="a")
    with pytest.raises(RateLimited):  # guessing with a stolen key counts as logins do
        await service.change_password(login.key, "password one", "password two", address="a")
    account = await service.account("ann")
    assert account is not None
    assert await Passwords(CHEAP).verify(account.password_hash, "password one") == (True, None)


class _ThreadRecording(PasswordHasher):
    """The real hasher, noting which thread each hash and verification ran on."""

    threads: list[int]

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        self.threads.append(threading.get_ident())
        return super().hash(password, salt=salt)

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        self.threads.append(threading.get_ident())
        return super().verify(hash, password)


async def test_hashing_runs_off_the_event_loop(store: MemoryEventStore) -> None:
    hasher = _ThreadRecording(time_cost=1, memory_cost=8192, parallelism=1)
    hasher.threads = []
    service = Accounts(store, FakeClock(), Config(), Passwords(hasher))
    await service.register("Ann", "password one", address="a")
    await service.login("Ann", "password one", address="a")
    with pytest.raises(BadCredentials):
        await service.login("nobody", "password one", address="a")  # the dummy hash too
    assert len(hasher.threads) == 4
    assert threading.get_ident() not in hasher.threads
