"""A room read whole: from the store (its room stream, then all its games in one round trip),
or from the archive once the store no longer has it, or once the archiver moved it between
those two reads (its games then come back empty).

What loading a room and folding it again (a stream went back) share, so every reader of a
finished room (a spectator, a replay, a profile's or a daily's link) reads an archived one
exactly as before. A corrupt game entry is logged and the game read up to it: one bad event
must not make a room unloadable. An archive that cannot serve raises its error
(``archive_unavailable``, ``corrupt_record``), which is logged and counted.
"""

from __future__ import annotations

from typing import NamedTuple

from server.archive import Archive, ArchivedRoom
from server.race.domain.fold import fold_stored
from server.race.domain.model import Room, room_stream
from server.runtime.logging import get_logger
from server.store import CorruptEntry, EventStore, StoredEvent
from shared.errors import ArchiveUnavailable, CorruptRecord

log = get_logger("server.race.services.reader")


class RoomRead(NamedTuple):
    """A room's events, and whether they came from the archive (the store has none)."""

    events: list[StoredEvent]
    archived: bool


class ArchiveReads:
    """How many finished rooms were read from the archive, and how many it could not serve."""

    def __init__(self) -> None:
        self.served = 0
        self.failed = 0


async def read_room(
    store: EventStore,
    room_id: str,
    archive: Archive | None = None,
    reads: ArchiveReads | None = None,
) -> RoomRead | None:
    """Every event of the room's streams, the room stream first; None if there is no room
    (neither in the store nor in the archive)."""
    room_events = await store.read(room_stream(room_id))
    if not room_events:
        if archive is None:
            return None
        archived = await _read_archived(archive, room_id, reads or ArchiveReads())
        return None if archived is None else RoomRead(archived, archived=True)
    seated = Room(room_id)  # which game streams the room stream names
    fold_stored(seated, room_events)
    streams = [g.stream for g in seated.games.values()]
    raw = await store.read_many_raw(streams)
    events = list(room_events)
    empty = False
    for stream in streams:
        try:
            game = store.decode_raw(stream, raw[stream])
        except CorruptEntry as error:
            log.error("corrupt_event", stream=error.stream, entry=error.entry, reason=error.why)
            game = await _good_prefix(store, stream)
        empty = empty or not game
        events.extend(game)
    if empty and archive is not None and await store.last_version(room_stream(room_id)) == 0:
        # The archiver deletes a room's streams together, and did so between the two reads
        # (a game not yet started is empty too, but its room stream is still there).
        archived = await _read_archived(archive, room_id, reads or ArchiveReads())
        return None if archived is None else RoomRead(archived, archived=True)
    return RoomRead(events, archived=False)


async def _read_archived(
    archive: Archive, room_id: str, reads: ArchiveReads
) -> list[StoredEvent] | None:
    try:
        record = await archive.get(room_id)
    except (ArchiveUnavailable, CorruptRecord) as error:
        reads.failed += 1
        log.error("archive_read_failed", room=room_id, code=error.code, reason=error.reason)
        raise
    if record is None:
        return None
    reads.served += 1
    return stored_events(record)


def stored_events(record: ArchivedRoom) -> list[StoredEvent]:
    """An archived record as the store's events: the room stream first, then each game."""
    stream = room_stream(record.room_id)
    events = [StoredEvent(stream, i, e) for i, e in enumerate(record.room_events, 1)]
    for game, game_events in record.game_events.items():
        events.extend(StoredEvent(game, i, e) for i, e in enumerate(game_events, 1))
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
