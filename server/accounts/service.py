"""Accounts' I/O: register, login, logout and key look-ups, around the pure decisions.

The account stream is the truth (``server.domain.accounts``); the key index (SHA-256 of a key
→ account) only says which stream to read, so a revoked key found in a stale index entry is
still refused. Hashing runs off the loop (``Passwords``); attempts are limited per address and
per name on every process together (``AttemptLimiter``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from server.accounts.limits import AttemptLimiter
from server.accounts.passwords import Passwords
from server.domain import accounts as a
from server.domain.errors import NameTaken
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import ServerError, WrongExpectedVersion

log = get_logger("server.accounts")

KEY_INDEX = "account-keys"


@dataclass(frozen=True)
class Login:
    """A logged-in account: its id (folded name), its name, and the key to keep."""

    id: str
    name: str
    key: str


class Accounts:
    def __init__(
        self, store: EventStore, clock: Clock, config: Config, passwords: Passwords | None = None
    ) -> None:
        self.store = store
        self.clock = clock
        self.passwords = (
            passwords if passwords is not None else Passwords(concurrency=config.hash_concurrency)
        )
        window = config.auth_window_s
        self.per_name = AttemptLimiter(store, clock, "name", config.auth_attempts_per_name, window)
        self.per_address = AttemptLimiter(
            store, clock, "address", config.auth_attempts_per_address, window
        )

    async def account(self, folded: str) -> a.Account | None:
        events = await self.store.read(a.account_stream(folded))
        return a.fold_account(e.data for e in events)

    async def _limit(self, address: str, folded: str) -> None:
        await self.per_address.attempt(address)
        await self.per_name.attempt(folded)

    async def register(self, raw_name: str, password: str, *, address: str) -> Login:
        name, folded = a.check_name(raw_name)
        a.check_password(password)
        await self._limit(address, folded)
        if await self.store.last_version(a.account_stream(folded)) > 0:
            raise NameTaken(f"the name {name!r} is taken")  # before paying for a hash
        password_hash = await self.passwords.hash(password)
        key = secrets.token_urlsafe(a.KEY_BYTES)
        events = a.decide_register(
            None,
            name,
            password_hash=password_hash,
            key_hash=a.key_hash(key),
            now=self.clock.now_ms(),
        )
        try:
            # The claim: version 0 or nothing, on any store, on any process.
            await self.store.append(
                a.account_stream(folded), [a.encode(e) for e in events], expected_version=0
            )
        except WrongExpectedVersion:
            raise NameTaken(f"the name {name!r} is taken") from None
        await self.store.index_put(KEY_INDEX, a.key_hash(key), 0, folded.encode())
        log.info("account_registered", account=folded)
        return Login(folded, name, key)

    async def login(self, raw_name: str, password: str, *, address: str) -> Login:
        folded = a.fold_name(a.clean_name(raw_name))
        if len(password) > a.MAX_PASSWORD:
            a.check_password(password)
        await self._limit(address, folded)
        key = secrets.token_urlsafe(a.KEY_BYTES)
        for _ in range(5):
            account = await self.account(folded)
            verified, rehashed = await self.passwords.verify(
                account.password_hash if account is not None else None, password
            )
            events = a.decide_login(
                account,
                verified=verified,
                key_hash=a.key_hash(key),
                rehashed=rehashed,
                now=self.clock.now_ms(),
            )
            assert account is not None  # decide_login refused otherwise
            try:
                await self.store.append(
                    a.account_stream(folded),
                    [a.encode(e) for e in events],
                    expected_version=account.version,
                )
            except WrongExpectedVersion:
                continue
            await self.store.index_put(KEY_INDEX, a.key_hash(key), 0, folded.encode())
            log.info("account_login", account=folded)
            return Login(folded, account.name, key)
        raise ServerError("the account is changing too fast; try again")

    async def authenticate(self, key: str) -> a.Account | None:
        """The account whose live key this is; None for an unknown or revoked key."""
        hashed = a.key_hash(key)
        entry = await self.store.index_get(KEY_INDEX, hashed)
        if entry is None:
            return None
        account = await self.account(entry.value.decode())
        if account is None or hashed not in account.keys:
            return None
        return account

    async def logout(self, key: str) -> bool:
        """Revoke ``key``; False if it was no live key."""
        hashed = a.key_hash(key)
        for _ in range(5):
            account = await self.authenticate(key)
            events = a.decide_logout(account, key_hash=hashed, now=self.clock.now_ms())
            if account is None or not events:
                await self.store.index_remove(KEY_INDEX, hashed)
                return False
            try:
                await self.store.append(
                    a.account_stream(account.id),
                    [a.encode(e) for e in events],
                    expected_version=account.version,
                )
            except WrongExpectedVersion:
                continue
            await self.store.index_remove(KEY_INDEX, hashed)
            log.info("account_logout", account=account.id)
            return True
        raise ServerError("the account is changing too fast; try again")
