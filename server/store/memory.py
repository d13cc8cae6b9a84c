"""The in-process event store: the embedded default when no Redis URL is given.

It is not a mock: it passes the same contract suites as the Redis store and stores the same
msgpack envelopes (so callers can never mutate what was stored); its wake-ups come straight
from ``append``, in this process, so none is ever lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from server.store.base import EventStore, validate_delete_at
from server.store.indexes import IndexEntry, check_index
from server.store.queues import QueueEntry, check_queue
from server.store.streams import (
    StoredEvent,
    check_stream,
    decode_run,
    validate_append,
    validate_read,
)
from server.store.wakeups import LocalSubscriptions, Subscription, WakeupHandler
from shared.errors import WrongExpectedVersion


class _Stream:
    """One stream's envelopes (version n at index n - 1) and when it expires."""

    __slots__ = ("deadline", "entries")

    def __init__(self) -> None:
        self.entries: list[bytes] = []
        self.deadline: float | None = None


class MemoryEventStore(EventStore):
    """Streams in a dict; one event loop; ``clock`` (seconds, monotonic) drives expiry."""

    def __init__(
        self, *, retention: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.retention = retention
        self._clock = clock
        self._streams: dict[str, _Stream] = {}
        self._subscriptions = LocalSubscriptions()
        self._indexes: dict[str, dict[str, tuple[int, bytes]]] = {}
        self._queues: dict[str, dict[str, tuple[int, bytes]]] = {}

    def _live(self, stream: str) -> _Stream | None:
        """The stream, or None if absent or expired (an expired stream is dropped here)."""
        entry = self._streams.get(stream)
        if entry is not None and entry.deadline is not None and entry.deadline <= self._clock():
            del self._streams[stream]
            return None
        return entry

    async def append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        payloads = validate_append(stream, events, expected_version)
        entry = self._live(stream)
        current = len(entry.entries) if entry is not None else 0
        if current != expected_version:
            end = expected_version + len(payloads)
            if entry is not None and entry.entries[expected_version:end] == payloads:
                return end  # these very events are there already: a retried append (Redis)
            raise WrongExpectedVersion(stream, expected_version, current)
        if entry is None:
            entry = self._streams[stream] = _Stream()
        entry.entries.extend(payloads)
        version = len(entry.entries)
        self._subscriptions.appended(stream, version, events)
        return version

    async def read(
        self, stream: str, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        validate_read(stream, after, limit)
        entry = self._live(stream)
        if entry is None:
            return []
        end = len(entry.entries) if limit is None else min(len(entry.entries), after + limit)
        rows = ((b"%d-0" % v, entry.entries[v - 1]) for v in range(after + 1, end + 1))
        return decode_run(stream, rows, after)

    async def last_version(self, stream: str) -> int:
        check_stream(stream)
        entry = self._live(stream)
        return len(entry.entries) if entry is not None else 0

    async def streams(self, prefix: str = "") -> list[str]:
        return sorted(
            name
            for name in list(self._streams)
            if name.startswith(prefix) and self._live(name) is not None
        )

    async def expire(self, stream: str, seconds: float) -> None:
        check_stream(stream)
        entry = self._live(stream)
        if entry is None:
            return
        if seconds <= 0:
            del self._streams[stream]
        else:
            entry.deadline = self._clock() + seconds

    async def delete_at(self, versions: Mapping[str, int]) -> bool:
        checked = validate_delete_at(versions)
        found = {stream: self._live(stream) for stream in checked}
        if any((len(e.entries) if e else 0) != checked[s] for s, e in found.items()):
            return False
        for stream, entry in found.items():
            if entry is not None:
                del self._streams[stream]
        return True

    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> Subscription:
        return self._subscriptions.subscribe(on_wakeup, on_gap)

    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        check_index(index, member)
        self._indexes.setdefault(index, {})[member] = (int(score), bytes(value))

    async def index_remove(self, index: str, member: str) -> None:
        check_index(index, member)
        self._indexes.get(index, {}).pop(member, None)

    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        check_index(index, member)
        found = self._indexes.get(index, {}).get(member)
        return None if found is None else IndexEntry(member, *found)

    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        check_index(index, "-")
        entries = [
            IndexEntry(member, score, value)
            for member, (score, value) in self._indexes.get(index, {}).items()
            if max_score is None or score <= max_score
        ]
        return sorted(entries, key=lambda e: (e.score, e.member))

    async def index_claim(
        self, index: str, member: str, score: int, value: bytes = b"", *, expired_at: int
    ) -> bool:
        check_index(index, member)
        entries = self._indexes.setdefault(index, {})
        held = entries.get(member)
        if held is not None and held[0] > expired_at:
            return False
        entries[member] = (int(score), bytes(value))
        return True

    async def index_count(self, index: str) -> int:
        check_index(index, "-")
        return len(self._indexes.get(index, {}))

    async def queue_join(self, queue: str, member: str, score: int, value: bytes = b"") -> bool:
        check_queue(queue, [member])
        waiting = self._queues.setdefault(queue, {})
        if member in waiting:
            return False
        waiting[member] = (int(score), bytes(value))
        return True

    async def queue_take(self, queue: str, members: Sequence[str]) -> bool:
        check_queue(queue, members)
        waiting = self._queues.get(queue, {})
        if not all(member in waiting for member in members):
            return False
        for member in members:
            del waiting[member]
        return True

    async def queue_leave(self, queue: str, member: str) -> bool:
        return await self.queue_take(queue, [member])

    async def queue_entries(self, queue: str) -> list[QueueEntry]:
        check_queue(queue, ["-"])
        entries = [QueueEntry(m, s, v) for m, (s, v) in self._queues.get(queue, {}).items()]
        return sorted(entries, key=lambda e: (e.score, e.member))

    async def ping(self) -> bool:
        return True

    async def aclose(self) -> None:
        await self._subscriptions.aclose()
