"""The server assembled from its dependencies: config, event store and clock are passed in."""

from __future__ import annotations

import asyncio
import gc
import itertools
import secrets
from functools import partial

import structlog
from websockets.asyncio.server import Server, ServerConnection

from server.accounts.feature import AccountsFeature
from server.accounts.services.accounts import Accounts
from server.accounts.services.limits import AttemptLimiter
from server.accounts.services.logins import Logins
from server.accounts.services.ratings import PENDING_INDEX, Ratings
from server.accounts.wire.page import ProfilePage
from server.analysis.feature import AnalysisFeature
from server.analysis.services.analyser import Analyser
from server.analysis.services.book import analysis_streams
from server.archive import Archive
from server.bots.services.runner import BotRunner
from server.challenges.domain.challenge import Challenge
from server.challenges.domain.challenge import decide_rating as challenge_rating
from server.challenges.feature import ChallengesFeature
from server.challenges.services.archive import ChallengeArchive
from server.challenges.services.challenges import Challenges
from server.challenges.services.sweep import ChallengeSweep
from server.daily.feature import DailyFeature
from server.daily.services.challenge import DailyChallenge
from server.endpoint import Endpoint
from server.kernel.placement import home_worker
from server.matchmaking.feature import MatchmakingFeature
from server.matchmaking.services.matchmaker import Matchmaker
from server.net.connection import Connection, Outbox
from server.net.first_view import PageView
from server.net.router import Router
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.feature import RaceFeature
from server.race.services.archiver import Archiver
from server.race.services.clock import RaceClock
from server.race.services.commands import Commands
from server.race.services.hub import Hub, load_many
from server.race.services.unloading import Unloader
from server.race.wire.delivery import Delivery
from server.race.wire.export import GameExport
from server.race.wire.page import RacePage
from server.race.wire.requests import Race
from server.referee.feature import RefereeFeature
from server.referee.services.assessor import Assessor
from server.referee.services.referee import RefereeService, moderators_of
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.gc_timer import YoungCollector
from server.runtime.logging import get_logger
from server.runtime.metrics import Metrics, process_figures
from server.runtime.solver_pool import SolverPool
from server.store import EventStore, StoreError
from server.tournaments.feature import Tournaments

log = get_logger("server.app")
_GC_THRESHOLDS = (700, 10, 1_000)  # see App.start


def configured_archiver(
    store: EventStore, archive: Archive, clock: Clock, config: Config, process: str
) -> Archiver:
    """The archiver at the configured delay and sweep interval; a race is rated before it
    leaves the store, and its games' analyses go with it."""
    return Archiver(
        store,
        archive,
        clock,
        after_s=config.archive_after_s,
        interval_s=config.archive_sweep_s,
        hold_indexes=[PENDING_INDEX],
        process=process,
        side_streams=kept_with_room,
    )


async def rate_challenge(ratings: Ratings, challenge: Challenge) -> None:
    """A settled challenge rated once, as a race among the accounts that played it."""
    event = challenge_rating(challenge)
    if event is not None:
        await ratings.record_rated(event)


def endpoint_of(app: App) -> Endpoint:
    """Where the app listens: its handler, the export, the pages' first views, and how many
    connections it holds (past --max-connections an upgrade is answered busy)."""
    return Endpoint(
        app.config,
        app.store,
        app.metrics,
        app.handler,
        pages={"/export/": app.export.respond},
        held=lambda: len(app.connections),
        views=first_views(app),
    )


def configured_tournaments(app: App) -> Tournaments:
    """Tournaments over the app's races, their ratings from the app's, and the accounts a
    moderator marked (out of the standings) or renamed (shown under the new name)."""
    return Tournaments(
        app.store,
        app.clock,
        app.config,
        app.race,
        registry=app.metrics.registry,
        seated=app.matchmaker.seated,
        rating_of=app.ratings.rating_of,
        hidden=app.ratings.marked,
        renamed=app.ratings.renamed,
        rate=app.ratings.record,
    )


