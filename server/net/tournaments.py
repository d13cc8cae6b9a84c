"""The tournament parts of one server process, wired (docs/tournaments.md): folded by the book,
run by the pairer under a lease, scored from the hub, followed through the feed, asked through
each connection's requests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import CollectorRegistry

from server.accounts.limits import AttemptLimiter
from server.net.account_requests import AccountRequests
from server.net.room_requests import Handler
from server.net.tournament_feed import Follower, TournamentFeed
from server.net.tournament_requests import RatingOf, TournamentRequests
from server.rooms.commands import Commands
from server.rooms.tournament_archive import TournamentArchive
from server.rooms.tournament_book import TournamentBook
from server.rooms.tournament_metrics import TournamentMetrics
from server.rooms.tournament_pairer import TournamentPairer
from server.rooms.tournament_presence import TournamentPresence
from server.rooms.tournament_scorer import TournamentScorer
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.store import EventStore


class Tournaments:
    """Every tournament part of this process, started and stopped together."""

    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        config: Config,
        commands: Commands,
        *,
        registry: CollectorRegistry,
        seated: Callable[[str], Awaitable[None]],
        rating_of: RatingOf,
    ) -> None:
        self.config = config
        self.rating_of = rating_of
        archive = commands.hub.archive  # the finished rooms' archive takes them too
        kept = TournamentArchive(store, archive, clock) if archive is not None else None
        self.book = TournamentBook(store, clock, kept)
        self.presence = TournamentPresence(store, clock, config, commands.presence)
        self.metrics = TournamentMetrics(registry)
        self.scorer = TournamentScorer(self.book, self.metrics)
        commands.hub.listen(self.scorer.on_change)
        self.pairer = TournamentPairer(
            store, self.book, commands, self.presence, clock, config, self.metrics, self.scorer
        )
        self.feed = TournamentFeed(self.book, self.presence, clock, seated=seated)
        self.limiter = AttemptLimiter(
            store, clock, "tournament", config.tournament_requests_per_minute, 60.0
        )

    @property
    def played(self) -> Callable[[str], Awaitable[list[dict[str, Any]]]]:
        """An account's finished tournaments, for its profile."""
        return self.book.played

    def attach(
        self, connection: Follower, handlers: dict[str, Handler], login: AccountRequests
    ) -> TournamentRequests:
        """A connection's tournament requests, added to its handlers; its profile answers
        list the account's tournaments."""
        requests = TournamentRequests(
            connection,
            self.book,
            self.feed,
            self.limiter,
            self.rating_of,
            self.config,
            lambda: login.account_id,
        )
        handlers.update(requests.handlers())
        login.tournaments = self.played
        return requests

    def start(self) -> None:
        self.pairer.start()
        self.feed.start()

    async def aclose(self) -> None:
        await self.feed.aclose()
        await self.pairer.aclose()
        await self.scorer.aclose()
