"""The embedded durable store: every event, index and queue in one SQLite database in a data
directory (WAL), for a server without Redis. It passes the same contract suites as the memory
and Redis stores and stores the same msgpack envelopes.

One process owns the directory (``DataDir``: a kernel lock, released however the process ends),
so its wake-ups are in-process like the memory store's: delivered inside ``append``, never lost.

Durability. An append returns once its transaction is committed. In WAL mode a committed
transaction survives the server's crash (``kill -9``) whatever ``synchronous`` says: it is in
the log file, which the next open replays. ``synchronous=FULL`` (the default) also fsyncs the log
at every commit, so an acked move survives a power cut or a kernel crash too; ``NORMAL`` skips
that fsync (those crashes may lose the last commits, never corrupt the database) for a shorter
commit. Group commit (server/store/sqlite_thread.py) shares each fsync among all the writes
asked for meanwhile, so FULL costs a busy server latency, not throughput (docs/storage.md).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from server.store import sqlite_sql as sql
from server.store.base import EventStore, validate_delete_at
from server.store.data_dir import DataDir
from server.store.errors import StoreError
from server.store.indexes import IndexEntry, check_index
from server.store.queues import QueueEntry, check_queue
from server.store.sqlite_thread import SqliteThread
from server.store.streams import (
    StoredEvent,
    check_stream,
    decode_run,
    validate_append,
    validate_read,
)
from server.store.wakeups import LocalSubscriptions, Subscription, WakeupHandler


class SqliteEventStore(EventStore):
    """The store in ``data_dir``; ``clock`` (wall-clock seconds, so a deadline outlives a
    restart) drives expiry. Raises DataDirInUse if another process holds the directory."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        retention: float | None = None,
        synchronous: str = "FULL",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.retention = retention
        self._clock = clock
        self.data_dir = DataDir.take(data_dir)
        try:
            db = sql.connect(self.data_dir.database, synchronous)
        except BaseException:
            self.data_dir.release()
            raise
        self._thread = SqliteThread(db, housekeeping=self._purge)
        self._subscriptions = LocalSubscriptions()

    def _purge(self, db: sqlite3.Connection) -> None:
        sql.purge(db, self._clock())

    async def append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        payloads = validate_append(stream, events, expected_version)

        def job(db: sqlite3.Connection) -> tuple[int, bool]:
            return sql.append(db, stream, payloads, expected_version, self._clock())

        def appended(result: tuple[int, bool]) -> None:
            version, fresh = result
            if fresh:
                self._subscriptions.appended(stream, version, events)

        version, _ = await self._thread.write(job, committed=appended)
        return version

    async def read(
        self, stream: str, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        validate_read(stream, after, limit)
        now = self._clock()
        rows = await self._thread.read(lambda db: sql.read(db, stream, after, limit, now))
        return decode_run(stream, rows, after)

    async def read_many_raw(self, streams: Sequence[str]) -> dict[str, Any]:
        for stream in streams:
            check_stream(stream)
        now = self._clock()
        return await self._thread.read(lambda db: sql.read_many(db, streams, now))

    def decode_raw(self, stream: str, raw: Any) -> list[StoredEvent]:
        return decode_run(stream, raw, 0)

    async def last_version(self, stream: str) -> int:
        return (await self.last_versions([stream]))[stream]

    async def last_versions(self, streams: Sequence[str]) -> dict[str, int]:
        for stream in streams:
            check_stream(stream)
        now = self._clock()
        return await self._thread.read(lambda db: sql.last_versions(db, streams, now))

    async def streams(self, prefix: str = "") -> list[str]:
        now = self._clock()
        return await self._thread.read(lambda db: sql.names(db, prefix, now))

    async def expire(self, stream: str, seconds: float) -> None:
        check_stream(stream)
        await self._thread.write(lambda db: sql.expire(db, stream, seconds, self._clock()))

    async def delete_at(self, versions: Mapping[str, int]) -> bool:
        checked = validate_delete_at(versions)
        return await self._thread.write(lambda db: sql.delete_at(db, checked, self._clock()))

    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> Subscription:
        return self._subscriptions.subscribe(on_wakeup, on_gap)

    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        check_index(index, member)
        entry = (index, member, int(score), bytes(value))
        await self._thread.write(lambda db: sql.index_put(db, *entry))

    async def index_remove(self, index: str, member: str) -> None:
        check_index(index, member)
        await self._thread.write(lambda db: sql.index_remove(db, index, member))

    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        check_index(index, member)
        return await self._thread.read(lambda db: sql.index_get(db, index, member))

    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        check_index(index, "-")
        return await self._thread.read(lambda db: sql.index_range(db, index, max_score))

    async def index_claim(
        self, index: str, member: str, score: int, value: bytes = b"", *, expired_at: int
    ) -> bool:
        check_index(index, member)
        entry = (index, member, int(score), bytes(value), int(expired_at))
        return await self._thread.write(lambda db: sql.index_claim(db, *entry))

    async def index_count(self, index: str) -> int:
        check_index(index, "-")
        return await self._thread.read(lambda db: sql.index_count(db, index))

    async def queue_join(self, queue: str, member: str, score: int, value: bytes = b"") -> bool:
        check_queue(queue, [member])
        entry = (queue, member, int(score), bytes(value))
        return await self._thread.write(lambda db: sql.queue_join(db, *entry))

    async def queue_take(self, queue: str, members: Sequence[str]) -> bool:
        check_queue(queue, members)
        names = list(members)
        return await self._thread.write(lambda db: sql.queue_take(db, queue, names))

    async def queue_leave(self, queue: str, member: str) -> bool:
        return await self.queue_take(queue, [member])

    async def queue_entries(self, queue: str) -> list[QueueEntry]:
        check_queue(queue, ["-"])
        return await self._thread.read(lambda db: sql.queue_entries(db, queue))

    async def ping(self) -> bool:
        try:
            return bool(await self._thread.read(lambda db: db.execute("SELECT 1").fetchone()))
        except (StoreError, RuntimeError):  # closed, or the database failed
            return False

    async def aclose(self) -> None:
        """Close subscriptions, commit what was asked, close the database, free the directory."""
        await self._subscriptions.aclose()
        await self._thread.aclose()
        self.data_dir.release()
