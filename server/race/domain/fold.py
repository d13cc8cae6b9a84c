"""The projection: room and game events folded into the room model, returning what changed.

A pure fold (no I/O, no clock, no sending): the hub feeds it what the store holds, in version
order per stream, and hands the changes it returns to delivery and the race clock. Room events
are decoded once (``server.race.domain.events``) and folded by a dispatch table, one small function
per event type, after the lifecycle table (``server.race.domain.lifecycle``) allowed them. Game
streams hold the shared game events, each ``moved`` with the client move id as ``cid``, so a
resent id is answered, never applied; a ``resigned`` may carry a ``reason`` (``abandoned``;
``clock``: the racer's own clock ran out, which the fold reads as ``timed_out``, as it does a game
still on when the race's time limit ends it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from server.kernel.errors import WrongStatus
from server.race.domain.events import (
    CountdownCancelled,
    CountdownStarted,
    PlayerAway,
    PlayerBack,
    PlayerBerserked,
    PlayerJoined,
    PlayerLeft,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomClosed,
    RoomCreated,
    RoomEvent,
    decode,
)
from server.race.domain.lifecycle import next_status
from server.race.domain.model import Game, Room, Seat, game_stream
from server.race.domain.progress import (
    CLOCK,
    TIME_LIMIT,
    PlayerStatus,
    Progress,
    timed_out_ranking,
)
from server.runtime.logging import get_logger
from shared import fold_event, is_over, public_event
from shared.errors import CorruptEvent
from shared.protocol import pack
from shared.state import GameState

log = get_logger("server.race.domain.fold")


class StoredEvent(Protocol):
    """An event as a store holds it; the store's own type has these fields (the domain does not
    import the store, so it stays free of I/O)."""

    @property
    def stream(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def data(self) -> dict[str, Any]: ...


Stored = TypeVar("Stored", bound=StoredEvent)


@dataclass(frozen=True)
class Loaded:
    """The room was just loaded from the store (a restart, or its first use here)."""


@dataclass(frozen=True)
class RoomChanged:
    """One room event was folded (``refused``: the lifecycle did not allow it; skipped)."""

    event: RoomEvent
    refused: bool = False


@dataclass(frozen=True)
class GameAdvanced:
    """A player's game folded events ``first``..``last``, reaching ``progress``."""

    player: str
    first: int
    last: int
    progress: Progress


Change = Loaded | RoomChanged | GameAdvanced


def race_finished(changes: Iterable[Change]) -> bool:
    """Whether ``changes`` fold the race's finish (not one the lifecycle refused): what the
    work that follows a race (its analysis, its assessment) waits for."""
    return any(
        isinstance(c, RoomChanged) and not c.refused and isinstance(c.event, RaceFinished)
        for c in changes
    )


def player_status(state: GameState, event: Mapping[str, Any] | None = None) -> PlayerStatus:
    """A racer's status after an event that is not the start (``event``, the last folded): a
    resignation for the clock is a timeout, not a choice the racer made."""
    if state.won:
        return PlayerStatus.WON
    if state.resigned:
        if event is not None and event.get("reason") == CLOCK:
            return PlayerStatus.TIMED_OUT
        return PlayerStatus.RESIGNED
    if is_over(state):
        return PlayerStatus.OVER
    return PlayerStatus.PLAYING


def fold_stored(room: Room, events: Iterable[StoredEvent]) -> list[Change]:
    """Fold store events of any of the room's streams; events already folded are skipped, and a
    gap stops that stream (the hub reads it again from where the fold is)."""
    changes: list[Change] = []
    run: list[StoredEvent] = []
    for event in events:
        if run and event.stream != run[0].stream:
            changes.extend(_fold_run(room, run))
            run = []
        run.append(event)
    if run:
        changes.extend(_fold_run(room, run))
    return changes


def waits_for(room: Room, data: Mapping[str, Any]) -> dict[str, int]:
    """The game streams, with versions, that a stored room event was decided from and the fold
    has not reached (``RaceFinished.games``): it waits for them, so whoever is told of the end
    has been told of every move it was decided from."""
    if data.get("type") != RaceFinished.TYPE:
        return {}
    games = data.get("games")
    lacking: dict[str, int] = {}
    for player, version in games.items() if isinstance(games, Mapping) else ():
        game = room.games.get(player)
        if game is not None and isinstance(version, int) and game.version < version:
            lacking[game.stream] = version
    return lacking


def fold_room_until_waiting(
    room: Room, events: Sequence[Stored]
) -> tuple[list[Change], list[Stored], dict[str, int]]:
    """Fold a run of room stream events up to the first that waits for game events the fold
    lacks: the changes, the events left (that one first) and the game streams and versions
    it waits for (none when every event was folded)."""
    changes: list[Change] = []
    for i, event in enumerate(events):
        if event.version != room.version + 1:
            continue  # folded already, or after a gap (the hub reads the stream again)
        lacking = waits_for(room, event.data)
        if lacking:
            return changes, list(events[i:]), lacking
        change = fold_room_event(room, event.version, event.data)
        if change is not None:
            changes.append(change)
    return changes, [], {}


def _fold_run(room: Room, run: list[StoredEvent]) -> list[Change]:
    stream = run[0].stream
    if stream == room.stream:
        changes: list[Change] = []
        for event in run:
            if event.version != room.version + 1:
                continue
            change = fold_room_event(room, event.version, event.data)
            if change is not None:
                changes.append(change)
        return changes
    player = stream.rsplit(":", 1)[1]
    game = room.games.get(player)
    if game is None:
        return []
    advanced = fold_game_events(game, run)
    return [] if advanced is None else [advanced]


