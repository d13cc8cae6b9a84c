"""The archive in PostgreSQL, for a deployment of many processes or machines (``--archive-url``).

psycopg 3 in its asyncio mode, with psycopg_pool's pool: the primary key and ``ON CONFLICT DO
NOTHING`` make two processes archiving one room write it once. The schema is made on first use.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg
import psycopg.errors
from psycopg_pool import AsyncConnectionPool

from server.archive.base import Archive
from server.archive.record import PackedRoom
from shared.errors import ArchiveUnavailable

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS archived_rooms (
    room_id TEXT PRIMARY KEY,
    finished_at BIGINT NOT NULL,
    archived_at BIGINT NOT NULL,
    summary BYTEA NOT NULL,
    record BYTEA NOT NULL,
    events INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS archived_rooms_finished ON archived_rooms (finished_at);
"""

INSERT = (
    "INSERT INTO archived_rooms AS a VALUES (%s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (room_id) DO UPDATE SET finished_at = excluded.finished_at,"
    " archived_at = excluded.archived_at, summary = excluded.summary,"
    " record = excluded.record, events = excluded.events"
    " WHERE a.events < excluded.events"
)


class PostgresArchive(Archive):
    """Records in one PostgreSQL table; connections from a small pool opened on first use."""

    def __init__(self, url: str, *, max_connections: int = 8, timeout_s: float = 5.0) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._pool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=timeout_s,
            open=False,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout_s))},
            reconnect_timeout=timeout_s,
        )
        self._opened = False
        self._schema = False
        self._setup = asyncio.Lock()

    async def _ready(self) -> None:
        """Open the pool and make the table, once (again after a failure)."""
        async with self._setup:
            if not self._opened:
                await self._pool.open(wait=False)
                self._opened = True
            if not self._schema:
                async with self._pool.connection() as conn:
                    # Another process may make it at the same moment.
                    with contextlib.suppress(psycopg.errors.UniqueViolation):
                        await conn.execute(SCHEMA)
                self._schema = True

    async def _run(self, work: Callable[[psycopg.AsyncConnection], Awaitable[T]]) -> T:
        try:
            if not self._schema:
                await self._ready()
            async with self._pool.connection() as conn:
                return await work(conn)
        except (psycopg.Error, OSError) as exc:  # psycopg_pool's PoolTimeout is a psycopg.Error
            raise ArchiveUnavailable(f"the archive database failed: {exc}") from exc

    async def insert(self, packed: PackedRoom, now_ms: int) -> bool:
        async def insert(conn: psycopg.AsyncConnection) -> bool:
            cursor = await conn.execute(
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
        async def select(conn: psycopg.AsyncConnection) -> PackedRoom | None:
            cursor = await conn.execute(
                "SELECT finished_at, summary, record, events FROM archived_rooms"
                " WHERE room_id = %s",
                (room_id,),
            )
            row = await cursor.fetchone()
            return (
                None
                if row is None
                else PackedRoom(room_id, row[0], bytes(row[1]), bytes(row[2]), row[3])
            )

        return await self._run(select)

    async def select_recent(self, limit: int, before_ms: int | None) -> list[tuple[str, bytes]]:
        async def select(conn: psycopg.AsyncConnection) -> list[tuple[str, bytes]]:
            cursor = await conn.execute(
                "SELECT room_id, summary FROM archived_rooms WHERE finished_at < %s"
                " ORDER BY finished_at DESC, room_id LIMIT %s",
                (before_ms if before_ms is not None else 2**62, limit),
            )
            return [(r[0], bytes(r[1])) for r in await cursor.fetchall()]

        return await self._run(select)

    async def has(self, room_id: str) -> bool:
        async def has(conn: psycopg.AsyncConnection) -> bool:
            query = "SELECT 1 FROM archived_rooms WHERE room_id = %s"
            return await (await conn.execute(query, (room_id,))).fetchone() is not None

        return await self._run(has)

    async def count(self) -> int:
        async def count(conn: psycopg.AsyncConnection) -> int:
            row = await (await conn.execute("SELECT count(*) FROM archived_rooms")).fetchone()
            return int(row[0]) if row else 0

        return await self._run(count)

    async def size_bytes(self) -> int:
        async def size(conn: psycopg.AsyncConnection) -> int:
            query = "SELECT coalesce(sum(length(summary) + length(record)), 0) FROM archived_rooms"
            row = await (await conn.execute(query)).fetchone()
            return int(row[0]) if row else 0

        return await self._run(size)

    async def ping(self) -> bool:
        async def ping(conn: psycopg.AsyncConnection) -> None:
            await conn.execute("SELECT 1")

        try:
            await self._run(ping)
        except ArchiveUnavailable:
            return False
        return True

    async def aclose(self) -> None:
        await self._pool.close()
