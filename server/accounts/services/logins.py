"""Live logins: this process's connections logged in with an account key, so that a key revoked
anywhere (a logout with it, a new password set from another login, on any process) logs its
connections out here at once, not when they next connect.

One store subscription follows the account stream of each account logged in here (its group,
``acct:<name>``). A wake-up or a gap has the account folded again, and each login whose key it
no longer holds is told; a login is checked once as it is held too, since a key may be revoked
between the look-up that logged it in and the subscription.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from server.accounts.domain.accounts import account_stream
from server.accounts.services.accounts import Accounts
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from server.store import EventStore, Subscription, Wakeup, stream_group
from shared.errors import ArenaError

log = get_logger("server.accounts.services.logins")


class LiveLogin:
    """One connection's login: told (``revoked``) once its key is no longer live."""

    def __init__(self, account: str, key_hash: str, revoked: Callable[[], None]) -> None:
        self.account = account
        self.key_hash = key_hash
        self.revoked = revoked


class Logins:
    """The logins of this process's connections, by account."""

    def __init__(self, store: EventStore, accounts: Accounts) -> None:
        self.store = store
        self.accounts = accounts
        self._held: dict[str, set[LiveLogin]] = {}
        self._accounts: dict[str, str] = {}  # group -> account, for the wake-ups
        self._subscription: Subscription | None = None
        self._checks: set[asyncio.Task[None]] = set()

    def _group(self, account: str) -> str:
        return stream_group(account_stream(account))

    async def hold(self, account: str, key_hash: str, revoked: Callable[[], None]) -> LiveLogin:
        """Follow a login from now on; ``revoked`` is called once if its key stops being live."""
        if self._subscription is None:
            self._subscription = self.store.subscribe(self._woken, on_gap=self._gap)
        login = LiveLogin(account, key_hash, revoked)
        self._held.setdefault(account, set()).add(login)
        group = self._group(account)
        self._accounts[group] = account
        await self._subscription.subscribe([group])
        await self._check(account)
        return login

    async def release(self, login: LiveLogin) -> None:
        """Stop following a login (its connection logged out or closed)."""
        held = self._held.get(login.account)
        if held is None or login not in held:
            return
        held.discard(login)
        if not held:
            del self._held[login.account]
            group = self._group(login.account)
            self._accounts.pop(group, None)
            if self._subscription is not None:
                await self._subscription.unsubscribe([group])

    async def aclose(self) -> None:
        await stop_tasks(self._checks)
        if self._subscription is not None:
            await self._subscription.aclose()

    def _woken(self, wakeup: Wakeup) -> None:
        account = self._accounts.get(stream_group(wakeup.stream))
        if account is not None:
            self._check_soon(account)

    def _gap(self) -> None:
        for account in list(self._held):
            self._check_soon(account)

    def _check_soon(self, account: str) -> None:
        task = asyncio.get_running_loop().create_task(self._check(account))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def _check(self, account: str) -> None:
        if account not in self._held:
            return
        try:
            found = await self.accounts.account(account)
        except ArenaError as exc:  # the store is down: the next wake-up or gap checks again
            log.warning("login_check_failed", account=account, code=exc.code)
            return
        live = found.keys if found is not None else frozenset()
        for login in list(self._held.get(account, ())):
            if login.key_hash not in live:
                await self.release(login)
                log.info("login_revoked", account=account)
                login.revoked()
