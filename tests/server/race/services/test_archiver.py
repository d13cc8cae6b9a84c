"""The archiver: a finished room moves from the store to the archive exactly once, and a crash
between any two of its steps leaves it in the store, the archive, or both; never neither."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import App
from server.archive import Archive, ArchivedRoom, SqliteArchive
from server.daily.domain import days as d
from server.kernel.errors import WrongStatus
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.services.archiver import (
    ARCHIVE_DUE_INDEX,
    CLAIM_MS,
    Archiver,
    Outcome,
    fingerprint,
    folded,
)
from server.race.services.reader import read_room
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore, MemoryEventStore
from shared.errors import ArchiveUnavailable
from shared.game import legal_moves
from tests.server.parts import Peer, racing, until

# The games these tests finish are not theirs to analyse: the analysis's own tests do.
NO_ANALYSIS = {"swiss": 0, "quadrennial": 0}
DEFAULT_MAX_NODES = dict(Config().analysis_max_nodes)

STEPS = ["read", "written", "verified", "streams_deleted", "directory_left"]
AFTER_S = 300.0


class Crash(BaseException):
    """What a kill -9 between two steps looks like to the code after it: nothing runs."""


def archiving_app(
    store: EventStore, clock: FakeClock, archive: Archive, *, analysis: bool = False
) -> App:
    made = App(
        Config(
            archive_after_s=AFTER_S,
            analysis_max_nodes=DEFAULT_MAX_NODES if analysis else NO_ANALYSIS,
        ),
        store,
        clock,
        archive,
    )
    made.delivery.ticker.send_many = lambda peers, msg: None
    made.race_clock.poll_s = 0.01
    made.open()
    assert made.archiver is not None
    made.archiver.interval_s = 3600  # the tests sweep by hand
    return made


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock, archive: Archive) -> AsyncIterator[App]:
    made = archiving_app(store, clock, archive)
    yield made
    await made.close_parts()


async def finished_race(app: App, clock: FakeClock, moves: int = 4) -> Room:
    ann, bob = Peer("ann"), Peer("bob")
    room = await racing(app, clock, [ann, bob])
    for cid in range(moves):
        state = room.games["ann"].state
        assert state is not None
        await app.commands.games.move(room, "ann", cid, sorted(legal_moves(state))[0])
    await app.commands.games.resign(room, "ann")
    await app.commands.games.resign(room, "bob")
    await until(lambda: room.status is RoomStatus.FINISHED)
    return room


async def due(store: EventStore) -> set[str]:
    return {e.member for e in await store.index_range(ARCHIVE_DUE_INDEX)}


async def marked(store: EventStore, room_id: str) -> None:
    for _ in range(500):
        if room_id in await due(store):
            return
        await asyncio.sleep(0.002)
    raise AssertionError(f"{room_id} never became due")


async def in_store(store: EventStore, room: Room) -> list[str]:
    return [s for s in room.streams() if await store.last_version(s) > 0]


async def test_a_finished_room_moves_after_the_delay(
    app: App, store: MemoryEventStore, clock: FakeClock, archive: Archive
) -> None:
    room = await finished_race(app, clock)
    live = fingerprint(room)
    listed = await app.commands.list_rooms()
    seats = [s.token_hash for s in room.seats.values()]
    assert [await store.index_get("seats", token) for token in seats] != [None, None]
    await marked(store, room.id)
    assert app.archiver is not None
    clock.advance(int(AFTER_S * 1000) - 1)
    assert not await app.archiver.sweep()
    assert await in_store(store, room) == room.streams()  # not a millisecond early
    assert app.archiver.figures.waiting == 1
    clock.advance(1)
    assert not await app.archiver.sweep()
    assert await in_store(store, room) == []
    assert await due(store) == set()
    assert app.archiver.figures.archived == 1
    read = await read_room(store, room.id, archive)
    assert read is not None
    assert read.archived
    assert fingerprint(folded(room.id, read.events)) == live
    # The directory's entry and the seats left the store; the room list reads the archive.
    assert await store.index_get("rooms", room.id) is None
    assert [await store.index_get("seats", token) for token in seats] == [None, None]
    assert await app.commands.list_rooms() == listed


@pytest.mark.parametrize("step", STEPS)
async def test_a_crash_between_steps_loses_nothing(
    app: App, store: MemoryEventStore, clock: FakeClock, archive: Archive, step: str
) -> None:
    room = await finished_race(app, clock)
    live = fingerprint(room)
    listed = await app.commands.list_rooms()
    await marked(store, room.id)
    clock.advance(int(AFTER_S * 1000))

    async def crash(at: str, room_id: str) -> None:
        if at == step:
            raise Crash(at)

    dying = Archiver(store, archive, clock, after_s=AFTER_S, step=crash)
    with pytest.raises(Crash):
        await dying.sweep()
    # Its claim on the room holds until it runs out: nobody else archives it meanwhile.
    again = Archiver(store, archive, clock, after_s=AFTER_S)
    assert await again.archive_room(room.id) is Outcome.CLAIMED
    clock.advance(CLAIM_MS)
    # In the store, the archive, or both: a reader still gets the whole room.
    read = await read_room(store, room.id, archive)
    assert read is not None
    assert fingerprint(folded(room.id, read.events)) == live
    assert room.id in await due(store)  # so the next sweep finishes the job
    assert await app.commands.list_rooms() == listed
    # Another process (or this one restarted) sweeps: the room ends up archived, once.
    assert not await again.sweep()
    assert await in_store(store, room) == []
    assert await due(store) == set()
    assert await archive.count() == 1
    read = await read_room(store, room.id, archive)
    assert read is not None
    assert read.archived
    assert fingerprint(folded(room.id, read.events)) == live
    assert await app.commands.list_rooms() == listed


async def test_racing_archivers_write_once(
    app: App, store: MemoryEventStore, clock: FakeClock, archive: Archive
) -> None:
    rooms = [await finished_race(app, clock, moves=i) for i in range(3)]
    for room in rooms:
        await marked(store, room.id)
    clock.advance(int(AFTER_S * 1000))
    archivers = [Archiver(store, archive, clock, after_s=AFTER_S) for _ in range(3)]
    encoded: list[str] = []
    put = archive.put

    async def counted(room: ArchivedRoom, *, now_ms: int) -> bool:
        encoded.append(room.room_id)
        return await put(room, now_ms=now_ms)

    archive.put = counted  # type: ignore[method-assign]
    await asyncio.gather(*(a.sweep() for a in archivers))
    assert await archive.count() == 3
    # Each room claimed by one of them: read, encoded and written once, by that one.
    assert sorted(encoded) == sorted(room.id for room in rooms)
    assert sum(a.figures.archived for a in archivers) == 3
    assert sum(a.figures.failures for a in archivers) == 0
    for room in rooms:
        assert await in_store(store, room) == []


class DownArchive(SqliteArchive):
    """An archive whose database is unreachable, or whose disk is full."""

    async def insert(self, packed: object, now_ms: int) -> bool:  # type: ignore[override]
        raise ArchiveUnavailable("disk full")


async def test_an_archive_that_fails_deletes_nothing(
    store: MemoryEventStore, clock: FakeClock, tmp_path: Path, app: App
) -> None:
    room = await finished_race(app, clock)
    await marked(store, room.id)
    clock.advance(int(AFTER_S * 1000))
    down = DownArchive(tmp_path / "down.sqlite3")
    try:
        archiver = Archiver(store, down, clock, after_s=AFTER_S)
        assert await archiver.sweep()  # failed: the loop backs off
        assert archiver.figures.failures == 1
        assert await in_store(store, room) == room.streams()
        assert room.id in await due(store)
    finally:
        await down.aclose()


async def test_a_room_waits_for_its_rating(
    app: App, store: MemoryEventStore, clock: FakeClock, archive: Archive
) -> None:
    room = await finished_race(app, clock)
    await marked(store, room.id)
    await store.index_put("ratings-pending", room.id, 1)
    clock.advance(int(AFTER_S * 1000))
    held = Archiver(store, archive, clock, after_s=AFTER_S, hold_indexes=["ratings-pending"])
    await held.sweep()
    assert await in_store(store, room) == room.streams()
    await store.index_remove("ratings-pending", room.id)
    await held.sweep()
    assert await in_store(store, room) == []


async def test_an_archived_room_is_read_only(
    app: App, store: MemoryEventStore, clock: FakeClock, archive: Archive
) -> None:
    """A rematch asked of a race already archived is refused, not appended to nothing."""
    room = await finished_race(app, clock)
    await marked(store, room.id)
    clock.advance(int(AFTER_S * 1000))
    assert app.archiver is not None
    await app.archiver.sweep()
    await app.hub.unload([room])
    loaded = await app.commands.room(room.id)
    assert loaded.archived
    with pytest.raises(WrongStatus, match="archived"):
        await app.commands.rematch(loaded, "ann", creator="ann")
    assert await archive.count() == 1
    assert await due(store) == set()  # loading it did not make it due again


class UnreachableArchive(SqliteArchive):
    """An archive that answers nothing: a PostgreSQL down, say."""

    async def insert(self, packed: object, now_ms: int) -> bool:  # type: ignore[override]
        raise ArchiveUnavailable("connection refused")

    async def select(self, room_id: str) -> None:  # type: ignore[override]
        raise ArchiveUnavailable("connection refused")

    async def select_recent(self, limit: int, before_ms: int | None) -> list[tuple[str, bytes]]:
        raise ArchiveUnavailable("connection refused")


async def test_with_the_archive_down_races_go_on_and_readers_get_its_code(
    store: MemoryEventStore, clock: FakeClock, tmp_path: Path, archive: SqliteArchive
) -> None:
    """Archived rooms answer archive_unavailable while it is down (logged, counted); the
    rooms still in the store are served, and new races run."""
    app = App(
        Config(archive_after_s=AFTER_S, analysis_max_nodes=NO_ANALYSIS), store, clock, archive
    )
    app.delivery.ticker.send_many = lambda peers, msg: None
    app.race_clock.poll_s = 0.01
    app.open()
    try:
        gone = await finished_race(app, clock)
        await marked(store, gone.id)
        clock.advance(int(AFTER_S * 1000))
        assert app.archiver is not None
        await app.archiver.sweep()
        assert await in_store(store, gone) == []
    finally:
        app.archive = None
        await app.close_parts()
    down = UnreachableArchive(tmp_path / "down.sqlite3")
    app = App(Config(archive_after_s=AFTER_S, analysis_max_nodes=NO_ANALYSIS), store, clock, down)
    app.delivery.ticker.send_many = lambda peers, msg: None
    app.race_clock.poll_s = 0.01
    app.open()
    try:
        with pytest.raises(ArchiveUnavailable) as caught:
            await app.commands.room(gone.id)
        assert caught.value.code == "archive_unavailable"
        assert app.live_figures()["archive_read_failures"] == 1
        kept = await finished_race(app, clock)  # racing goes on
        await marked(store, kept.id)
        clock.advance(int(AFTER_S * 1000))
        assert app.archiver is not None
        assert await app.archiver.sweep()  # failed: backs off, deletes nothing
        assert await in_store(store, kept) == kept.streams()
        assert (await app.commands.room(kept.id)).status is RoomStatus.FINISHED
        # The room list still lists what the store holds.
        assert [r["id"] for r in await app.commands.list_rooms()] == [kept.id]
        assert app.live_figures()["archive_waiting"] == 1
        assert app.live_figures()["archive_failures"] == 1
    finally:
        await app.close_parts()


async def test_a_daily_attempt_replays_from_the_archive_after_the_day(
    app: App, store: MemoryEventStore, clock: FakeClock, archive: Archive
) -> None:
    """The day's standings name each attempt's room once the day is over; that room, archived,
    gives the same standings and the same game as before it left the store."""
    day = d.day_of(clock.now_ms())
    room = await app.daily.attempt("swiss", "acct-ann", "ann", "sess-ann")
    await app.commands.join(room, "sess-ann", name="ann", token="tok-ann", connection="c1")
    await app.commands.start(room, "sess-ann")
    clock.advance(10_000)
    await until(lambda: room.status is RoomStatus.RACING and room.games["sess-ann"].version == 1)
    await app.commands.games.resign(room, "sess-ann")
    await until(lambda: room.status is RoomStatus.FINISHED)
    clock.advance(d.day_end_ms(day) - clock.now_ms())
    before = await app.daily.standings("swiss", day, reader="acct-ann")
    assert before["revealed"]
    assert before["rows"][0]["room"] == room.id
    live = fingerprint(room)
    await marked(store, room.id)
    clock.advance(int(AFTER_S * 1000))
    assert app.archiver is not None
    assert not await app.archiver.sweep()
    assert await in_store(store, room) == []
    await app.hub.unload([room])
    assert await app.daily.standings("swiss", day, reader="acct-ann") == before
    replayed = await app.commands.room(room.id)
    assert replayed.archived
    assert fingerprint(replayed) == live


async def test_a_backlog_is_archived_without_waiting_for_the_next_sweep(
    app: App,
    store: MemoryEventStore,
    clock: FakeClock,
    archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sweep that found a whole batch due sweeps again at once: a backlog (after the archive
    was down, say) drains at the archiver's pace, not a batch every ``interval_s``."""
    rooms = [await finished_race(app, clock, moves=i) for i in range(3)]
    for room in rooms:
        await marked(store, room.id)
    clock.advance(int(AFTER_S * 1000))
    monkeypatch.setattr("server.race.services.archiver._BATCH", 1)
    archiver = Archiver(store, archive, clock, after_s=AFTER_S, interval_s=3600)
    archiver.start()
    try:
        await until(lambda: archiver.figures.archived == 3)
    finally:
        await archiver.aclose()
    assert await due(store) == set()
