"""The streams capability: append-only event streams with optimistic concurrency.

Streams hold events at versions 1, 2, 3, ...; an append states the version it expects, so two
writers can never both extend the same version. Entries are decoded here, once, for every
backend (``decode_run``).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from server.store import codec
from server.store.errors import CorruptEntry


class StoredEvent(NamedTuple):
    """One event as the store returns it: where it lives and what was appended.

    An immutable tuple rather than a frozen dataclass: one is built for every event read (a
    rebuild reads 200,000), and a frozen dataclass's ``__init__`` cost several times more.
    """

    stream: str
    version: int
    data: dict[str, Any]


class EventStreams(abc.ABC):
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
        raw = await self.read_many_raw(streams)
        return {stream: self.decode_raw(stream, raw[stream]) for stream in streams}

    async def read_many_raw(self, streams: Sequence[str]) -> dict[str, Any]:
        """``read_many`` with the decoding left to ``decode_raw``, one stream at a time: a
        rebuild decodes in two processes. Opaque values; this default decodes at once."""
        return {stream: await self.read(stream) for stream in streams}

    def decode_raw(self, stream: str, raw: Any) -> list[StoredEvent]:
        """The events of one value of ``read_many_raw``; CorruptEntry for a bad entry."""
        events: list[StoredEvent] = raw
        return events

    @abc.abstractmethod
    async def last_version(self, stream: str) -> int:
        """The stream's version: 0 for a stream that does not exist."""

    async def last_versions(self, streams: Sequence[str]) -> dict[str, int]:
        """``last_version`` of many streams (Redis: one pipelined round trip), for catch-up."""
        return {stream: await self.last_version(stream) for stream in streams}

    @abc.abstractmethod
    async def streams(self, prefix: str = "") -> list[str]:
        """Names of existing streams that start with ``prefix``, sorted."""

    @abc.abstractmethod
    async def expire(self, stream: str, seconds: float) -> None:
        """Delete the stream after ``seconds`` (at once if <= 0); for finished streams only."""

    @abc.abstractmethod
    async def delete_at(self, versions: Mapping[str, int]) -> bool:
        """Delete every stream of ``versions`` at once if each is still at its version (0: the
        stream does not exist), else delete nothing; True if deleted. The fence of whoever
        copied the streams elsewhere: nothing appended after the copy is ever deleted unseen.
        The streams are of one group (one hash tag: one Redis Cluster slot), else ValueError.
        """

    async def retire(self, stream: str) -> None:
        """A stream is finished: apply the retention setting to it (nothing if None)."""
        if self.retention is not None:
            await self.expire(stream, self.retention)


Row = tuple[bytes, bytes | None]
"""One stored entry as a backend holds it: its id (``b"<version>-0"``) and its envelope
(None when the entry has no envelope field)."""


def parse_entry_id(entry: bytes | str) -> int | None:
    """The version an entry id "<version>-0" stands for, or None for any other id."""
    text = entry.decode(errors="replace") if isinstance(entry, bytes) else entry
    version, dash, seq = text.partition("-")
    if dash and seq == "0" and version.isdigit() and int(version) > 0:
        return int(version)
    return None


def decode_run(stream: str, rows: Iterable[Row], after: int) -> list[StoredEvent]:
    """Decode entries read after version ``after``, each the next version, or raise
    CorruptEntry naming the stream and the entry: versions have no gaps, so a jump means the
    stream was tampered with. The one place entries become events (a rebuild runs it for every
    event, so the happy path is one comparison and one ``codec.decode``)."""
    events = []
    decode = codec.decode
    for version, (entry, payload) in enumerate(rows, after + 1):
        if entry != b"%d-0" % version:
            found = parse_entry_id(entry)
            name = entry.decode(errors="replace")
            if found is None:
                raise CorruptEntry(stream, name, "the entry id is not <version>-0")
            raise CorruptEntry(stream, name, f"a gap in versions: expected {version}")
        try:
            events.append(StoredEvent(stream, version, decode(payload)))
        except codec.DecodeError as exc:
            raise CorruptEntry(stream, entry.decode(), str(exc)) from exc
    return events


def check_stream(stream: object) -> str:
    if not isinstance(stream, str) or not stream:
        raise ValueError(f"a stream name is a non-empty str, not {stream!r}")
    return stream


def check_version(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} is an int >= 0, not {value!r}")
    return value


def validate_append(
    stream: str, events: Sequence[Mapping[str, Any]], expected_version: int
) -> list[bytes]:
    """Check an append's arguments and encode its events, before anything is written."""
    check_stream(stream)
    check_version(expected_version, "expected_version")
    # A list or tuple (every caller's) is a sequence: skip the ABC check, 12 % of an append.
    if type(events) not in (list, tuple) and isinstance(events, Mapping | str | bytes):
        raise TypeError("events is a sequence of event mappings")
    payloads = [codec.encode(event) for event in events]
    if not payloads:
        raise ValueError("an append needs at least one event")
    return payloads


def validate_read(stream: str, after: int, limit: int | None) -> None:
    check_stream(stream)
    check_version(after, "after")
    if limit is not None:
        check_version(limit, "limit")
