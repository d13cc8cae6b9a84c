"""Causal folding: a room event decided from games (a race's end, ``RaceFinished.games``) is
folded, and so told to the hub's listeners, only once the fold holds every game event it was
decided from, on any process. Whoever hears of an end has heard of its causes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from server.race.domain.fold import Change, fold_room_until_waiting, fold_stored
from server.race.domain.model import Room
from server.runtime.logging import get_logger
from server.store import StoredEvent

log = get_logger("server.race.services.causal_fold")

Notify = Callable[[Room, Sequence[Change]], None]
"""Tells the listeners what a fold changed."""
Read = Callable[[Room, Sequence[str]], Awaitable[None]]
"""Reads streams from the fold's versions on and folds them (the hub's catch-up read)."""


def fold_ready(room: Room, events: Sequence[StoredEvent], notify: Notify) -> dict[str, int]:
    """Fold room stream events up to one decided from game events the fold lacks; what that
    one waits for, stream by stream (nothing when every event was folded)."""
    changes, _, lacking = fold_room_until_waiting(room, events)
    if changes:
        notify(room, changes)
    return lacking


async def fold_in_order(
    room: Room, events: Sequence[StoredEvent], notify: Notify, read: Read
) -> None:
    """Fold a run of one stream's events; a room event after the game events it was decided
    from, read first when the fold lacks them. Read and still not there, the store lost them
    (a failover without --ack-after-replicas): the stream is the truth, and it is folded."""
    if events and events[0].stream != room.stream:  # a game's events wait for nothing
        changes = fold_stored(room, events)
        if changes:
            notify(room, changes)
        return
    waited: set[int] = set()
    while events:
        changes, rest, lacking = fold_room_until_waiting(room, events)
        if changes:
            notify(room, changes)
        if not lacking:
            return
        first = rest[0]
        if first.version in waited:
            log.error("causes_missing", room=room.id, version=first.version, streams=lacking)
            changes = fold_stored(room, [first])
            if changes:
                notify(room, changes)
            rest = rest[1:]
        else:
            waited.add(first.version)
            await read(room, sorted(lacking))
        events = rest
