"""The archiver's fence, on every store backend: an event appended between the archiver's check
and its delete (a rematch offered in that instant) is never lost; the room is archived again,
with it, by the next sweep."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from server.app import App
from server.archive import SqliteArchive
from server.race.domain.lifecycle import RoomStatus
from server.race.services.archiver import Archiver, Outcome, fingerprint, folded
from server.race.services.reader import read_room
from server.runtime.clock import FakeClock
from server.store import EventStore
from tests.server.race.services.test_archiver import (
    AFTER_S,
    archiving_app,
    due,
    finished_race,
    in_store,
    marked,
)


@pytest.fixture
async def app(backend: EventStore, clock: FakeClock, archive: SqliteArchive) -> AsyncIterator[App]:
    made = archiving_app(backend, clock, archive)
    yield made
    await made.close_parts()


async def test_an_append_between_verify_and_delete_is_kept(
    app: App, backend: EventStore, clock: FakeClock, archive: SqliteArchive
) -> None:
    room = await finished_race(app, clock)
    await marked(backend, room.id)
    clock.advance(int(AFTER_S * 1000))
    offered: list[str] = []

    async def rematch_in_the_window(step: str, room_id: str) -> None:
        if step == "verified" and room_id == room.id and not offered:
            offered.append(await app.commands.rematch(room, "ann", creator="ann"))

    racing = Archiver(backend, archive, clock, after_s=AFTER_S, step=rematch_in_the_window)
    assert await racing.archive_room(room.id) is Outcome.WAITING
    # The rematch is in the store, and the room with it: nothing was deleted.
    assert room.rematch == offered[0]
    live = fingerprint(room)
    assert live["rematch"] == offered[0]
    assert await in_store(backend, room) == room.streams()
    assert room.id in await due(backend)
    # The next sweep archives the longer record, rematch included, and deletes it.
    assert await racing.archive_room(room.id) is Outcome.ARCHIVED
    assert await in_store(backend, room) == []
    read = await read_room(backend, room.id, archive)
    assert read is not None
    assert read.archived
    assert fingerprint(folded(room.id, read.events)) == live
    assert room.status is RoomStatus.FINISHED


async def test_a_room_archived_between_its_two_reads_is_read_from_the_archive(
    app: App,
    backend: EventStore,
    clock: FakeClock,
    archive: SqliteArchive,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A room is read in two steps (its room stream, then its games); the archiver deletes all
    its streams at once, and may do so between the two: the games then come back empty, and
    a late spectator got the results without a single game (bench.soak). The reader then takes
    the room from the archive, whole."""
    room = await finished_race(app, clock)
    live = fingerprint(room)
    await marked(backend, room.id)
    clock.advance(int(AFTER_S * 1000))
    archiver = Archiver(backend, archive, clock, after_s=AFTER_S)
    read_games = backend.read_many_raw
    archived: list[Outcome] = []

    async def archived_in_between(streams: Sequence[str]) -> dict[str, Any]:
        if not archived:  # the archiver reads the room too: once
            archived.append(Outcome.CLAIMED)
            archived[0] = await archiver.archive_room(room.id)
        return await read_games(streams)

    monkeypatch.setattr(backend, "read_many_raw", archived_in_between)
    read = await read_room(backend, room.id, archive)
    assert archived == [Outcome.ARCHIVED]
    assert read is not None
    assert read.archived
    assert fingerprint(folded(room.id, read.events)) == live
