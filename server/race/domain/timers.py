"""When a room's next timer is due: countdowns, time limits, abandonment, idle lobbies.

Pure: the race clock arms one timer per loaded room from ``next_due`` and, when it fires, asks
the commands what ``due_now`` says; the decisions themselves check again when they append.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room


@dataclass(frozen=True, slots=True)
class Graces:
    """The server's timings: abandonment grace and lobby TTL, in ms (0: never)."""

    abandon_ms: int
    lobby_ttl_ms: int


def abandon_times(room: Room, graces: Graces) -> dict[str, int]:
    """When each away racer still playing is abandoned."""
    if graces.abandon_ms <= 0:
        return {}
    found = {}
    for seat in room.seats.values():
        game = room.games.get(seat.player)
        playing = game is not None and not game.progress.status.done
        if seat.away_since is not None and playing:
            found[seat.player] = seat.away_since + graces.abandon_ms
    return found


def clock_out_times(room: Room) -> dict[str, int]:
    """When each racer who berserked and is still playing runs out of their own clock."""
    found = {}
    for seat in room.seats.values():
        game = room.games.get(seat.player)
        own_end = room.clock_ends_at(seat.player)
        if (
            seat.berserk
            and own_end is not None
            and game is not None
            and not game.progress.status.done
        ):
            found[seat.player] = own_end
    return found


def clocked_out_now(room: Room, now: int) -> list[str]:
    """The berserk racers whose own clock has run out at ``now``."""
    if room.status is not RoomStatus.RACING:
        return []
    return [player for player, when in clock_out_times(room).items() if now >= when]


def next_due(room: Room, graces: Graces) -> int | None:
    """The time of the room's next timed event, if any."""
    if room.status is RoomStatus.COUNTDOWN:
        return room.go_at
    if room.status is RoomStatus.RACING:
        times = list(abandon_times(room, graces).values())
        times += clock_out_times(room).values()
        if room.ends_at is not None:
            times.append(room.ends_at)
        return min(times) if times else None
    if room.status is RoomStatus.LOBBY and room.idle_since is not None:
        return room.idle_since + graces.lobby_ttl_ms if graces.lobby_ttl_ms > 0 else None
    return None


def time_is_up(room: Room, now: int) -> bool:
    return room.status is RoomStatus.RACING and room.ends_at is not None and now >= room.ends_at


def abandoned_now(room: Room, graces: Graces, now: int) -> list[str]:
    """The racers whose grace has run out at ``now``."""
    if room.status is not RoomStatus.RACING:
        return []
    return [player for player, when in abandon_times(room, graces).items() if now >= when]
