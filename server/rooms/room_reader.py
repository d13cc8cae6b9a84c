"""A room read whole from the store: its room stream, then all its games in one round trip.

What loading a room and folding it again (a stream went back) share. A corrupt game entry is
logged and the game read up to it: one bad event must not make a room unloadable.
"""

from __future__ import annotations

from server.domain.fold import fold_stored
from server.domain.model import Room, room_stream
from server.runtime.logging import get_logger
from server.store import CorruptEntry, EventStore, StoredEvent

log = get_logger("server.rooms.room_reader")


async def read_room(store: EventStore, room_id: str) -> list[StoredEvent] | None:
    """Every event of the room's streams, the room stream first; None if there is no room."""
    room_events = await store.read(room_stream(room_id))
    if not room_events:
        return None
    seated = Room(room_id)  # which game streams the room stream names
    fold_stored(seated, room_events)
    streams = [g.stream for g in seated.games.values()]
    raw = await store.read_many_raw(streams)
    events = list(room_events)
    for stream in streams:
        try:
            events.extend(store.decode_raw(stream, raw[stream]))
        except CorruptEntry as error:
            log.error("corrupt_event", stream=error.stream, entry=error.entry, reason=error.why)
            events.extend(await _good_prefix(store, stream))
    return events


async def _good_prefix(store: EventStore, stream: str) -> list[StoredEvent]:
    """The events of a stream up to its first corrupt entry (which was logged)."""
    events: list[StoredEvent] = []
    while True:
        try:
            more = await store.read(stream, after=len(events), limit=1)
        except CorruptEntry:
            return events
        if not more:
            return events
        events.extend(more)
