"""The event store as one object: the streams, indexes, queues and wake-ups of one backend, for the
wiring (app.py passes it); a caller depends only on the capability it uses (docs/storage.md)."""

from __future__ import annotations

import abc
from types import TracebackType
from typing import Self

from server.store.indexes import Indexes
from server.store.queues import Queues
from server.store.streams import EventStreams
from server.store.wakeups import Wakeups


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
