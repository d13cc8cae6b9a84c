"""The wire messages of a room's state and games, rendered from the folded room.

Pure: what a viewer may see (the spectator delay's progress, the events released to it) comes
in as arguments. Game events are kept packed (``Game.public``) and spliced into frames.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Game, Room
from server.race.domain.progress import Progress
from server.race.wire.audience import Audience, Member, Role
from shared import protocol as p
from shared.protocol import packed_list, packed_with


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
        "rated": room.rated,
        "spectators": spectators,
        "created_at": meta.at,
        "go_at": room.go_at,
        "started_at": room.started_at,
        "ends_at": room.ends_at,
        "finished_at": room.finished.at if room.finished and not hide_end else None,
        "closed_reason": room.closed_reason,
        "rematch": None if hide_end else room.rematch,
        "tournament": meta.tournament or None,
    }


def game_message(room: Room, player: str, count: int | None = None) -> bytes:
    """The ``game`` frame, already encoded: the first ``count`` events (None: all)."""
    game = room.games.get(player)
    events = [] if game is None else game.public if count is None else game.public[:count]
    head = {"type": p.GAME, "room": room.id, "player": player, "version": len(events)}
    return packed_with(head, "events", packed_list(events))


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


def viewer_room_state(room: Room, audience: Audience, *, delayed: bool) -> dict[str, Any]:
    """The room's state for a connection here; ``delayed``: as the spectator delay shows it."""
    if not delayed:
        return room_state(room, spectators=audience.spectator_count())

    def shown(game: Game) -> Progress:
        return audience.shown.get(game.player, Progress())

    hide_end = room.finished is not None and not audience.finished_shown
    return room_state(room, spectators=audience.spectator_count(), shown=shown, hide_end=hide_end)


def snapshot(room: Room, audience: Audience, member: Member) -> list[dict[str, Any] | bytes]:
    """What a connection that just joined is sent: the room, its own game or (a spectator)
    every game as released to viewers, and the results once it may see them."""
    spectator = member.role == Role.SPECTATOR
    sent: list[dict[str, Any] | bytes] = [
        {"type": p.ROOM, "room": viewer_room_state(room, audience, delayed=spectator)}
    ]
    if member.role == Role.PLAYER and member.player is not None:
        own = room.games.get(member.player)
        if own is not None and own.public:
            sent.append(game_message(room, member.player))
    if spectator:
        for player in room.seats:
            game = room.games.get(player)
            if game is not None and game.public:
                sent.append(game_message(room, player, audience.released.get(player, 0)))
    if room.finished is not None and (audience.finished_shown or not spectator):
        sent.append(room.finished_message())
    return sent
