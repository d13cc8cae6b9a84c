"""Accounts on each connection: who it is logged in as (``hello.key``, ``login``,
``register``), the account and rating requests, and its login let go when it ends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from server.accounts.domain.accounts import Account
from server.accounts.services.accounts import Accounts
from server.accounts.services.logins import Logins
from server.accounts.services.ratings import Ratings
from server.accounts.wire.requests import AccountRequests
from server.daily.domain.days import Streaks
from server.net.router import Link
from server.race.services.commands import Commands

Played = Callable[[str], Awaitable[list[dict[str, Any]]]]
"""An account's finished tournaments or challenges, for its profile."""


class Addressed(Link, Protocol):
    address: str  # where the connection comes from: login attempts are limited per address


class AccountsFeature:
    """The router's entry for accounts; a connection's part is also its ``Identity``."""

    def __init__(
        self,
        accounts: Accounts,
        ratings: Ratings,
        commands: Commands,
        *,
        logins: Logins | None,
        streaks: Callable[[str], Awaitable[Streaks]] | None = None,
        tournaments: Played | None = None,
        challenges: Played | None = None,
        accuracy: Played | None = None,
    ) -> None:
        self.accounts = accounts
        self.ratings = ratings
        self.commands = commands
        self.logins = logins
        self.streaks = streaks
        self.tournaments = tournaments
        self.challenges = challenges
        self.accuracy = accuracy

    def attach(self, link: Addressed) -> AccountRequests:
        def logged_in(account: Account | None) -> None:
            """A logged-in connection is seated under its account's name."""
            if account is not None:
                link.name = account.name

        requests = AccountRequests(
            self.accounts,
            self.ratings,
            self.commands,
            link.reply,
            link.address,
            on_account=logged_in,
            streaks=self.streaks,
            logins=self.logins,
            tournaments=self.tournaments,
            challenges=self.challenges,
            accuracy=self.accuracy,
        )
        link.identity = requests
        return requests
