"""The wake-ups capability: every append wakes the subscribers of its stream's group.

A group is a stream's hash tag (the room). One subscription per process receives the wake-ups
of every group it follows on a bounded number of connections; a lost wake-up is reported as a
gap, and the subscriber then catches up from the streams: it costs latency, never an event.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple


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


class Wakeups(abc.ABC):
    """Where subscriptions come from; the appends of this very object are delivered at once."""

    @abc.abstractmethod
    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> Subscription:
        """A subscription to wake-ups (subscribe it to groups); one per process is enough."""


class LocalSubscriptions:
    """The subscriptions a store object made, which its own appends wake at once, with their
    events (the writer folds without reading back)."""

    def __init__(self) -> None:
        self._open: list[Subscription] = []

    @property
    def open(self) -> Sequence[Subscription]:
        """The open subscriptions (read only)."""
        return self._open

    def add(self, subscription: Subscription) -> None:
        self._open.append(subscription)

    def subscribe(
        self, on_wakeup: WakeupHandler, on_gap: Callable[[], None] | None
    ) -> LocalSubscription:
        """A subscription this object's appends wake (a store's ``subscribe``)."""
        subscription = LocalSubscription(self, on_wakeup, on_gap)
        self.add(subscription)
        return subscription

    def discard(self, subscription: Subscription) -> None:
        if subscription in self._open:
            self._open.remove(subscription)

    def appended(self, stream: str, version: int, events: Sequence[Mapping[str, Any]]) -> None:
        if self._open:
            wakeup = Wakeup(stream, version, events)
            for subscription in list(self._open):
                subscription.deliver(wakeup)

    async def aclose(self) -> None:
        for subscription in list(self._open):
            await subscription.aclose()


class LocalSubscription(Subscription):
    """Wake-ups straight from ``append``, which runs in this process: nothing can be lost. The
    subscription of a store one process owns (in memory, or in a data directory it locks)."""

    def __init__(
        self,
        local: LocalSubscriptions,
        on_wakeup: WakeupHandler,
        on_gap: Callable[[], None] | None,
    ) -> None:
        super().__init__(on_wakeup, on_gap)
        self._local = local

    async def _subscribe(self, groups: list[str]) -> None:
        return None

    async def _unsubscribe(self, groups: list[str]) -> None:
        return None

    async def _shutdown(self) -> None:
        self._local.discard(self)
