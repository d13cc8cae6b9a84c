"""Accounts' I/O: register, login, logout, password changes and key look-ups, around the pure
decisions.

The account stream is the truth (``server.accounts.domain.accounts``); the key index (SHA-256 of a
key → account) only says which stream to read, so a revoked key found in a stale index entry is
still refused. Hashing runs off the loop (``Passwords``); attempts are limited per address and per
name on every process together (``AttemptLimiter``).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.accounts.domain import accounts as a
from server.accounts.services.limits import AttemptLimiter
from server.accounts.services.passwords import Passwords, passwords_of
from server.kernel.errors import NameTaken, NotLoggedIn
from server.kernel.names import fold_name
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import ArenaError, ServerError, WrongExpectedVersion

log = get_logger("server.accounts")

KEY_INDEX = "account-keys"


@dataclass(frozen=True)
class Login:
    """A logged-in account: its id (folded name), its name, and the key to keep."""

    id: str
    name: str
    key: str
    notice: str | None = None  # a moderator's rename the player is told of, once


class Accounts:
    def __init__(
        self, store: EventStore, clock: Clock, config: Config, passwords: Passwords | None = None
    ) -> None:
        self.store = store
        self.clock = clock
        self.passwords = passwords if passwords is not None else passwords_of(config)
        window = config.auth_window_s
        self.per_name = AttemptLimiter(store, clock, "name", config.auth_attempts_per_name, window)
        self.per_address = AttemptLimiter(
            store, clock, "address", config.auth_attempts_per_address, window
        )

    async def account(self, folded: str) -> a.Account | None:
        """The account whose key (its first name, folded) is ``folded``."""
        events = await self.store.read(a.account_stream(folded))
        return a.fold_account(e.data for e in events)

    async def key_of(self, folded: str) -> str | None:
        """The key of the account a folded name is (or was) the name of; None for a free name.
        A name an account was renamed from stays its: it finds the account, as a redirect."""
        events = await self.store.read(a.account_stream(folded))
        return a.owner_of_name(folded, (e.data for e in events))

    async def named(self, raw_name: str) -> a.Account | None:
        """The account a name as typed finds (its name now, or one it had): what login,
        profiles, reports and moderators look accounts up by."""
        folded = fold_name(a.clean_name(raw_name))
        events = [e.data for e in await self.store.read(a.account_stream(folded))]
        key = a.owner_of_name(folded, events)
        if key == folded:  # its first name: the stream read is the account's own
            return a.fold_account(events)
        return await self.account(key) if key is not None else None

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
        folded = fold_name(a.clean_name(raw_name))
        if len(password) > a.MAX_PASSWORD:
            a.check_password(password)
        await self._limit(address, folded)
        folded = await self.key_of(folded) or folded  # a renamed account's key
        key = secrets.token_urlsafe(a.KEY_BYTES)

        async def decide(account: a.Account | None) -> list[a.AccountEvent]:
            verified, rehashed = await self._verify(account, password)
            return a.decide_login(
                account,
                verified=verified,
                key_hash=a.key_hash(key),
                rehashed=rehashed,
                now=self.clock.now_ms(),
            )

        account, _ = await self._decided(folded, decide)
        assert account is not None  # decide_login refused otherwise
        await self.store.index_put(KEY_INDEX, a.key_hash(key), 0, folded.encode())
        log.info("account_login", account=folded)
        if account.notice is not None:
            await self.told(folded)
        return Login(folded, account.name, key, account.notice)

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
        account = await self.authenticate(key)
        revoked = False
        if account is not None:

            async def decide(found: a.Account | None) -> list[a.AccountEvent]:
                return a.decide_logout(found, key_hash=hashed, now=self.clock.now_ms())

            revoked = bool((await self._decided(account.id, decide))[1])
            if revoked:
                log.info("account_logout", account=account.id)
        await self.store.index_remove(KEY_INDEX, hashed)
        return revoked

    async def change_password(
        self, key: str, password: str, new_password: str, *, address: str
    ) -> int:
        """Set a new password for the account ``key`` logs in, given its current one; every
        other key is revoked. How many were. Counted against the attempt limits as a login
        is: a stolen key must not let anyone guess the password without them."""
        a.check_password(new_password, "new_password")
        if len(password) > a.MAX_PASSWORD:
            a.check_password(password)
        account = await self.authenticate(key)
        if account is None:
            raise NotLoggedIn("this connection is not logged in")
        await self._limit(address, account.id)
        password_hash = await self.passwords.hash(new_password)

        async def decide(found: a.Account | None) -> list[a.AccountEvent]:
            verified, _ = await self._verify(found, password)
            return a.decide_change_password(
                found,
                verified=verified,
                key_hash=a.key_hash(key),
                password_hash=password_hash,
                now=self.clock.now_ms(),
            )

        _, events = await self._decided(account.id, decide)
        revoked = [e.key_hash for e in events if isinstance(e, a.KeyRevoked)]
        for other in revoked:
            await self.store.index_remove(KEY_INDEX, other)
        log.info("account_password_changed", account=account.id, revoked=len(revoked))
        return len(revoked)

    async def close(self, folded: str) -> bool:
        """A moderator closes the account: no login, every live key revoked; False if it was
        closed already."""
        now = self.clock.now_ms()

        async def decide(account: a.Account | None) -> list[a.AccountEvent]:
            return a.decide_close(account, now=now)

        _, events = await self._decided(folded, decide)
        return bool(events)

    async def reopen(self, folded: str) -> bool:
        """The account may log in again; False if it was open."""
        now = self.clock.now_ms()

        async def decide(account: a.Account | None) -> list[a.AccountEvent]:
            return a.decide_reopen(account, now=now)

        _, events = await self._decided(folded, decide)
        return bool(events)

    async def rename(self, folded: str, raw_name: str, why: str) -> a.Account:
        """A moderator renames the account whose key is ``folded``: the new name is claimed
        first (its stream's first event, as registration claims one: atomic on any store and
        slot), then the account's stream says its new name. Both steps are idempotent, so a
        retry after a crash between them finishes the rename. The account as renamed."""
        name, new = a.check_name(raw_name)
        owner = await self.key_of(new)
        if owner is None:
            claim = a.NameClaimed(self.clock.now_ms(), folded)
            # Claimed meanwhile, by a registration or another rename: who won is read again.
            with contextlib.suppress(WrongExpectedVersion):
                await self.store.append(
                    a.account_stream(new), [a.encode(claim)], expected_version=0
                )
            owner = await self.key_of(new)
        now = self.clock.now_ms()

        async def decide(account: a.Account | None) -> list[a.AccountEvent]:
            return a.decide_rename(account, owner=owner, name=name, why=why, now=now)

        _, events = await self._decided(folded, decide)
        if events:
            log.info("account_renamed", account=folded, name=name)
        renamed = await self.account(folded)
        assert renamed is not None  # decide_rename refused otherwise
        return renamed

    async def told(self, folded: str) -> None:
        """The player was told of the rename: not again at the next login. A store that fails
        here fails no login: the notice is told again next time, which is better than never."""
        now = self.clock.now_ms()

        async def decide(account: a.Account | None) -> list[a.AccountEvent]:
            return a.decide_told(account, now=now)

        try:
            await self._decided(folded, decide)
        except ArenaError as exc:
            log.warning("notice_not_noted", account=folded, code=exc.code)

    async def _verify(self, account: a.Account | None, password: str) -> tuple[bool, str | None]:
        """``Passwords.verify`` against the account's hash; no account takes as long, and fails."""
        return await self.passwords.verify(
            account.password_hash if account is not None else None, password
        )

    async def _decided(
        self, folded: str, decide: Callable[[a.Account | None], Awaitable[list[a.AccountEvent]]]
    ) -> tuple[a.Account | None, list[a.AccountEvent]]:
        """The account folded afresh, what ``decide`` makes of it appended at its version, and
        all again when another append came first (a login elsewhere, say), up to five times.
        Nothing is appended when ``decide`` decides nothing."""
        for _ in range(5):
            account = await self.account(folded)
            events = await decide(account)
            if not events:
                return account, events
            assert account is not None  # a decision about no account is a refusal
            try:
                await self.store.append(
                    a.account_stream(folded),
                    [a.encode(e) for e in events],
                    expected_version=account.version,
                )
            except WrongExpectedVersion:
                continue
            return account, events
        raise ServerError("the account is changing too fast; try again")
