"""Every rated game assessed for fair play once, on whichever process gets to it first.

A rated race that finishes (any process's hub sees it; a daily's or a challenge's attempt too)
puts its room in the ``assessment-due`` index and is assessed at once if it can be; a room this
process's analyser finishes is assessed then; and every process sweeps the whole index every
``sweep_s`` for the rest (another process's analyses, a failure). A room is assessed once its
games are analysed, or at once when its variant is not analysed (``--analysis-max-nodes`` 0),
or after ``ANALYSIS_WAIT_MS`` without an analysis (then from its times alone): only the room
in hand is read on a finish or an analysis, never the whole backlog. Each game of an account is
appended to the account's assessed stream at the version read, after checking the game is not
in it: two processes that race to it write it once. The account's standing is then folded again
and kept in the ``fairplay-flagged`` index while it is "likely assisted" or above, which the
moderators' queue reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgpack

from server.analysis.domain.events import GameAnalysed
from server.analysis.services.book import AnalysisBook
from server.archive import Archive
from server.kernel.names import fold_name
from server.race.domain.fold import Change, fold_stored, race_finished
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room, Seat, game_stream
from server.race.services.reader import read_room
from server.referee.domain import assessment as a
from server.referee.domain.events import (
    ASSESSMENT_DUE_INDEX,
    FLAGGED_INDEX,
    FocusLost,
    GameAssessed,
    assessed_stream,
    decode,
    encode,
    focus_stream,
)
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.runtime.tasks import Background
from server.store import EventStore
from shared.errors import ArenaError, ServerError, WrongExpectedVersion
from shared.events import GAME_STARTED, MOVED, fold_event
from shared.game import is_won, legal_moves
from shared.state import GameState

log = get_logger("server.referee.services.assessor")

ANALYSIS_WAIT_MS = 3_600_000
"""How long a finished room waits for its analysis before it is assessed from times alone: an
analysis comes within seconds on a quiet server, later on a busy one, never after an hour
unless the analyser is down."""

LOOK_AGAIN_MS = 300_000
"""How long the sweep leaves a room it found waiting for an analysis from another process (this
process's analyser says when it is done): rooms waiting behind a busy analyser are not read
again every sweep, a backlog of thousands each time."""

MAX_FOCUS_PER_GAME = 50
"""Focus lost a connection records per game: enough to say "often", bounded for the store."""


def kind_of(room: Room) -> str | None:
    """What rated game the room is (race, tournament, daily, challenge), None when it is not
    one: an unrated room, solo practice, a room with bots."""
    meta = room.settings
    if meta.challenge:
        return "challenge"
    if meta.daily:
        return "daily"
    if not room.rated:
        return None
    return "tournament" if meta.tournament else "race"


def assessed_seats(room: Room) -> list[Seat]:
    """The seats of a rated game an assessment is about: people's with an account."""
    if kind_of(room) is None:
        return []
    return [s for s in room.seats.values() if s.account is not None and not s.bot]


def played_of(
    events: Sequence[Mapping[str, Any]], started_at: int | None, analysis: GameAnalysed | None
) -> tuple[a.Played, str] | None:
    """One game's record as the assessment reads it (and its variant); None if never dealt."""
    state: GameState | None = None
    start_at, ats, moves, choices = 0, [], [], []
    for event in events:
        if event.get("type") == GAME_STARTED:
            start_at = max(int(event["at"]), started_at or 0)
        elif event.get("type") == MOVED and state is not None:
            choices.append(len(legal_moves(state)))
            ats.append(int(event["at"]))
            moves.append(str(event["move"]))
        state = fold_event(state, event)
    if state is None:
        return None
    variant = str(events[0].get("variant", ""))
    deal = "unknown"
    won_until = lost_from = None
    if analysis is not None and analysis.moves == tuple(moves):
        result = analysis.analysis()
        deal, won_until, lost_from = result.deal.value, analysis.won_until, analysis.lost_from
    played = a.Played(
        think_ms=a.think_times(start_at, ats),
        choices=tuple(choices),
        moves=tuple(moves),
        won=is_won(state),
        deal=deal,
        won_until=won_until,
        lost_from=lost_from,
    )
    return played, variant


@dataclass
class AssessorFigures:
    """What ``/metrics`` could report of the assessments."""

    games: int = 0  # games this process assessed and wrote
    failures: int = 0  # sweeps of a room that failed (it stays due)


class Assessor:
    """This process's share of the assessments: the listener, the sweep, the writes."""

    def __init__(
        self,
        store: EventStore,
        archive: Archive | None,
        clock: Clock,
        budgets: Mapping[str, int],
        *,
        sweep_s: float = 30.0,
        analysis_wait_ms: int = ANALYSIS_WAIT_MS,
    ) -> None:
        self.store = store
        self.clock = clock
        self.book = AnalysisBook(store, archive, clock)
        self.archive = archive
        self.budgets = dict(budgets)
        self.sweep_s = sweep_s
        self.analysis_wait_ms = analysis_wait_ms  # a simulated clock's bench waits for good
        self.figures = AssessorFigures()
        self._background = Background()
        self._queued: dict[str, int | None] = {}  # rooms to assess in turn, oldest first
        self._draining = False
        self._waiting: dict[str, int] = {}  # rooms found waiting: the sweep's next look

    # ---- what the hub and the analyser tell -------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        """A rated race that finished: due for assessment (every process marks it; each game
        is written once). A variant that is analysed waits for its analysis (``analysed``, or
        the sweep): assessed now, it would only be read to be found waiting."""
        if room.finished is None or not assessed_seats(room):
            return
        if race_finished(changes):
            now = self.budgets.get(room.settings.variant, 0) <= 0
            self._background.spawn(self._mark(room.id, room.finished.at, assess=now))

    async def _mark(self, room_id: str, finished_at: int, *, assess: bool) -> None:
        try:
            await self.store.index_put(ASSESSMENT_DUE_INDEX, room_id, finished_at)
        except ArenaError as exc:
            self._failed(room_id, exc)
            return
        if assess:
            self._soon(room_id, finished_at)

    def analysed(self, room_id: str) -> None:
        """The room's games were analysed here: assess them now (the sweep would later)."""
        self._soon(room_id, None)

    def _soon(self, room_id: str, finished_at: int | None) -> None:
        """Assess the room in its turn: one room at a time, since nobody waits for an
        assessment, and a round of a tournament ending together must not make its hundreds
        of reads compete with the races, their ratings and their next pairing."""
        self._queued.setdefault(room_id, finished_at)
        if not self._draining:
            self._draining = True
            self._background.spawn(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queued:
                room_id = next(iter(self._queued))
                await self._assess(room_id, self._queued.pop(room_id))
        finally:
            self._draining = False

    async def _assess(self, room_id: str, finished_at: int | None = None) -> None:
        """``assess_room``, a failure counted and logged: the room stays due for the sweep. A
        room still waiting for its analysis is left by the sweep for a while."""
        try:
            written = await self.assess_room(room_id, finished_at=finished_at)
        except ArenaError as exc:
            self._failed(room_id, exc)
            return
        if written is not None:
            self._waiting.pop(room_id, None)
            return
        now = self.clock.now_ms()
        finished = now if finished_at is None else finished_at
        self._waiting[room_id] = min(now + LOOK_AGAIN_MS, finished + self.analysis_wait_ms)

    def _failed(self, room_id: str, exc: ArenaError) -> None:
        self.figures.failures += 1
        log.warning("assessment_failed", room=room_id, reason=exc.reason)

    # ---- the loop ---------------------------------------------------------------------------

    def start(self) -> None:
        self._background.every(self.sweep_s, self.sweep, self._sweep_failed)

    def _sweep_failed(self, exc: ArenaError) -> None:
        log.warning("assessment_sweep_failed", code=exc.code, reason=exc.reason)

    async def aclose(self) -> None:
        await self._background.aclose()

    async def sweep(self) -> None:
        """Assess every due room that is ready, oldest first (one found waiting for its
        analysis once ``LOOK_AGAIN_MS`` went by, or its wait ran out)."""
        due = await self.store.index_range(ASSESSMENT_DUE_INDEX)
        self._waiting = {
            e.member: self._waiting[e.member] for e in due if e.member in self._waiting
        }
        for entry in due:
            if self._waiting.get(entry.member, 0) <= self.clock.now_ms():
                await self._assess(entry.member, entry.score)

    # ---- one room ---------------------------------------------------------------------------

    async def assess_room(self, room_id: str, *, finished_at: int | None = None) -> int | None:
        """Assess the room's rated games not assessed yet; the games written, or None when the
        room waits for its analysis (it stays due)."""
        read = await read_room(self.store, room_id, self.archive)
        if read is None:
            await self.store.index_remove(ASSESSMENT_DUE_INDEX, room_id)
            return 0
        room = Room(room_id)
        fold_stored(room, read.events)
        if room.status is not RoomStatus.FINISHED or room.finished is None:
            return None
        streams: dict[str, list[dict[str, Any]]] = {}
        for event in read.events:
            streams.setdefault(event.stream, []).append(event.data)
        now = self.clock.now_ms()
        waited = now - (finished_at if finished_at is not None else room.finished.at)
        records = []
        for seat in assessed_seats(room):
            analysis = await self.book.read(room_id, seat.player)
            analysed = self.budgets.get(room.settings.variant, 0) > 0
            if analysis is None and analysed and waited < self.analysis_wait_ms:
                return None  # the analyser has not come to it yet
            records.append((seat, analysis))
        written = 0
        for seat, analysis in records:
            events = streams.get(game_stream(room_id, seat.player), [])
            got = played_of(events, room.started_at, analysis)
            if got is None or seat.account is None:
                continue
            played, variant = got
            account = fold_name(seat.account)
            focus = await self.focus_count(account, room_id, seat.player)
            assessed = a.assess(
                replace(played, focus_lost=focus),
                at=room.finished.at,
                room=room_id,
                player=seat.player,
                account=account,
                name=seat.account,
                variant=variant,
                kind=kind_of(room) or "race",
            )
            if await self.write(assessed):
                written += 1
        await self.store.index_remove(ASSESSMENT_DUE_INDEX, room_id)
        return written

    async def write(self, game: GameAssessed) -> bool:
        """Append the game's assessment once (False if it is there already), then keep the
        account's standing in the flagged index."""
        stream = assessed_stream(game.account)
        for _ in range(20):
            games = await self.games(game.account)
            if any((g.room, g.player) == (game.room, game.player) for g in games):
                return False
            try:
                await self.store.append(stream, [encode(game)], expected_version=len(games))
            except WrongExpectedVersion:
                continue
            self.figures.games += 1
            await self._flag(game.account, game.name, a.standing([*games, game]))
            log.info("game_assessed", room=game.room, player=game.player, account=game.account)
            return True
        raise ServerError("an account's assessments are changing too fast")

    async def _flag(self, account: str, name: str, standing: a.Standing) -> None:
        if standing.level.flagged:
            value = msgpack.packb(
                {
                    "account": account,
                    "name": name,
                    "evidence": standing.evidence(),
                    "last_at": standing.last_at,
                    **standing.wire(),
                }
            )
            await self.store.index_put(FLAGGED_INDEX, account, standing.points, value)
        else:
            await self.store.index_remove(FLAGGED_INDEX, account)

    async def rebuild(self, rooms: Sequence[str]) -> tuple[int, int]:
        """Assess the finished rooms' games not assessed yet (run the analysis' rebuild first:
        a room is assessed now, analysed or not), then fold every account's standing into the
        flagged index again; the games written and the accounts flagged."""
        written = 0
        for room_id in rooms:
            written += await self.assess_room(room_id, finished_at=0) or 0
        flagged = 0
        for stream in await self.store.streams("{referee:"):
            if not stream.endswith("}:assessed"):
                continue
            games = [decode(e.data) for e in await self.store.read(stream)]
            assessed = [g for g in games if isinstance(g, GameAssessed)]
            if assessed:
                standing = a.standing(assessed)
                await self._flag(assessed[-1].account, assessed[-1].name, standing)
                flagged += standing.level.flagged
        return written, flagged

    # ---- reads ------------------------------------------------------------------------------

    async def games(self, account: str) -> list[GameAssessed]:
        """Every assessed game of the account, oldest first."""
        out = []
        for stored in await self.store.read(assessed_stream(account)):
            event = decode(stored.data)
            assert isinstance(event, GameAssessed), event
            out.append(event)
        return out

    async def standing(self, account: str) -> a.Standing:
        return a.standing(await self.games(account))

    async def flagged(self) -> list[dict[str, Any]]:
        """The accounts at "likely assisted" or above, most evidence first."""
        rows = [msgpack.unpackb(e.value) for e in await self.store.index_range(FLAGGED_INDEX)]
        return sorted(rows, key=lambda r: (-r["points"], r["account"]))

    async def focus_count(self, account: str, room_id: str, player: str) -> int:
        events = [decode(e.data) for e in await self.store.read(focus_stream(account))]
        return sum(1 for e in events if isinstance(e, FocusLost) and e.room == room_id
                   and e.player == player)  # fmt: skip

    async def record_focus(self, account: str, room_id: str, player: str) -> None:
        """The racer's page lost focus: one more for the game's assessment."""
        stream = focus_stream(account)
        event = encode(FocusLost(self.clock.now_ms(), room_id, player))
        for _ in range(20):
            version = await self.store.last_version(stream)
            try:
                await self.store.append(stream, [event], expected_version=version)
                return
            except WrongExpectedVersion:
                continue
