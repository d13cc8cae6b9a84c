"""What the SQLite store adds to the contracts: everything survives a close, a reopen and a
SIGKILL of its process, and one process at a time holds its data directory."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from server.store import DataDirError, DataDirInUse, SqliteEventStore, StoreError, sqlite_sql
from tests.server.store.conftest import FakeClock


async def test_everything_is_there_again_after_a_reopen(tmp_path: Path) -> None:
    clock = FakeClock()
    store = SqliteEventStore(tmp_path, clock=clock)
    await store.append("{r1}:room", [{"type": "a"}, {"type": "b"}], expected_version=0)
    await store.append("{r1}:game:ann", [{"type": "c"}], expected_version=0)
    await store.append("{r2}:room", [{"type": "d"}], expected_version=0)
    await store.expire("{r2}:room", 30)
    await store.index_put("rooms", "r1", 5, b"summary")
    await store.queue_join("mm:swiss:2:rated", "ann", 1500, b"v")
    await store.aclose()

    again = SqliteEventStore(tmp_path, clock=clock)
    try:
        assert [e.data for e in await again.read("{r1}:room")] == [{"type": "a"}, {"type": "b"}]
        assert await again.last_versions(["{r1}:room", "{r1}:game:ann"]) == {
            "{r1}:room": 2,
            "{r1}:game:ann": 1,
        }
        assert await again.streams() == ["{r1}:game:ann", "{r1}:room", "{r2}:room"]
        clock.now += 30  # the deadline is kept: it is wall-clock time, not a process's timer
        assert await again.streams() == ["{r1}:game:ann", "{r1}:room"]
        assert (await again.index_get("rooms", "r1")) == ("r1", 5, b"summary")
        assert [e.member for e in await again.queue_entries("mm:swiss:2:rated")] == ["ann"]
        assert await again.append("{r1}:room", [{"type": "e"}], expected_version=2) == 3
    finally:
        await again.aclose()


async def test_expired_streams_are_purged_from_the_disk(tmp_path: Path) -> None:
    clock = FakeClock()
    store = SqliteEventStore(tmp_path, clock=clock)
    try:
        await store.append("done", [{"type": "x"}], expected_version=0)
        await store.expire("done", 10)
        clock.now += 10
        assert await store.append("other", [{"type": "y"}], expected_version=0) == 1
        removed = store._thread.run_now(lambda db: sqlite_sql.purge(db, clock.now))
        assert removed == 1
        rows = store._thread.run_now(
            lambda db: db.execute("SELECT count(*) FROM events").fetchone()
        )
        assert rows == (1,)
    finally:
        await store.aclose()


async def test_a_second_store_on_a_held_directory_is_refused(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "data")
    try:
        with pytest.raises(DataDirInUse, match=rf"in use by another server \(pid {os.getpid()}\)"):
            SqliteEventStore(tmp_path / "data")
    finally:
        await store.aclose()
    again = SqliteEventStore(tmp_path / "data")  # closed: free again
    await again.aclose()


def test_a_directory_that_cannot_be_made_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(DataDirError, match="cannot use the data directory"):
        SqliteEventStore(tmp_path / "file" / "data")
    assert issubclass(DataDirError, StoreError)


@pytest.mark.e2e
def test_every_acked_append_survives_a_sigkill_and_the_directory_is_free_at_once(
    tmp_path: Path,
) -> None:
    """A child process appends and says which appends were acked; SIGKILL, no goodbye. The
    kernel drops its lock, and the log holds every acked event."""
    child = textwrap.dedent(
        f"""
        import asyncio, sys
        from server.store import SqliteEventStore

        async def main():
            store = SqliteEventStore({str(tmp_path)!r})
            for n in range(200):
                await asyncio.gather(*(
                    store.append(f"{{{{r{{k}}}}}}:game", [{{"n": n}}], expected_version=n)
                    for k in range(5)
                ))
                print(n, flush=True)
            await asyncio.Event().wait()

        asyncio.run(main())
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, bufsize=1
    )
    try:
        assert process.stdout is not None
        acked = -1
        for line in process.stdout:
            acked = int(line)
            if acked == 120:
                break
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=10)
    assert acked == 120

    async def check() -> None:
        store = SqliteEventStore(tmp_path)  # no DataDirInUse: the kernel dropped the lock
        try:
            for k in range(5):
                events = await store.read(f"{{r{k}}}:game")
                assert len(events) >= acked + 1
                assert [e.data["n"] for e in events] == list(range(len(events)))
        finally:
            await store.aclose()

    asyncio.run(check())


async def test_a_failed_write_is_a_store_error_and_its_batch_mates_still_commit(
    tmp_path: Path,
) -> None:
    """Writes asked for together share a transaction, each in its own savepoint: SQLite's own
    error comes out as StoreError for that write alone, and the others are kept."""
    store = SqliteEventStore(tmp_path)
    try:
        bad = store._thread.write(lambda db: db.execute("INSERT INTO no_such_table VALUES (1)"))
        results = await asyncio.gather(
            store.append("a", [{"type": "x"}], expected_version=0),
            bad,
            store.append("b", [{"type": "y"}], expected_version=0),
            return_exceptions=True,
        )
        assert results[0] == 1
        assert results[2] == 1
        assert isinstance(results[1], StoreError)
        assert not isinstance(results[1], sqlite3.Error)
        assert "no such table" in str(results[1])
        assert await store.streams() == ["a", "b"]
    finally:
        await store.aclose()
    assert await store.ping() is False  # closed


async def test_a_full_disk_is_a_store_error_and_nothing_half_written(tmp_path: Path) -> None:
    """SQLite's page limit stands in for a full disk: the append fails as StoreError, writes
    none of its events, and the store appends again once there is room."""
    store = SqliteEventStore(tmp_path)
    try:
        await store.append("s", [{"type": "x"}], expected_version=0)
        pages = store._thread.run_now(lambda db: db.execute("PRAGMA page_count").fetchone()[0])
        store._thread.run_now(lambda db: db.execute(f"PRAGMA max_page_count={pages}"))
        big = [{"type": "y", "blob": bytes(2000)} for _ in range(50)]
        with pytest.raises(StoreError, match="full"):
            await store.append("s", big, expected_version=1)
        assert await store.last_version("s") == 1
        assert len(await store.read("s")) == 1
        store._thread.run_now(lambda db: db.execute("PRAGMA max_page_count=1073741823"))
        assert await store.append("s", big, expected_version=1) == 51
    finally:
        await store.aclose()
