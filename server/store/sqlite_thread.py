"""The embedded store's one database thread: every SQLite call runs there, in order.

``sqlite3`` blocks; a commit in ``synchronous=FULL`` waits for an fsync (milliseconds on a
disk). On the event loop that would stall every connection, so each call is handed to a
single-thread executor: one thread, one connection, jobs in the order they were asked for.

Writes are group-committed: the writes asked for while the thread was busy go in the next
transaction together, each in a savepoint of its own (its own result, its own error), so one
fsync acks them all. A lone write is committed at once; under load the batches grow by
themselves, and the disk's fsync rate bounds batches per second, not moves per second.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import structlog

from server.store.errors import StoreError

T = TypeVar("T")

Job = Callable[[sqlite3.Connection], Any]
Committed = Callable[[Any], None]
"""Called on the event loop with a write's result once its transaction is committed, before
its caller hears of it (the store delivers its wake-ups there)."""

log = structlog.get_logger("server.store")

MAX_BATCH = 512
"""Most writes one transaction commits; the rest wait for the next one."""


class SqliteThread:
    """One connection on one thread; ``read`` and ``write`` from the event loop."""

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        housekeeping: Job | None = None,
        housekeeping_every: int = 1000,
    ) -> None:
        self._db = db
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="sqlite")
        self._lock = threading.Lock()
        self._pending: list[tuple[Job, asyncio.Future[Any], Committed | None]] = []
        self._scheduled = False
        self._closed = False
        self._housekeeping = housekeeping
        self._housekeeping_every = housekeeping_every
        self._batches = 0

    async def read(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``job`` on the thread, outside any write's transaction."""
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, _mapped, job, self._db)

    async def write(
        self, job: Callable[[sqlite3.Connection], T], committed: Committed | None = None
    ) -> T:
        """Run ``job`` in the next transaction; return its result once that is committed
        (durable), or raise its own error (its savepoint rolled back, the others kept)."""
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            self._pending.append((job, future, committed))
            start = not self._scheduled
            self._scheduled = True
        if start:
            self._executor.submit(self._commit, loop)
        return await future

    def _commit(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the thread: one transaction for what is pending, then answer on the loop. What
        arrives meanwhile goes in a job queued behind the reads asked for meanwhile."""
        with self._lock:
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            if not batch:  # taken by the close before this job ran
                self._scheduled = False
                return
        db = self._db
        results: list[tuple[bool, Any]] = []
        try:
            db.execute("BEGIN IMMEDIATE")
            for job, _, _ in batch:
                db.execute("SAVEPOINT one")
                try:
                    results.append((True, job(db)))
                except Exception as error:  # the job's own failure: only its writes go
                    if not db.in_transaction:  # SQLite undid the whole batch (disk full, I/O)
                        raise
                    db.execute("ROLLBACK TO one")
                    results.append((False, _foreign(error)))
                db.execute("RELEASE one")
            self._keep_house(db)
            db.execute("COMMIT")
        except Exception as error:  # the transaction itself failed (disk full, I/O)
            with contextlib.suppress(sqlite3.Error):
                if db.in_transaction:
                    db.execute("ROLLBACK")
            failure = StoreError(f"SQLite: {error}")
            results = [(False, failure)] * len(batch)
            log.error("sqlite_commit_failed", error=str(error), writes=len(batch))
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_answer, batch, results)
        with self._lock:
            again = self._scheduled = bool(self._pending)
        if again:
            self._executor.submit(self._commit, loop)

    def _keep_house(self, db: sqlite3.Connection) -> None:
        """Every so many batches, the housekeeping job (expired streams) in a savepoint of
        its own: its failure costs the batch nothing."""
        self._batches += 1
        if self._housekeeping is None or self._batches % self._housekeeping_every:
            return
        db.execute("SAVEPOINT house")
        try:
            self._housekeeping(db)
        except sqlite3.Error as error:
            db.execute("ROLLBACK TO house")
            log.warning("sqlite_housekeeping_failed", error=str(error))
        db.execute("RELEASE house")

    def run_now(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``job`` on the thread and wait for it, off the event loop (start and tests)."""
        return self._executor.submit(_mapped, job, self._db).result()

    async def aclose(self) -> None:
        """Commit the writes asked for, then close the connection (SQLite checkpoints the log
        into the database) and the thread."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close, loop)
        self._executor.shutdown(wait=False)

    def _close(self, loop: asyncio.AbstractEventLoop) -> None:
        while self._pending:
            self._commit(loop)
        self._db.close()


def _mapped(job: Callable[[sqlite3.Connection], T], db: sqlite3.Connection) -> T:
    try:
        return job(db)
    except sqlite3.Error as error:
        raise StoreError(f"SQLite: {error}") from error


def _foreign(error: Exception) -> Exception:
    """sqlite3's errors stop here: the caller sees the store's own."""
    if isinstance(error, sqlite3.Error):
        mapped = StoreError(f"SQLite: {error}")
        mapped.__cause__ = error
        return mapped
    return error


def _answer(
    batch: list[tuple[Job, asyncio.Future[Any], Committed | None]],
    results: list[tuple[bool, Any]],
) -> None:
    """On the loop: each caller its result or error, after its ``committed`` hook."""
    for (_, future, committed), (ok, value) in zip(batch, results, strict=True):
        if ok and committed is not None:
            committed(value)
        if future.done():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