def configured_referee(app: App) -> RefereeService:
    """Reports and moderators' actions over the app's accounts, ratings and rooms; the
    moderators and the report limit from the config."""
    config, store, clock = app.config, app.store, app.clock
    assessor = Assessor(
        store, app.archive, clock, config.analysis_max_nodes, sweep_s=config.fairplay_sweep_s
    )
    app.hub.listen(assessor.on_change)
    app.analyser.analysed.append(assessor.analysed)
    return RefereeService(
        store,
        clock,
        app.accounts,
        app.ratings,
        app.commands,
        moderators=moderators_of(config.moderators),
        limiter=AttemptLimiter(store, clock, "report", config.reports_per_hour, 3600.0),
        assessor=assessor,
    )


def start_analyses(app: App) -> None:
    """The analyser and the fair-play assessor that follows it: a listening server's only."""
    app.analyser.start()
    app.referee.assessor.start()


async def close_analyses(app: App) -> None:
    await app.referee.assessor.aclose()
    await app.analyser.aclose()


def configured_analyser(
    store: EventStore, archive: Archive | None, clock: Clock, config: Config, process: str
) -> Analyser:
    """The analyser at the configured budgets and queue (docs/operations.md)."""
    budgets, queue = config.analysis_max_nodes, config.analysis_queue
    return Analyser(store, archive, clock, budgets, queue=queue, process=process)


def kept_with_room(room: Room) -> list[str]:
    """The streams the archiver moves with a room beside its games: their analyses."""
    return analysis_streams(room.id, list(room.games))


