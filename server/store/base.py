"""The event store as one object: the streams, indexes, queues and wake-ups of one backend, for the
wiring (app.py passes it); a caller depends only on the capability it uses (docs/storage.md)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from types import TracebackType
from typing import Self

from server.store.indexes import Indexes
from server.store.queues import Queues
from server.store.streams import EventStreams, check_stream, check_version
from server.store.wakeups import Wakeups, stream_group


class EventStore(EventStreams, Indexes, Queues, Wakeups):
    """All four capabilities of one backend, with its life cycle."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """True if the store can serve now; never raises."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Close open subscriptions and release connections."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def validate_delete_at(versions: Mapping[str, int]) -> dict[str, int]:
    """Check a fenced delete's streams and versions: streams of one group (whose hash tag
    keeps them in one Cluster slot, where one script sees them all), versions >= 0."""
    checked = {
        check_stream(stream): check_version(version, "a version")
        for stream, version in versions.items()
    }
    if len({stream_group(stream) for stream in checked}) > 1:
        raise ValueError(f"a fenced delete takes the streams of one group, not {list(checked)}")
    return checked
