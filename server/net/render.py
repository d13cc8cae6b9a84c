"""The wire messages of a room's state and games, rendered from the folded room.

Pure: what a viewer may see (the spectator delay's progress, the events released to it) comes
in as arguments. Game events are kept packed (``Game.public``) and spliced into frames.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.domain.lifecycle import RoomStatus
from server.domain.model import Game, Room, packed_with
from server.domain.progress import Progress
from server.net.framing import array_header
from shared import protocol as p


def room_state(
    room: Room,
    *,
    spectators: int,
    shown: Callable[[Game], Progress] | None = None,
    hide_end: bool = False,
) -> dict[str, Any]:
    """The room's state; ``shown`` is the progress a viewer has been shown (the delay), and
    ``hide_end`` keeps a finish the delay has not released yet out of it."""
    meta = room.settings
    status = RoomStatus.RACING if hide_end else room.status
    return {
        "id": room.id,
        "variant": meta.variant,
        "status": status.value,
        "capacity": meta.capacity,
        "countdown_ms": meta.countdown_ms,
        "time_limit_ms": meta.time_limit_ms,
        "spectator_delay_ms": meta.spectator_delay_ms,
        "commitment": meta.commitment,
        "deal_version": meta.deal_version,
        "players": [
            {"player": e.player, "name": e.name, **e.progress.wire(), **seat.wire()}
            for e, seat in zip(room.entrants(shown), room.seats.values(), strict=True)
        ],
        "open_seed": room.open_seed,
        "winnable": room.winnable,
        "spectators": spectators,
        "created_at": meta.at,
        "go_at": room.go_at,
        "started_at": room.started_at,
        "ends_at": room.ends_at,
        "finished_at": room.finished.at if room.finished and not hide_end else None,
    }


def game_message(room: Room, player: str, count: int | None = None) -> bytes:
    """The ``game`` frame, already encoded: the first ``count`` events (None: all)."""
    game = room.games.get(player)
    events = [] if game is None else game.public if count is None else game.public[:count]
    head = {"type": p.GAME, "room": room.id, "player": player, "version": len(events)}
    return packed_with(head, "events", array_header(len(events)) + b"".join(events))


def event_frames(room: Room, game: Game, first: int, last: int) -> list[bytes]:
    """One ``game_event`` frame per event ``first``..``last``."""
    return [
        packed_with(
            {"type": p.GAME_EVENT, "room": room.id, "player": game.player, "version": v},
            "event",
            game.public[v - 1],
        )
        for v in range(first, last + 1)
    ]


def countdown_message(room: Room, at: int) -> dict[str, Any]:
    return {"type": p.COUNTDOWN, "room": room.id, "at": at, "go_at": room.go_at}


def started_message(room: Room, at: int) -> dict[str, Any]:
    return {
        "type": p.STARTED,
        "room": room.id,
        "at": at,
        "ends_at": room.ends_at,
        "commitment": room.settings.commitment,
    }


def progress_frame(room: Room, player: str, progress: Progress) -> bytes:
    update = {"type": p.PROGRESS, "room": room.id, "player": player}
    update.update(progress.wire())
    return p.encode_unchecked(update)
