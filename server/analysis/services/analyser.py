"""Every finished game analysed, off the event loop and never in anyone's way.

A race that finishes (any process's hub sees it) puts its room in the ``analysis-due`` index
and offers it to this process's bounded queue; a full queue drops the offer, and the sweep
(every ``sweep_s``, and at the start) offers what is still due. One worker takes the queue in
order: under a claim on the room (so processes sharing a store analyse it once), each game of
the room is analysed in the analysis process (shared.solver.analysis at the variant's budget:
``--analysis-max-nodes``) and written once (server.analysis.services.book); then the room
leaves the index. The analysis process runs at a lower CPU priority (nice 10) than the server,
and nothing waits for it: results, ratings and the archive go on as before, and a busy server
analyses later, never slower. A process killed mid-room leaves the room due: the next sweep of
any process analyses it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import msgpack

from server.analysis.domain.accuracy import (
    RECENT_GAMES,
    GameScore,
    accuracy,
    accuracy_index,
)
from server.analysis.domain.events import GameAnalysed
from server.analysis.services.book import AnalysisBook
from server.archive import Archive
from server.kernel.days import tag_end_ms
from server.kernel.names import fold_name
from server.race.domain.fold import Change, fold_stored, race_finished
from server.race.domain.model import Room, game_stream
from server.race.services.reader import read_room
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.runtime.tasks import Background
from server.store import EventStore
from shared.errors import ArenaError
from shared.events import GAME_STARTED, MOVED
from shared.game import lay_out
from shared.solver.analysis import GameAnalysis, analyse

log = get_logger("server.analysis.services.analyser")

ANALYSIS_DUE_INDEX = "analysis-due"  # room id -> when its race finished (ms), until analysed
ANALYSIS_CLAIMS_INDEX = "analysis-claims"  # room id -> when its analyser's lease runs out (ms)
CLAIM_MS = 600_000  # a room's games analysed at most budget by budget: minutes at the most
NICE = 10  # the analysis process yields the CPU to the server's


def analyse_game(
    variant: str, deck: Sequence[str], moves: Sequence[str], max_nodes: int
) -> GameAnalysis:
    """One game's analysis; runs in the analysis process."""
    return analyse(lay_out(variant, deck), moves, max_nodes=max_nodes)


def _lower_priority() -> None:
    os.nice(NICE)


def analysis_process() -> Executor:
    """The analysis process: one, started by "spawn" (no server threads or sockets in it), at
    a lower priority than the server."""
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(1, mp_context=context, initializer=_lower_priority)


@dataclass
class AnalyserFigures:
    """What ``/metrics`` reports of the analyses (docs/operations.md)."""

    games: int = 0  # games this process analysed and wrote
    deferred: int = 0  # offers a full queue turned away (the sweep offers them again)
    failures: int = 0  # rooms whose analysis failed (they stay due)
    busy_s: float = 0.0  # seconds the analysis process worked on this process's games


@dataclass(frozen=True, slots=True)
class Game:
    """What the analysis needs of one finished game."""

    player: str
    variant: str
    deck: tuple[str, ...]
    moves: tuple[str, ...]


def games_of(room: Room, events: Mapping[str, list[dict[str, Any]]]) -> list[Game]:
    """The room's games with a deck (a seat never dealt has none), from their streams."""
    games = []
    for player in room.games:
        stream = events.get(game_stream(room.id, player), [])
        start = next((e for e in stream if e.get("type") == GAME_STARTED), None)
        if start is None or not start.get("deck"):
            continue
        moves = tuple(str(e["move"]) for e in stream if e.get("type") == MOVED)
        games.append(Game(player, str(start["variant"]), tuple(start["deck"]), moves))
    return games


