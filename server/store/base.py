"""The event store contract (docs/architecture.md, "The event store"), shared by both backends.

Streams hold events at versions 1, 2, 3, ...; appends state the version they expect, so two
writers can never both extend the same version. Every append also publishes a wake-up on its
stream's group (the hash tag: the room), which one subscription per process receives for all
the groups it follows; indexes (sorted members with a value) hold what must be found without
reading every stream: the room directory, due timers, seats.
"""

from __future__ import annotations

import abc
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, NamedTuple, Self

import structlog

from server.store import codec
from shared.errors import CorruptEvent, ServerError

_log = structlog.get_logger("server.store")


class StoredEvent(NamedTuple):
    """One event as the store returns it: where it lives and what was appended.

    An immutable tuple rather than a frozen dataclass: one is built for every event read (a
    rebuild reads 200,000), and a frozen dataclass's ``__init__`` cost several times more.
    """

    stream: str
    version: int
    data: dict[str, Any]


class CorruptEntry(CorruptEvent):
    """A stored entry that cannot be decoded; names the stream and the entry so it can be found."""

    def __init__(self, stream: str, entry: str, why: str) -> None:
        super().__init__(f"stream {stream!r} entry {entry}: {why}")
        self.stream = stream
        self.entry = entry
        self.why = why


class StoreUnavailable(ServerError):
    """The store's backend cannot be reached; the caller may retry later."""

    code = "store_unavailable"


class NotReplicated(ServerError):
    """An append reached the primary but fewer replicas than asked confirmed it in time
    (``--ack-after-replicas``): it may still count, but it could be lost with the primary."""

    code = "not_replicated"

    def __init__(self, stream: str, version: int, replicas: int, wanted: int) -> None:
        super().__init__(
            f"stream {stream!r} version {version}: {replicas} of {wanted} replicas confirmed it"
        )
        self.stream = stream
        self.version = version
        self.replicas = replicas
        self.wanted = wanted


class Wakeup(NamedTuple):
    """A stream reached ``version``. ``events`` are the appended events (the last
    ``len(events)`` versions) when the wake-up carries them: always for an append made through
    this very store object, and from elsewhere when the backend sends them along (Redis does).
    None: read the stream. A subscriber folds them only if they follow on from its fold."""

    stream: str
    version: int
    events: Sequence[Mapping[str, Any]] | None = None


WakeupHandler = Callable[[Wakeup], None]
"""What a subscription calls for each wake-up; it must not block (it runs in the store's task,
or inside ``append`` for this process's own appends)."""


def stream_group(stream: str) -> str:
    """The group whose subscribers a stream's appends wake: its hash tag (``{room}``), else
    the whole name. A group lives in one Redis Cluster slot, so its wake-ups do too."""
    start = stream.find("{")
    if start >= 0:
        end = stream.find("}", start + 1)
        if end > start + 1:
            return stream[start + 1 : end]
    return stream


class IndexEntry(NamedTuple):
    """One member of an index with its score (an integer, e.g. a time) and a small value."""

    member: str
    score: int
    value: bytes


class Subscription(abc.ABC):
    """One process's wake-ups for every group it follows, on a bounded number of connections
    (Redis: one per node), however many groups. A wake-up may be lost (a reconnect, a full
    buffer): ``on_gap`` then tells the subscriber to catch up from the streams themselves."""

    def __init__(self, on_wakeup: WakeupHandler, on_gap: Callable[[], None] | None) -> None:
        self.on_wakeup = on_wakeup
        self.on_gap = on_gap if on_gap is not None else (lambda: None)
        self.groups: set[str] = set()
        self.closed = False

    async def subscribe(self, groups: Iterable[str]) -> None:
        """Receive the wake-ups of ``groups`` from now on (those already followed stay)."""
        new = [g for g in groups if g not in self.groups]
        if self.closed:
            raise RuntimeError("this subscription is closed")
        if new:
            self.groups.update(new)
            await self._subscribe(new)

    async def unsubscribe(self, groups: Iterable[str]) -> None:
        old = [g for g in groups if g in self.groups]
        if old and not self.closed:
            self.groups.difference_update(old)
            await self._unsubscribe(old)

    async def aclose(self) -> None:
        """Stop; idempotent."""
        if self.closed:
            return
        self.closed = True
        await self._shutdown()

    def deliver(self, wakeup: Wakeup) -> None:
        """Hand one wake-up to the subscriber if it follows the stream's group."""
        if not self.closed and stream_group(wakeup.stream) in self.groups:
            self.on_wakeup(wakeup)

    @abc.abstractmethod
    async def _subscribe(self, groups: list[str]) -> None: ...

    @abc.abstractmethod
    async def _unsubscribe(self, groups: list[str]) -> None: ...

    @abc.abstractmethod
    async def _shutdown(self) -> None: ...


