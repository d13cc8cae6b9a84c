"""The projection: room and game events folded into the room model, returning what changed.

A pure fold (no I/O, no clock, no sending): the hub feeds it what the store holds, in version
order per stream, and hands the changes it returns to delivery and the race clock. Room events
(schema ``v`` 1, all with ``at``): ``room_created`` (variant, seed or deck, salt, commitment,
deal_version, capacity, countdown_ms, time_limit_ms, spectator_delay_ms, open_seed, winnable,
creator), ``player_joined`` (player, name, token_hash: SHA-256 of the resume token, connection),
``player_left``, ``player_away`` and ``player_back`` (player, connection: a seat's live
connection went or came, on whichever process), ``countdown_started`` (go_at),
``countdown_cancelled``, ``race_started`` (ends_at), ``race_finished`` (reason, ranking),
``room_closed`` (reason). Game streams hold the shared game events, each ``moved`` with the
client move id as ``cid``, so a resent id is answered, never applied; a ``resigned`` may carry a
``reason`` (``abandoned``: the server resigned a racer gone longer than the grace).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from server.errors import WrongStatus
from server.logging import get_logger
from server.race import PlayerStatus, Progress, RoomStatus, Trigger, next_status
from server.room import Game, Room, Seat, game_stream
from server.store import StoredEvent
from shared import fold_event, is_over, public_event
from shared.protocol import pack
from shared.state import GameState

ROOM_EVENT_VERSION = 1

log = get_logger("server.projection")


@dataclass(frozen=True)
class Loaded:
    """The room was just loaded from the store (a restart, or its first use here)."""


@dataclass(frozen=True)
class RoomChanged:
    """One room event was folded: ``kind`` is its type, ``data`` the event."""

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class GameAdvanced:
    """A player's game folded events ``first``..``last``, reaching ``progress``."""

    player: str
    first: int
    last: int
    progress: Progress


Change = Loaded | RoomChanged | GameAdvanced


def room_event(kind: str, **fields: Any) -> dict[str, Any]:
    """A room event as commands append it."""
    return {"type": kind, "v": ROOM_EVENT_VERSION, **fields}


def player_status(state: GameState) -> PlayerStatus:
    """A racer's status after an event that is not the start."""
    if state.won:
        return PlayerStatus.WON
    if state.resigned:
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


def _fold_run(room: Room, run: list[StoredEvent]) -> list[Change]:
    stream = run[0].stream
    if stream == room.stream:
        changes: list[Change] = []
        for event in run:
            if event.version != room.version + 1:
                continue
            changes.append(fold_room_event(room, event.version, event.data))
        return changes
    player = stream.rsplit(":", 1)[1]
    game = room.games.get(player)
    if game is None:
        return []
    advanced = fold_game_events(game, run)
    return [] if advanced is None else [advanced]


def fold_room_event(room: Room, version: int, data: dict[str, Any]) -> RoomChanged:
    """Fold the room event at ``version`` (the next one) into ``room``. An event the room's
    lifecycle does not allow (a stream written by hand, a bug) is skipped and logged: one bad
    event must not make a room unloadable."""
    room.version = version
    try:
        return _fold_room_event(room, data)
    except WrongStatus as exc:
        log.error("room_event_refused", room=room.id, version=version, reason=exc.reason)
        return RoomChanged("refused", data)


def _fold_room_event(room: Room, data: dict[str, Any]) -> RoomChanged:
    kind = str(data.get("type"))
    at = int(data.get("at", 0))
    if kind == "room_created":
        room.meta = dict(data)
        room.status = RoomStatus.LOBBY
        room.idle_since = at
    elif kind == "player_joined":
        player = data["player"]
        connection = data.get("connection")
        seat = Seat(player, data["name"], data["token_hash"], room.joined_count, connection)
        seat.away_since = None if connection is not None else at
        room.seats[player] = seat
        room.joined_count += 1
        if player not in room.games:
            room.games[player] = Game(player, game_stream(room.id, player))
    elif kind == "player_left":
        room.seats.pop(data["player"], None)
    elif kind == "player_back":
        back = room.seats.get(data["player"])
        if back is not None:
            back.connection, back.away_since = data["connection"], None
    elif kind == "player_away":
        away = room.seats.get(data["player"])
        if away is not None and away.connection == data.get("connection"):
            away.connection, away.away_since = None, at
    elif kind == "room_closed":
        room.status = next_status(room.status, Trigger.IDLE)
        room.closed_at = at
    elif kind == "countdown_started":
        room.status = next_status(room.status, Trigger.START)
        room.countdown_at, room.go_at = at, int(data["go_at"])
    elif kind == "countdown_cancelled":
        room.status = next_status(room.status, Trigger.EMPTIED)
        room.go_at = room.countdown_at = None
    elif kind == "race_started":
        room.status = next_status(room.status, Trigger.GO)
        room.started_at, room.ends_at = at, data.get("ends_at")
    elif kind == "race_finished":
        trigger = Trigger.TIME_UP if data.get("reason") == "time_limit" else Trigger.ALL_DONE
        room.status = next_status(room.status, trigger)
        room.finished = dict(data)
    else:
        log.warning("unknown_room_event", room=room.id, kind=kind)
    if any(s.connection is not None for s in room.seats.values()):
        room.idle_since = None
    elif room.idle_since is None:
        room.idle_since = at
    return RoomChanged(kind, data)


def fold_game_events(game: Game, events: Sequence[StoredEvent]) -> GameAdvanced | None:
    """Fold a run of a game's events in one pass; None if none of them was the next one.

    Progress is computed once for the run: the foundation count is tracked per event (it dates
    ``reached_at``), but whether the game is over only at the end, since a finished game stays
    finished (won, over and resigned all leave no move but resigning).
    """
    first = game.version + 1
    state = game.state
    version = game.version
    progress = game.progress
    foundation, reached, moves = progress.foundation, progress.reached_at, progress.moves
    started = False
    history: list[tuple[GameState, int]] = []  # (state, at) after each event but a start
    public = game.public
    cids = game.cids
    reveals = game.reveals
    seen = game.seen
    for event in events:
        if event.version <= version:
            continue  # folded already (read twice: a wake-up and a catch-up)
        if event.version != version + 1:
            break
        data = event.data
        cid = data.get("cid")
        try:
            state = fold_event(state, data)
        except Exception:
            log.exception("fold_failed", stream=game.stream, version=event.version)
            break
        version = event.version
        if cid is not None:
            cids[cid] = version
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
            started = True
            history.clear()
            foundation, reached, moves = 0, at, 0
            continue
        item = dict(data)
        item.pop("cid", None)
        public.append(pack(item))
        revealed = tuple(data.get("revealed", ()))
        reveals.append(revealed)
        seen.update(revealed)
        if kind == "moved":
            moves += 1
        count = state.foundation_count
        if count != foundation or reached is None:
            reached = at
        foundation = count
        history.append((state, at))
    if version < first:
        return None
    game.state = state
    game.version = version
    if started and not history:
        progress = Progress(status=PlayerStatus.PLAYING, reached_at=reached)
    else:
        status = player_status(history[-1][0])
        finished_at = None if started else progress.finished_at
        if status.done and finished_at is None:
            finished_at = history[-1][1]
            for earlier, at in reversed(history[:-1]):
                if not player_status(earlier).done:
                    break
                finished_at = at
        progress = Progress(status, foundation, moves, finished_at, reached)
    game.progress = progress
    return GameAdvanced(game.player, first, version, progress)
