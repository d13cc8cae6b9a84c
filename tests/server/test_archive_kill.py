"""A real server process killed with SIGKILL in the middle of archiving loses no race: each is
still in Redis or in the archive, whole, and the next server finishes the job."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from bench.archive import fill, own_seats, play_pool, room_id
from server.archive import SqliteArchive
from server.race.services.archiver import ARCHIVE_DUE_INDEX
from server.race.services.reader import read_room
from server.store import RedisEventStore
from tests.server.test_archive_readers import FAST, metric
from tests.support.ports import free_port
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

ROOMS = 150


@pytest.mark.long
async def test_a_server_killed_while_archiving_loses_no_race(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    pool = await play_pool(1, (5, 15))
    prefix = f"kill{uuid.uuid4().hex[:6]}:"
    store = RedisEventStore(redis_server.url, prefix=prefix)
    archive = SqliteArchive(tmp_path / "data" / "archive.sqlite3")
    try:
        await fill(store, pool, ROOMS)
        races = [pool[i % len(pool)] for i in range(ROOMS)]
        expected = {
            room_id(i): [
                *own_seats(race, room_id(i))[0],
                *(e for game in race.games.values() for e in game),
            ]
            for i, race in enumerate(races)
        }
        metrics_port = free_port()
        args = [*FAST, "--redis-prefix", prefix, "--data-dir", str(tmp_path / "data"),
                "--archive-after-s", "0", "--archive-sweep-s", "0.5",
                "--metrics-port", str(metrics_port)]  # fmt: skip
        server = ServerProcess(redis_url=redis_server.url, log_path=tmp_path / "a.log",
                               extra_args=args)  # fmt: skip
        server.start()
        try:
            deadline = time.monotonic() + 60
            while metric(metrics_port, "arena_rooms_archived_total") < 5:
                assert time.monotonic() < deadline, "nothing was archived"
                await asyncio.sleep(0.01)
        finally:
            server.kill()  # SIGKILL, somewhere between two steps of some room
        archived = await archive.count()
        assert 0 < archived < ROOMS, "the kill came after the end: nothing was cut short"

        async def every_race_whole() -> None:
            for rid, events in expected.items():
                read = await read_room(store, rid, archive)
                assert read is not None, f"{rid} is neither in Redis nor in the archive"
                assert [e.data for e in read.events] == events

        await every_race_whole()
        server = ServerProcess(redis_url=redis_server.url, log_path=tmp_path / "b.log",
                               extra_args=args)  # fmt: skip
        server.start()
        try:
            deadline = time.monotonic() + 60
            while await store.index_count(ARCHIVE_DUE_INDEX):
                assert time.monotonic() < deadline, "the second server did not finish"
                await asyncio.sleep(0.05)
        finally:
            server.stop()
        assert await archive.count() == ROOMS
        assert await store.streams("{") == []
        await every_race_whole()
    finally:
        await archive.aclose()
        await store.aclose()
