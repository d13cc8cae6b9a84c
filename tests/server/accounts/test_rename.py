"""A moderator's rename on the store contract, on every backend (memory, the embedded SQLite,
Redis, a Redis Cluster): the new name is claimed once, against another rename or a registration
at the same time, and the account keeps its key, its password and its keys."""

from __future__ import annotations

import asyncio

import pytest

from server.accounts.domain.accounts import account_stream
from server.accounts.services.accounts import Accounts
from server.accounts.services.passwords import Passwords
from server.kernel.errors import NameTaken
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore
from tests.server.accounts.test_service import CHEAP

PASSWORD = "password one"


def accounts(store: EventStore) -> Accounts:
    return Accounts(store, FakeClock(), Config(), Passwords(CHEAP))


async def test_a_rename_keeps_the_key_and_the_password_and_the_new_name_finds_it(
    backend: EventStore,
) -> None:
    service = accounts(backend)
    first = await service.register("Ann", PASSWORD, address="a")
    renamed = await service.rename("ann", "Zed", "an insult")
    assert (renamed.id, renamed.name) == ("ann", "Zed")
    assert await service.rename("ann", "Zed", "a retry") == renamed  # nothing more appended
    assert await backend.last_version(account_stream("zed")) == 1  # the claim, alone
    found = await service.authenticate(first.key)  # the key logs in, under the new name
    assert found is not None
    assert (found.id, found.name) == ("ann", "Zed")
    login = await service.login("ZED", PASSWORD, address="a")
    assert (login.id, login.name, login.notice) == (
        "ann",
        "Zed",
        "a moderator renamed your account from Ann to Zed: an insult",
    )
    assert (await service.login("ann", PASSWORD, address="a")).notice is None  # told once
    for name in ("zed", "Ann"):
        with pytest.raises(NameTaken):
            await service.register(name, PASSWORD, address="b")
        named = await service.named(name)
        assert named is not None
        assert named.id == "ann"
    assert await service.named("nobody") is None


async def test_a_new_name_is_claimed_once_whoever_asks_at_the_same_time(
    backend: EventStore,
) -> None:
    service = accounts(backend)
    for name in ("Ann", "Bob"):
        await service.register(name, PASSWORD, address="a")
    results = await asyncio.gather(
        service.rename("ann", "Zed", "one"),
        service.rename("bob", "zed", "two"),
        service.register("ZED", PASSWORD, address="b"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, NameTaken) for r in results) == 2, results
    winner = await service.named("Zed")
    assert winner is not None
    expected = {"ann": "Ann", "bob": "Bob"}
    if winner.id in expected:  # a rename won; else the registration did
        expected[winner.id] = {"ann": "Zed", "bob": "zed"}[winner.id]
    shown = {key: getattr(await service.account(key), "name", None) for key in expected}
    assert shown == expected
