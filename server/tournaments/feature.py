"""The tournament parts of one server process, wired (docs/tournaments.md): folded by the book,
run by the pairer under a lease, scored from the hub, followed through the feed, asked through
each connection's requests (the router's entry for tournaments)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry

from server.accounts.services.limits import AttemptLimiter
from server.race.wire.requests import Race
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.store import EventStore
from server.tournaments.services.archive import TournamentArchive
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.metrics import TournamentMetrics
from server.tournaments.services.pairer import TournamentPairer
from server.tournaments.services.presence import TournamentPresence
from server.tournaments.services.scorer import Rate, TournamentScorer
from server.tournaments.wire.feed import Follower, TournamentFeed
from server.tournaments.wire.page import TournamentPage
from server.tournaments.wire.requests import RatingOf, TournamentRequests


class Tournaments:
    """Every tournament part of this process, started and stopped together."""

    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        config: Config,
        race: Race,
        *,
        registry: CollectorRegistry,
        seated: Callable[[str], Awaitable[None]],
        rating_of: RatingOf,
        hidden: Callable[[], frozenset[str]] = frozenset,
        renamed: Callable[[], Mapping[str, str]] = dict,
        rate: Rate | None = None,
    ) -> None:
        self.config = config
        self.rating_of = rating_of
        self.race = race
        commands = race.commands
        archive = commands.hub.archive  # the finished rooms' archive takes them too
        kept = TournamentArchive(store, archive, clock) if archive is not None else None
        self.book = TournamentBook(store, clock, kept, hidden=hidden, renamed=renamed)
        self.presence = TournamentPresence(store, clock, config, commands.presence)
        self.metrics = TournamentMetrics(registry)
        self.scorer = TournamentScorer(self.book, self.metrics, rate)
        commands.hub.listen(self.scorer.on_change)
        self.pairer = TournamentPairer(
            store, self.book, commands, self.presence, clock, config, self.metrics, self.scorer
        )
        self.feed = TournamentFeed(self.book, self.presence, clock, race, seated=seated)
        self.page = TournamentPage(self.book, clock)  # /tournament/ID's first view
        self.limiter = AttemptLimiter(
            store, clock, "tournament", config.tournament_requests_per_minute, 60.0
        )

    @property
    def played(self) -> Callable[[str], Awaitable[list[dict[str, Any]]]]:
        """An account's finished tournaments, for its profile."""
        return self.book.played

    def attach(self, connection: Follower) -> TournamentRequests:
        """A connection's tournament requests."""
        return TournamentRequests(
            connection,
            self.race,
            self.book,
            self.feed,
            self.limiter,
            self.rating_of,
            self.config,
        )

    def start(self) -> None:
        self.pairer.start()
        self.feed.start()

    async def aclose(self) -> None:
        await self.feed.aclose()
        await self.pairer.aclose()
        await self.scorer.aclose()