class Analyser:
    """This process's share of the analyses: the listener, the queue, the worker, the sweep."""

    def __init__(
        self,
        store: EventStore,
        archive: Archive | None,
        clock: Clock,
        budgets: Mapping[str, int],
        *,
        queue: int,
        executor: Callable[[], Executor] = analysis_process,
        sweep_s: float = 30.0,
        process: str = "",
    ) -> None:
        self.store = store
        self.archive = archive
        self.clock = clock
        self.book = AnalysisBook(store, archive, clock)
        self.budgets = dict(budgets)
        self.size = queue
        self.make_executor = executor
        self.sweep_s = sweep_s
        self.process = process.encode()
        self.figures = AnalyserFigures()
        self._queue: asyncio.Queue[str] | None = None
        self._queued: set[str] = set()
        self._executor: Executor | None = None
        self._background = Background()
        self.idle = asyncio.Event()  # set whenever the queue is empty and nothing is running
        self.analysed: list[Callable[[str], None]] = []  # told each room analysed (its id)

    @property
    def on(self) -> bool:
        return any(n > 0 for n in self.budgets.values())

    # ---- what the hub tells --------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        """A race that finished: due for analysis (every process that folds the finish marks
        it; the room is analysed once, under a claim)."""
        if self._queue is None or room.finished is None:
            return  # not started (or no budget): nothing is analysed here
        if race_finished(changes):
            self._background.spawn(self._mark(room.id, room.finished.at))

    async def _mark(self, room_id: str, finished_at: int) -> None:
        try:
            await self.store.index_put(ANALYSIS_DUE_INDEX, room_id, finished_at)
        except ArenaError as exc:
            log.warning("analysis_mark_failed", room=room_id, reason=exc.reason)
            return
        self.offer(room_id)

    def offer(self, room_id: str) -> bool:
        """Queue the room unless the queue is full (it stays due: a later sweep offers it)."""
        if self._queue is None or room_id in self._queued:
            return False
        try:
            self._queue.put_nowait(room_id)
        except asyncio.QueueFull:
            self.figures.deferred += 1
            return False
        self._queued.add(room_id)
        self.idle.clear()
        return True

    # ---- the loop ------------------------------------------------------------------------

    def start(self) -> None:
        if not self.on:
            return
        self._queue = asyncio.Queue(self.size)
        self.idle.set()
        self._background.spawn(self._work())
        self._background.every(self.sweep_s, self.sweep, self._sweep_failed)

    def _sweep_failed(self, exc: ArenaError) -> None:
        log.warning("analysis_sweep_failed", code=exc.code, reason=exc.reason)

    async def sweep(self) -> None:
        """Offer every room still due, oldest first, as far as the queue takes them."""
        for entry in await self.store.index_range(ANALYSIS_DUE_INDEX):
            if not self.offer(entry.member) and self._queue is not None and self._queue.full():
                return

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            room_id = await self._queue.get()
            try:
                await self.analyse_room(room_id)
            except ArenaError as exc:  # the store or the archive down: it stays due
                self.figures.failures += 1
                log.warning("analysis_failed", room=room_id, code=exc.code, reason=exc.reason)
            except Exception as exc:  # a bug, a broken analysis process: the next room goes on
                self.figures.failures += 1
                log.error("analysis_failed", room=room_id, error=repr(exc))
            finally:
                self._queued.discard(room_id)
                if self._queue.empty():
                    self.idle.set()

    async def aclose(self) -> None:
        await self._background.aclose()
        if self._executor is not None:
            executor, self._executor = self._executor, None
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)

    # ---- one room ------------------------------------------------------------------------

    async def analyse_room(self, room_id: str, *, again: bool = False) -> int:
        """Analyse the finished room's games not analysed yet (all of them, ``again``: a
        rebuild), under a claim on the room; the games written."""
        now = self.clock.now_ms()
        claimed = await self.store.index_claim(
            ANALYSIS_CLAIMS_INDEX, room_id, now + CLAIM_MS, self.process, expired_at=now
        )
        if not claimed:
            return 0  # another process is on it; the room stays due until it is done
        try:
            written = await self._analyse(room_id, again=again)
            await self.store.index_remove(ANALYSIS_DUE_INDEX, room_id)
            for told in self.analysed:
                told(room_id)
        finally:
            await self.store.index_remove(ANALYSIS_CLAIMS_INDEX, room_id)
        return written

    async def _analyse(self, room_id: str, *, again: bool) -> int:
        read = await read_room(self.store, room_id, self.archive)
        if read is None:
            return 0  # gone with the store's retention: nothing to analyse
        room = Room(room_id)
        fold_stored(room, read.events)
        if room.finished is None:
            return 0
        streams: dict[str, list[dict[str, Any]]] = {}
        for event in read.events:
            streams.setdefault(event.stream, []).append(event.data)
        written = 0
        for game in games_of(room, streams):
            budget = self.budgets.get(game.variant, 0)
            if budget <= 0 or (not again and await self.book.read(room_id, game.player)):
                continue
            analysis = await self._run(game, budget)
            analysed = GameAnalysed.of(
                analysis,
                at=self.clock.now_ms(),
                room=room_id,
                player=game.player,
                variant=game.variant,
            )
            if await self.book.write(analysed, again=again):
                await self._scored(room, analysed)
                written += 1
                self.figures.games += 1
                log.info(
                    "game_analysed",
                    room=room_id,
                    player=game.player,
                    deal=analysis.deal.value,
                    losing_move=analysis.losing_move,
                    nodes=analysis.nodes,
                )
        return written

    async def _scored(self, room: Room, analysed: GameAnalysed) -> None:
        """An account's game counts in its profile's accuracy from when the game may be shown
        (a race's once its spectators saw the end, a daily's once its day is over); a
        challenge's attempts never (its end is the challenge's, which this wing does not
        know)."""
        seat = room.seats.get(analysed.player)
        if seat is None or seat.account is None or room.settings.challenge or not room.finished:
            return
        shown = room.finished.at + room.delay_ms
        if room.settings.daily:
            shown = max(shown, tag_end_ms(room.settings.daily))
        score = msgpack.packb(GameScore.of(analysed).wire())
        member = f"{room.id}:{analysed.player}"
        await self.store.index_put(accuracy_index(fold_name(seat.account)), member, shown, score)

    async def accuracy(self, account: str) -> list[dict[str, Any]]:
        """The account's accuracy over its latest analysed games that may be shown now."""
        now = self.clock.now_ms()
        entries = await self.store.index_range(accuracy_index(account), max_score=now)
        shown = entries[-RECENT_GAMES:]
        return accuracy(GameScore.read(msgpack.unpackb(e.value)) for e in shown)

    async def _run(self, game: Game, budget: int) -> GameAnalysis:
        if self._executor is None:
            self._executor = self.make_executor()
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            return await loop.run_in_executor(
                self._executor, analyse_game, game.variant, game.deck, game.moves, budget
            )
        finally:
            self.figures.busy_s += loop.time() - began

    def stats(self) -> Mapping[str, float]:
        f = self.figures
        return {
            "games_analysed": f.games,
            "analysis_deferred": f.deferred,
            "analysis_failures": f.failures,
            "analysis_busy_seconds": f.busy_s,
            "analysis_queued": len(self._queued),
        }
