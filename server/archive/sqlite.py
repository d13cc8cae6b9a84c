"""The archive in SQLite (the standard library's sqlite3): one file in the data directory.

One connection in WAL mode, used from one thread of its own, so the event loop never waits on
the disk; several processes may share the file (SQLite's locks, a busy timeout), and the
primary key makes a second insert of a room a no-op.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from server.archive.base import Archive
from server.archive.record import PackedRoom
from shared.errors import ArchiveUnavailable

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS archived_rooms (
    room_id TEXT PRIMARY KEY,
    finished_at INTEGER NOT NULL,
    archived_at INTEGER NOT NULL,
    summary BLOB NOT NULL,
    record BLOB NOT NULL,
    events INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS archived_rooms_finished ON archived_rooms (finished_at);
"""

INSERT = (
    "INSERT INTO archived_rooms AS a VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (room_id) DO UPDATE SET finished_at = excluded.finished_at,"
    " archived_at = excluded.archived_at, summary = excluded.summary,"
    " record = excluded.record, events = excluded.events"
    " WHERE a.events < excluded.events"
)


class SqliteArchive(Archive):
    """Records in one SQLite file; ``path`` is created (with its directory) on first use."""

    def __init__(self, path: Path, *, busy_timeout_s: float = 10.0) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="archive-sqlite")
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at each checkpoint
            db.executescript(SCHEMA)
            self._db = db
        return self._db

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            try:
                return work(self._connect())
            except (sqlite3.Error, OSError) as exc:  # locked, disk full, unreadable file
                raise ArchiveUnavailable(f"the archive {self.path} failed: {exc}") from exc

        return await asyncio.get_running_loop().run_in_executor(self._thread, call)

    async def insert(self, packed: PackedRoom, now_ms: int) -> bool:
        def insert(db: sqlite3.Connection) -> bool:
            with db:
                cursor = db.execute(
                    INSERT,
                    (
                        packed.room_id,
                        packed.finished_at,
                        now_ms,
                        packed.summary,
                        packed.record,
                        packed.events,
                    ),
                )
                return cursor.rowcount == 1

        return await self._run(insert)

    async def select(self, room_id: str) -> PackedRoom | None:
        def select(db: sqlite3.Connection) -> PackedRoom | None:
            row = db.execute(
                "SELECT finished_at, summary, record, events FROM archived_rooms WHERE room_id = ?",
                (room_id,),
            ).fetchone()
            return (
                None
                if row is None
                else PackedRoom(room_id, row[0], bytes(row[1]), bytes(row[2]), row[3])
            )

        return await self._run(select)

    async def select_recent(self, limit: int, before_ms: int | None) -> list[tuple[str, bytes]]:
        def select(db: sqlite3.Connection) -> list[tuple[str, bytes]]:
            rows = db.execute(
                "SELECT room_id, summary FROM archived_rooms WHERE finished_at < ?"
                " ORDER BY finished_at DESC, room_id LIMIT ?",
                (before_ms if before_ms is not None else 2**62, limit),
            ).fetchall()
            return [(r[0], r[1]) for r in rows]

        return await self._run(select)

    async def has(self, room_id: str) -> bool:
        def has(db: sqlite3.Connection) -> bool:
            query = "SELECT 1 FROM archived_rooms WHERE room_id = ?"
            return db.execute(query, (room_id,)).fetchone() is not None

        return await self._run(has)

    async def count(self) -> int:
        return await self._run(
            lambda db: int(db.execute("SELECT count(*) FROM archived_rooms").fetchone()[0])
        )

    async def size_bytes(self) -> int:
        query = "SELECT coalesce(sum(length(summary) + length(record)), 0) FROM archived_rooms"
        return await self._run(lambda db: int(db.execute(query).fetchone()[0]))

    async def ping(self) -> bool:
        try:
            await self._run(lambda db: db.execute("SELECT 1").fetchone())
        except ArchiveUnavailable:
            return False
        return True

    def backup(self, target: Path) -> None:
        """A consistent copy of the archive while it serves (SQLite's online backup API)."""
        source = sqlite3.connect(self.path)
        try:
            with sqlite3.connect(target) as copy:
                source.backup(copy)
            copy.close()
        finally:
            source.close()

    async def aclose(self) -> None:
        def close(db: sqlite3.Connection) -> None:
            db.close()

        if self._db is not None:
            await self._run(close)
            self._db = None
        self._thread.shutdown(wait=True)