ErrorHandler = Callable[[CorruptEntry], None]
"""What a follower calls when one of its streams holds a corrupt entry."""


class RawEntry(NamedTuple):
    """An entry as a backend holds it, before decoding; ``version`` is None if the id is bad."""

    stream: str
    entry: str
    version: int | None
    payload: bytes | None


def decode_entry(raw: RawEntry, expected: int) -> StoredEvent:
    """Decode the entry that should hold version ``expected``, or raise CorruptEntry naming
    its stream and entry id: versions have no gaps, so a jump means the stream was tampered."""
    if raw.version is None:
        raise CorruptEntry(raw.stream, raw.entry, "the entry id is not <version>-0")
    if raw.version != expected:
        raise CorruptEntry(raw.stream, raw.entry, f"a gap in versions: expected {expected}")
    try:
        data = codec.decode(raw.payload)
    except codec.DecodeError as exc:
        raise CorruptEntry(raw.stream, raw.entry, str(exc)) from exc
    return StoredEvent(raw.stream, raw.version, data)


def check_stream(stream: object) -> str:
    if not isinstance(stream, str) or not stream:
        raise ValueError(f"a stream name is a non-empty str, not {stream!r}")
    return stream


def check_version(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} is an int >= 0, not {value!r}")
    return value


def log_corrupt(error: CorruptEntry) -> None:
    """The default ErrorHandler: the follower drops the stream and says so in the log."""
    _log.error("corrupt_event", stream=error.stream, entry=error.entry, reason=error.why)