class App:
    """The server's parts wired in their one direction (connection → commands → store → hub →
    projection → delivery and the race clock), started and stopped in order behind the
    endpoint (server.endpoint)."""

    def __init__(
        self, config: Config, store: EventStore, clock: Clock, archive: Archive | None = None
    ) -> None:
        self.config = config
        self.store = store
        self.archive = (
            archive  # finished rooms leave the store for it (server/race/services/archiver.py)
        )
        self.clock = clock
        self.outbox = Outbox()
        self.process = secrets.token_hex(4)  # this process, in presence events and heartbeats
        self._connections = itertools.count(1)
        self.metrics = Metrics()
        self.collector = YoungCollector(config.gc_interval_ms / 1000)
        self.hub = Hub(store, config, archive)
        self._solver: SolverPool | None = None
        self.commands = Commands(
            store,
            self.hub,
            clock,
            config,
            process=self.process,
            metrics=self.metrics,
            solver=self.solver,
            keep_finished=archive is not None,
        )
        self.delivery = Delivery(clock, config, self.outbox.send_many, self.outbox.soon)
        self.race_clock = RaceClock(clock, config, self.hub, self.commands)
        self.hub.listen(self.delivery.on_change)
        self.hub.listen(self.race_clock.on_change)
        self.accounts = Accounts(store, clock, config)
        self.logins = Logins(store, self.accounts)
        self.ratings = Ratings(store, clock)
        self.hub.listen(self.ratings.on_change)
        self.analyser = configured_analyser(store, archive, clock, config, self.process)
        self.hub.listen(self.analyser.on_change)
        self.archiver: Archiver | None = None
        if archive is not None:
            self.archiver = configured_archiver(store, archive, clock, config, self.process)
            self.hub.listen(self.archiver.on_change)
        self.unloader = Unloader(
            self.hub,
            clock,
            config,
            in_use=self.delivery.in_use,
            forget=[self.delivery.forget, self.race_clock.forget],
            unloaded=self.commands.presence.let_go,
        )
        self.daily = DailyChallenge(store, self.commands, clock)
        created = AttemptLimiter(
            store, clock, "challenge", config.challenges_per_account, config.challenge_window_s
        )
        self.challenges = Challenges(
            store,
            self.commands,
            clock,
            on_settled=partial(rate_challenge, self.ratings),
            limit=created.attempt,
            archive=ChallengeArchive(store, archive, clock) if archive is not None else None,
        )
        self.challenge_sweep = ChallengeSweep(
            self.challenges, clock, sweep_s=config.challenge_sweep_s
        )
        self.hub.listen(self.challenge_sweep.on_change)
        self.matchmaker = Matchmaker(store, self.commands, clock, config, process=self.process)
        self.race = Race(
            self.commands, self.delivery, self.metrics, check_view=self.challenges.check_view
        )
        self.tournaments = configured_tournaments(self)
        self.referee = configured_referee(self)
        self.bots = BotRunner(self.commands, clock, config, self.solver)
        self.hub.listen(self.bots.on_change)
        self.connections: set[Connection] = set()
        self.export = GameExport(self.commands, clock, self.challenges.check_view)
        self.router = assembled(self)
        self.metrics.watch(self.live_figures)
        self.endpoint = endpoint_of(self)
        self.server: Server | None = None
        self.warmed = asyncio.Event()  # every live room of the directory is loaded
        self._warm_up: asyncio.Task[None] | None = None

    def live_figures(self) -> dict[str, float]:
        """The live state ``/metrics`` reports (server/runtime/metrics.py)."""
        rooms = self.hub.rooms.values()
        live = [r for r in rooms if r.status not in (RoomStatus.FINISHED, RoomStatus.CLOSED)]
        return {
            "rooms_live": len(live),
            "rooms_loaded": len(self.hub.rooms),
            "games_live": sum(
                1 for r in live for g in r.games.values() if not g.progress.status.done
            ),
            "connections": len(self.connections),
            "frames_fanned_out": self.delivery.frames,
            "hub_wakeups": self.hub.wakeups,
            "hub_catch_ups": self.hub.catch_ups,
            **self.unloader.stats(),
            **process_figures(),
            "archive_reads": self.hub.archive_reads.served,
            "archive_read_failures": self.hub.archive_reads.failed,
            "bots_playing": self.bots.playing,
            "bot_moves": self.bots.moves,
            **(self.archiver.stats() if self.archiver is not None else {}),
            **self.analyser.stats(),
        }

    async def handler(self, ws: ServerConnection) -> None:
        structlog.contextvars.clear_contextvars()
        connection = Connection(
            ws,
            router=self.router,
            clock=self.clock,
            config=self.config,
            outbox=self.outbox,
            connection_id=f"{self.process}.{next(self._connections)}",
            metrics=self.metrics,
        )
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)

    def solver(self) -> SolverPool:
        """The solver's pool, started on first use: a server nobody asks for a winnable deal
        or a hint never pays for its worker processes: one for deals, one for hints."""
        if self._solver is None:
            self._solver = SolverPool(workers=1)
        return self._solver

    def open(self) -> None:
        """Start the parts behind the endpoint (wake-ups, the race clock); no listening yet."""
        self.hub.start()
        self.race_clock.start()
        self.unloader.start()
        self.matchmaker.start()
        self.tournaments.start()
        self.bots.start()
        self.challenge_sweep.start()
        if self.archiver is not None:
            self.archiver.start()

    async def start(self) -> Server:
        """Listen at once; rooms load on first use, and the live ones in the background. Games
        are analysed by a listening server only (parts opened without it, in a tool or a
        test, analyse nothing unless told to)."""
        self.open()
        start_analyses(self)
        # Racing keeps every game's state for about a second (one move each), long enough to be
        # promoted to the oldest generation, so with the default thresholds a full collection
        # (~100 ms over every connection's objects) ran every few seconds and was the ack tail
        # (bench.load paced, gc.callbacks). Full collections now wait for 1,000 younger ones;
        # cyclic garbage that reached the oldest generation is reclaimed later, not leaked.
        gc.set_threshold(*_GC_THRESHOLDS)
        # Young collections come on a timer too (CPython's count missed most of them here), and
        # the collector takes full ones over: these thresholds then serve bursts, and every
        # collection with --gc-interval-ms 0.
        self.collector.start()
        self.metrics.watch_gc()
        try:
            self.server = await self.endpoint.listen()
        except BaseException:
            # The parts opened above run tasks on the store; left to the loop's final cancel,
            # a worker whose metrics port was taken hung there for good (tests/server/test_workers).
            await self.stop()
            raise
        log.info(
            "listening",
            loop=type(asyncio.get_running_loop()).__module__.split(".")[0],
            host=self.config.host,
            port=self.config.port,
            tls=self.config.tls_cert is not None,
            store=type(self.store).__name__,
        )
        self._warm_up = asyncio.get_running_loop().create_task(self.warm_up(), name="warm-up")
        return self.server

    async def warm_up(self) -> None:
        """Load the directory's live rooms, so their first move after a restart is quick; the
        store may still be starting (Redis booting): it is retried, serving goes on."""
        for attempt in range(30):
            try:
                rooms = await self.commands.list_rooms()
                # With --workers, each loads the rooms homed on it: any other loads on demand.
                live = [
                    r["id"]
                    for r in rooms
                    if r["status"] != RoomStatus.FINISHED.value
                    and home_worker(r["id"], self.config.workers) == self.config.worker_index
                ]
                await load_many(self.hub, live)
                await self.ratings.start()
                log.info("warmed", rooms=len(live))
                self.warmed.set()
                return
            except StoreError as exc:  # Redis still booting, say
                log.warning("store_not_ready", error=str(exc), attempt=attempt + 1)
                await asyncio.sleep(1.0)

    async def close_parts(self) -> None:
        """Stop the parts behind the endpoint, then the store."""
        if self._warm_up is not None:
            self._warm_up.cancel()
        self.collector.stop()
        self.metrics.unwatch_gc()
        await self.matchmaker.aclose()
        await self.tournaments.aclose()
        await self.bots.aclose()
        await self.challenge_sweep.aclose()
        await close_analyses(self)
        if self.archiver is not None:
            await self.archiver.aclose()
        await self.unloader.aclose()
        await self.race_clock.aclose()
        await self.ratings.aclose()
        await self.logins.aclose()
        await self.hub.aclose()
        await self.delivery.aclose()
        if self._solver is not None:
            await self._solver.aclose()
        if self.archive is not None:
            await self.archive.aclose()
        await self.store.aclose()

    async def stop(self) -> None:
        """Close every connection with 1001 (going away), stop the rooms, close the store."""
        await self.endpoint.close()
        await self.close_parts()
        log.info("stopped")


def first_views(app: App) -> tuple[PageView, ...]:
    """The pages whose first view a feature renders on the server (a link preview, a page
    without scripts), each through the services its protocol requests read."""
    return (
        app.tournaments.page.view(),
        RacePage(app.commands).view(),
        ProfilePage(app.accounts, app.ratings).view(),
    )


def assembled(app: App) -> Router:
    """The features a connection routes its requests to, in the order their parts greet
    a hello (a key's account before a resumed seat's name) and let go of a connection
    (out of the queue and the tournaments, the login, then the seat marked away)."""
    return Router(
        (
            MatchmakingFeature(app.race, app.matchmaker, app.ratings.rating_of),
            app.tournaments,
            AccountsFeature(
                app.accounts,
                app.ratings,
                app.commands,
                logins=app.logins,
                streaks=app.daily.streaks,
                tournaments=app.tournaments.played,
                challenges=app.challenges.finished,
                accuracy=app.analyser.accuracy,
            ),
            RaceFeature(app.race),
            DailyFeature(app.race, app.daily),
            ChallengesFeature(app.race, app.challenges, app.accounts),
            RefereeFeature(app.referee),
            AnalysisFeature(app.race, app.analyser.book),
        )
    )
