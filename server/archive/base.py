"""The archive's interface: a finished room's record, written once and read back.

Every backend stores the packed form (``server.archive.record``) under the room id, with
insert-if-absent: two processes archiving one room write it once, and archiving again is a
no-op. Streams only grow, so a record with more events than the one stored (a rematch offered
after the first write) replaces it, and never the reverse. Any failure of the backend is
``ArchiveUnavailable``; a record that does not decode is ``CorruptRecord`` for that room alone.
"""

from __future__ import annotations

import abc
from types import TracebackType
from typing import Any

import msgpack

from server.archive.record import ArchivedRoom, PackedRoom, pack, unpack
from shared.errors import CorruptRecord


class Archive(abc.ABC):
    """Finished rooms kept for good; see docs/storage.md, "Tiers"."""

    async def put(self, room: ArchivedRoom, *, now_ms: int) -> bool:
        """Write the room's record unless one as long is there; True if this call wrote it."""
        return await self.insert(pack(room), now_ms)

    async def get(self, room_id: str) -> ArchivedRoom | None:
        """The room's record; None if it was never archived."""
        packed = await self.select(room_id)
        return None if packed is None else unpack(packed)

    async def recent(
        self, *, limit: int = 100, before_ms: int | None = None
    ) -> list[dict[str, Any]]:
        """The summaries of the latest finished rooms, newest first (at most ``limit``, each
        finished before ``before_ms`` when given): a room list or a profile looking back."""
        rows = await self.select_recent(limit, before_ms)
        summaries = []
        for room_id, packed in rows:
            try:
                summary = msgpack.unpackb(packed)
            except (ValueError, msgpack.UnpackException) as exc:
                raise CorruptRecord(room_id, f"summary: {exc}") from exc
            summaries.append(summary)
        return summaries

    @abc.abstractmethod
    async def insert(self, packed: PackedRoom, now_ms: int) -> bool:
        """Insert if no record has the room id, or replace one with fewer events; True if
        this call wrote."""

    @abc.abstractmethod
    async def select(self, room_id: str) -> PackedRoom | None: ...

    @abc.abstractmethod
    async def select_recent(self, limit: int, before_ms: int | None) -> list[tuple[str, bytes]]: ...

    @abc.abstractmethod
    async def has(self, room_id: str) -> bool: ...

    @abc.abstractmethod
    async def count(self) -> int:
        """How many rooms are archived."""

    @abc.abstractmethod
    async def size_bytes(self) -> int:
        """The bytes the records take (summaries and records, without the backend's overhead)."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """True if the archive answers; never raises."""

    @abc.abstractmethod
    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Archive:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