class Follower(abc.ABC):
    """An async iterator of StoredEvent over several streams: catch up, then wait for more.

    Each stream's events come in version order. A stream with a corrupt entry is dropped from
    the follower (its earlier events are still delivered), the error goes to ``on_error`` and
    is kept in ``failed``; the other streams go on. ``add`` of a failed stream follows it again.
    """

    def __init__(self, positions: Mapping[str, int], *, on_error: ErrorHandler | None) -> None:
        self._cursor: dict[str, int] = {}  # last version fetched, per followed stream
        self._delivered: dict[str, int] = {}  # last version handed to the consumer
        self._failed: dict[str, CorruptEntry] = {}
        self._buffer: deque[StoredEvent] = deque()
        self._closed = False
        self._on_error = on_error if on_error is not None else log_corrupt
        for stream, after in positions.items():
            self._start(stream, after)

    def _start(self, stream: str, after: int) -> None:
        check_stream(stream)
        check_version(after, "after")
        self._cursor[stream] = after
        self._delivered[stream] = after
        self._failed.pop(stream, None)

    @property
    def streams(self) -> list[str]:
        """The streams followed now (not those dropped for a corrupt entry)."""
        return list(self._cursor)

    @property
    def positions(self) -> dict[str, int]:
        """The last version delivered per followed stream: where a new follower would resume."""
        return {stream: self._delivered[stream] for stream in self._cursor}

    @property
    def failed(self) -> dict[str, CorruptEntry]:
        """Streams dropped because of a corrupt entry, with the error."""
        return dict(self._failed)

    @property
    def closed(self) -> bool:
        return self._closed

    def add(self, stream: str, after: int = 0) -> None:
        """Follow one more stream from ``after``; a stream already followed is left as it is."""
        if self._closed:
            raise RuntimeError("this follower is closed")
        if stream in self._cursor:
            return
        self._start(stream, after)
        self._changed()

    def discard(self, stream: str) -> None:
        """Stop following a stream; its events not yet delivered are dropped."""
        if self._cursor.pop(stream, None) is None:
            return
        self._delivered.pop(stream, None)
        self._buffer = deque(event for event in self._buffer if event.stream != stream)
        self._changed()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> StoredEvent:
        while True:
            if self._buffer:
                event = self._buffer.popleft()
                self._delivered[event.stream] = event.version
                return event
            if self._closed:
                raise StopAsyncIteration
            self._accept(await self._fetch())

    async def aclose(self) -> None:
        """Stop: the iterator ends, the backend connection is given back; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._buffer.clear()
        self._changed()
        await self._shutdown()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _accept(self, entries: Iterable[RawEntry]) -> None:
        for raw in entries:
            cursor = self._cursor.get(raw.stream)
            if cursor is None or (raw.version is not None and raw.version <= cursor):
                continue  # discarded, failed, or already fetched
            try:
                event = decode_entry(raw, cursor + 1)
            except CorruptEntry as error:
                del self._cursor[raw.stream]
                self._failed[raw.stream] = error
                self._on_error(error)
                continue
            self._cursor[raw.stream] = event.version
            self._buffer.append(event)

    @abc.abstractmethod
    async def _fetch(self) -> list[RawEntry]:
        """Entries after the cursors; waits (without polling) when there are none.

        May return an empty list when woken by ``add``, ``discard`` or ``aclose``.
        """

    @abc.abstractmethod
    def _changed(self) -> None:
        """The followed set changed or the follower closed: wake a waiting ``_fetch``."""

    @abc.abstractmethod
    async def _shutdown(self) -> None:
        """Release what the follower holds; called once, by ``aclose``."""


class EventStore(abc.ABC):
    """Append-only streams of events with optimistic concurrency; see docs/storage.md."""

    retention: float | None = None
    """Seconds a finished stream is kept after ``retire``; None keeps it forever."""

    @abc.abstractmethod
    async def append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        """Append events if the stream is at ``expected_version``; return the new version.

        Raises WrongExpectedVersion (appending nothing) when the stream is elsewhere, and
        ValueError for an empty ``events``. ``expected_version=0`` creates the stream.
        """

    @abc.abstractmethod
    async def read(
        self, stream: str, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with versions above ``after``, oldest first, at most ``limit`` of them."""

    async def read_many(self, streams: Sequence[str]) -> dict[str, list[StoredEvent]]:
        """Every event of each stream (none for a missing one), keyed by stream name.

        For a rebuild, which reads every stream at once: a backend may do it in one round
        trip. Raises CorruptEntry for the first bad entry, like ``read``.
        """
        return {stream: await self.read(stream) for stream in streams}

    async def read_many_raw(self, streams: Sequence[str]) -> dict[str, Any]:
        """``read_many`` with the decoding left to ``decode_raw``, one stream at a time: a
        rebuild decodes in two processes. Opaque values; this default decodes at once."""
        return await self.read_many(streams)

    def decode_raw(self, stream: str, raw: Any) -> list[StoredEvent]:
        """The events of one value of ``read_many_raw``; CorruptEntry for a bad entry."""
        events: list[StoredEvent] = raw
        return events

    @abc.abstractmethod
    async def last_version(self, stream: str) -> int:
        """The stream's version: 0 for a stream that does not exist."""

    @abc.abstractmethod
    def follow(
        self, positions: Mapping[str, int], *, on_error: ErrorHandler | None = None
    ) -> Follower:
        """Follow streams from the last version already seen (0 = from the start)."""

    async def last_versions(self, streams: Sequence[str]) -> dict[str, int]:
        """``last_version`` of many streams (Redis: one pipelined round trip), for catch-up."""
        return {stream: await self.last_version(stream) for stream in streams}

    @abc.abstractmethod
    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> Subscription:
        """A subscription to wake-ups (subscribe it to groups); one per process is enough."""

    @abc.abstractmethod
    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        """Set ``member``'s score and value in ``index`` (created on first use)."""

    @abc.abstractmethod
    async def index_remove(self, index: str, member: str) -> None:
        """Remove ``member`` from ``index``; nothing if it is not there."""

    @abc.abstractmethod
    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        """``member`` of ``index``, or None."""

    @abc.abstractmethod
    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        """Members with a score <= ``max_score`` (all when None), by score then member."""

    @abc.abstractmethod
    async def index_count(self, index: str) -> int:
        """How many members ``index`` holds, without reading them."""

    @abc.abstractmethod
    async def streams(self, prefix: str = "") -> list[str]:
        """Names of existing streams that start with ``prefix``, sorted."""

    @abc.abstractmethod
    async def expire(self, stream: str, seconds: float) -> None:
        """Delete the stream after ``seconds`` (at once if <= 0); for finished streams only."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """True if the store can serve now; never raises."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Close open followers and release connections."""

    async def retire(self, stream: str) -> None:
        """A stream is finished: apply the retention setting to it (nothing if None)."""
        if self.retention is not None:
            await self.expire(stream, self.retention)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def validate_append(
    stream: str, events: Sequence[Mapping[str, Any]], expected_version: int
) -> list[bytes]:
    """Check an append's arguments and encode its events, before anything is written."""
    check_stream(stream)
    check_version(expected_version, "expected_version")
    if isinstance(events, Mapping | str | bytes):
        raise TypeError("events is a sequence of event mappings")
    payloads = [codec.encode(event) for event in events]
    if not payloads:
        raise ValueError("an append needs at least one event")
    return payloads


def check_index(index: object, member: object) -> None:
    if not isinstance(index, str) or not index or "{" in index or "}" in index:
        raise ValueError(f"an index name is a non-empty str without braces, not {index!r}")
    if not isinstance(member, str) or not member:
        raise ValueError(f"an index member is a non-empty str, not {member!r}")


def validate_read(after: int, limit: int | None) -> None:
    check_version(after, "after")
    if limit is not None:
        check_version(limit, "limit")


def decode_run(entries: Iterable[RawEntry], after: int) -> list[StoredEvent]:
    """Decode entries read after version ``after``, checking they follow on without a gap."""
    return [decode_entry(raw, after + index) for index, raw in enumerate(entries, 1)]
