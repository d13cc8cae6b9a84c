"""Archiving on a Redis Cluster, end to end: finished races in the Cluster as the server leaves
them, a real server of two workers (``--redis-cluster --workers 2``) archives them all, each
room by one worker (the claim), and nothing of them is left in the Cluster; every race reads
back whole from the archive."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from bench.archive import fill, own_seats, play_pool, room_id
from server.archive import SqliteArchive
from server.race.services.archiver import ARCHIVE_CLAIMS_INDEX, ARCHIVE_DUE_INDEX
from server.race.services.reader import read_room
from server.store import RedisEventStore
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

ROOMS = 200
FAST = ["--rate", "1000", "--burst", "1000"]


def archived_by(log: Path) -> Counter[tuple[str, int]]:
    """(room, worker pid) of every ``room_archived`` line of the server's log."""
    found: Counter[tuple[str, int]] = Counter()
    for line in log.read_text().splitlines():
        if '"room_archived"' in line:
            entry = json.loads(line)
            found[(entry["room"], entry["pid"])] += 1
    return found


async def test_two_workers_on_a_cluster_archive_each_room_once(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    pool = await play_pool(1, (5, 15))
    prefix = f"ac{uuid.uuid4().hex[:6]}:"
    store = RedisEventStore(redis_cluster.url, cluster=True, prefix=prefix)
    archive = SqliteArchive(tmp_path / "data" / "archive.sqlite3")
    log = tmp_path / "server.log"
    try:
        await fill(store, pool, ROOMS)
        expected = {
            room_id(i): [
                *own_seats(pool[i % len(pool)], room_id(i))[0],
                *(e for game in pool[i % len(pool)].games.values() for e in game),
            ]
            for i in range(ROOMS)
        }
        args = [*FAST, "--redis-cluster", "--redis-prefix", prefix, "--workers", "2",
                "--data-dir", str(tmp_path / "data"), "--archive-after-s", "0",
                "--archive-sweep-s", "0.5"]  # fmt: skip
        server = ServerProcess(redis_url=redis_cluster.all_url, log_path=log, extra_args=args)
        server.start()
        try:
            deadline = time.monotonic() + 90
            # Claims are released as each room is done: none stays once the work is over (a
            # server stopped mid-room may leave one to run out, as a crash does). The work is
            # over when nothing is due or claimed for four sweeps in a row: a worker's sweep
            # that listed the rooms before the other archived them still claims them one by
            # one (finding each cleared), so a moment with neither is not yet the end.
            quiet_since = None
            while quiet_since is None or time.monotonic() - quiet_since < 2.0:
                assert time.monotonic() < deadline, "the workers did not archive every race"
                busy = await store.index_count(ARCHIVE_DUE_INDEX) or await store.index_count(
                    ARCHIVE_CLAIMS_INDEX
                )
                if busy:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = time.monotonic()
                await asyncio.sleep(0.1)
        finally:
            assert server.stop() == 0
        assert await archive.count() == ROOMS
        assert await store.streams("{") == []  # nothing of any race is left in the Cluster
        assert await store.index_count(ARCHIVE_CLAIMS_INDEX) == 0  # every claim released
        done = archived_by(log)
        rooms = Counter(room for room, _ in done.elements())
        assert set(rooms) == set(expected)
        assert max(rooms.values()) == 1  # each room archived by one worker, once
        # ...and read and encoded by that one alone: a second encoder's fenced delete would
        # find the streams gone and say so.
        assert '"archive_raced"' not in log.read_text()
        assert len({pid for _, pid in done}) == 2, "one worker archived every room"
        for rid, events in expected.items():
            read = await read_room(store, rid, archive)
            assert read is not None
            assert read.archived
            assert [e.data for e in read.events] == events
    finally:
        await archive.aclose()
        await store.aclose()