def fold_room_event(room: Room, version: int, data: Mapping[str, Any]) -> RoomChanged | None:
    """Fold the room event at ``version`` (the next one) into ``room``. An event that cannot be
    read, or that the room's lifecycle does not allow (a stream written by hand, a bug), is
    skipped and logged: one bad event must not make a room unloadable."""
    room.version = version
    try:
        event = decode(data)
    except CorruptEvent as exc:
        log.error("room_event_unreadable", room=room.id, version=version, reason=exc.reason)
        return None
    try:
        room.status = next_status(room.status, type(event))
    except WrongStatus as exc:
        log.error("room_event_refused", room=room.id, version=version, reason=exc.reason)
        return RoomChanged(event, refused=True)
    _FOLDS[type(event)](room, event)
    # A bot is always connected: only people keep a lobby from closing idle.
    if any(s.connection is not None and not s.bot for s in room.seats.values()):
        room.idle_since = None
    elif room.idle_since is None:
        room.idle_since = event.at
    return RoomChanged(event)


def _created(room: Room, e: RoomCreated) -> None:
    room.meta = e
    room.idle_since = e.at


def _joined(room: Room, e: PlayerJoined) -> None:
    seat = Seat(
        e.player, e.name, e.token_hash, room.joined_count, e.connection, None, e.account, e.bot
    )
    seat.away_since = None if e.connection is not None else e.at
    room.seats[e.player] = seat
    room.joined_count += 1
    if e.player not in room.games:
        room.games[e.player] = Game(e.player, game_stream(room.id, e.player))


def _left(room: Room, e: PlayerLeft) -> None:
    room.seats.pop(e.player, None)


def _back(room: Room, e: PlayerBack) -> None:
    seat = room.seats.get(e.player)
    if seat is not None:
        seat.connection, seat.away_since = e.connection, None


def _berserked(room: Room, e: PlayerBerserked) -> None:
    seat = room.seats.get(e.player)
    if seat is not None:
        seat.berserk = True


def _away(room: Room, e: PlayerAway) -> None:
    seat = room.seats.get(e.player)
    if seat is not None and seat.connection == e.connection:
        seat.connection, seat.away_since = None, e.at


def _countdown(room: Room, e: CountdownStarted) -> None:
    room.countdown_at, room.go_at = e.at, e.go_at


def _cancelled(room: Room, e: CountdownCancelled) -> None:
    room.go_at = room.countdown_at = None


def _started(room: Room, e: RaceStarted) -> None:
    room.started_at, room.ends_at = e.at, e.ends_at


def _finished(room: Room, e: RaceFinished) -> None:
    if e.reason == TIME_LIMIT:
        # Written before the ranking said so itself: the time limit ended the games still on.
        e = replace(e, ranking=timed_out_ranking(e.ranking))
        for game in room.games.values():
            if game.state is not None and not game.progress.status.done:
                game.progress = replace(
                    game.progress, status=PlayerStatus.TIMED_OUT, finished_at=e.at
                )
    room.finished = e


def _closed(room: Room, e: RoomClosed) -> None:
    room.closed_at = e.at
    room.closed_reason = e.reason


def _rematch(room: Room, e: RematchOffered) -> None:
    room.rematch = e.room


_FOLDS: Mapping[type[RoomEvent], Callable[[Room, Any], None]] = {
    RoomCreated: _created,
    PlayerJoined: _joined,
    PlayerLeft: _left,
    PlayerBack: _back,
    PlayerAway: _away,
    CountdownStarted: _countdown,
    CountdownCancelled: _cancelled,
    RaceStarted: _started,
    RaceFinished: _finished,
    RoomClosed: _closed,
    RematchOffered: _rematch,
    PlayerBerserked: _berserked,
}


def fold_game_events(game: Game, events: Sequence[StoredEvent]) -> GameAdvanced | None:
    """Fold a run of a game's events in one pass; None if none of them was the next one."""
    first = game.version + 1
    state = game.state
    version = game.version
    progress = game.progress
    public = game.public
    reveals = game.reveals
    seen = game.seen
    for event in events:
        if event.version <= version:
            continue  # folded already (read twice: a wake-up and a catch-up)
        if event.version != version + 1:
            break
        data = event.data
        try:
            state = fold_event(state, data)
        except Exception:
            log.exception("fold_failed", stream=game.stream, version=event.version)
            break
        version = event.version
        cid = data.get("cid")
        if cid is not None:
            game.cids[cid] = version
            game.cid_moves[cid] = data.get("move")
        at = int(data["at"])
        kind = data["type"]
        if kind == "game_started":
            shown = public_event(data)
            public.append(pack(shown))
            layout = shown["layout"]
            cards = (*(c for pile in layout["tableau"] for c in pile), *layout["reserve"])
            reveals.append(cards)
            seen.clear()
            seen.update(cards)
            progress = Progress.started(at)
            continue
        item = dict(data)
        item.pop("cid", None)
        public.append(pack(item))
        revealed = tuple(data.get("revealed", ()))
        reveals.append(revealed)
        seen.update(revealed)
        progress = progress.after(
            at=at,
            status=player_status(state, data),
            foundation=state.foundation_count,
            moved=kind == "moved",
        )
    if version < first:
        return None
    game.state = state
    game.version = version
    game.progress = progress
    return GameAdvanced(game.player, first, version, progress)
