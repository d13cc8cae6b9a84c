"""Backups of the archive restore into an empty database that serves the races they hold: SQLite's
online backup API, and pg_dump / pg_restore (docs/operations.md, "The archive")."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import App
from server.archive import Archive, SqliteArchive
from server.archive.postgres import PostgresArchive
from server.race.domain.model import Room
from server.race.services.archiver import fingerprint
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from tests.server.race.services.test_archiver import AFTER_S, finished_race, marked
from tests.support.postgres_server import PostgresServer


async def archived_race(archive: Archive) -> tuple[str, dict[str, object]]:
    """A race played, finished and archived (gone from its store): its id and its fold."""
    store, clock = MemoryEventStore(), FakeClock()
    app = App(Config(archive_after_s=AFTER_S), store, clock, archive)
    app.delivery.ticker.send_many = lambda peers, msg: None
    app.race_clock.poll_s = 0.01
    app.open()
    try:
        room = await finished_race(app, clock, moves=6)
        await marked(store, room.id)
        clock.advance(int(AFTER_S * 1000))
        assert app.archiver is not None
        assert not await app.archiver.sweep()
        assert await store.last_version(room.stream) == 0
        return room.id, fingerprint(room)
    finally:
        app.archive = None  # the caller closes it
        await app.close_parts()


async def served(archive: Archive, room_id: str) -> Room:
    """The room as a server with an empty store and this archive serves it to a replay."""
    app = App(Config(), MemoryEventStore(), FakeClock(), archive)
    app.open()
    try:
        return await app.commands.room(room_id)
    finally:
        await app.close_parts()


@pytest.fixture
async def sqlite_archive(tmp_path: Path) -> AsyncIterator[SqliteArchive]:
    made = SqliteArchive(tmp_path / "archive.sqlite3")
    yield made
    await made.aclose()


async def test_a_sqlite_online_backup_serves_a_replay(
    sqlite_archive: SqliteArchive, tmp_path: Path
) -> None:
    room_id, live = await archived_race(sqlite_archive)
    copy = tmp_path / "backup.sqlite3"
    await asyncio.to_thread(sqlite_archive.backup, copy)  # while the archive stays open
    room = await served(SqliteArchive(copy), room_id)
    assert room.archived
    assert fingerprint(room) == live


async def test_a_pg_dump_restored_into_an_empty_database_serves_a_replay(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    source = PostgresArchive(postgres_server.create_database())
    try:
        room_id, live = await archived_race(source)
    finally:
        await source.aclose()
    dump = tmp_path / "archive.dump"
    await asyncio.to_thread(
        subprocess.run,
        [postgres_server.tool("pg_dump"), "--format=custom", "--file", str(dump), source.url],
        check=True,
    )
    target = postgres_server.create_database()
    await asyncio.to_thread(
        subprocess.run,
        [postgres_server.tool("pg_restore"), "--no-owner", "--dbname", target, str(dump)],
        check=True,
    )
    room = await served(PostgresArchive(target), room_id)
    assert room.archived
    assert fingerprint(room) == live
