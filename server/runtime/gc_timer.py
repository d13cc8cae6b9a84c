"""Young collections on a timer, so the collector's pauses stay short on a racing server.

CPython 3.11 starts a collection when allocations outnumber deallocations by 700, but it
counts a freed object of any generation against the young one. Racing replaces long-lived
state at every move (a game's position, its stored events), so the net count stays low while
the youngest generation grows to tens of thousands of objects: collections then pause the
server for 5-50 ms (bench.load's gc rows, docs/benchmarks.md). A collection every ``interval``
seconds bounds the young generation by what the server allocates in that time.

The middle generation is collected after ``threshold[1]`` young collections, as CPython
does; it holds what survived about 100 ms, and takes a millisecond or two. A full collection
goes over every live object (up to 500 ms with 3,000 connections): CPython would start one
after ``threshold[2]`` middle collections, every 100 s at the timer's pace, so the collector
takes full collections over (CPython's own threshold for them is raised while it runs) and
makes one at most every ``full_every`` seconds, once the oldest generation has grown by a
quarter since the last, as CPython requires. CPython's own trigger stays on for the younger
generations, for a burst that allocates 700 objects more than it frees within one interval.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

# A full collection waits until objects promoted to the oldest generation since the last one
# number a quarter of what that one left, as CPython's long_lived_pending > long_lived_total / 4:
# it keeps the cost of full collections linear in what the server allocates.
_OLDEST_GROWTH = 0.25
FULL_EVERY_S = 600.0
_NEVER = 1 << 30  # CPython's threshold for full collections while the collector runs
SIZE_EVERY = 10
"""Middle collections per measure of the young generations' size (``len(gc.get_objects())``,
which cost more than the collection itself: 2.2 % of a paced server); the others reuse it."""


def _size(generation: int) -> int:
    return len(gc.get_objects(generation=generation))


@dataclass(frozen=True)
class GcApi:
    """The parts of ``gc`` the collector uses; tests pass their own."""

    collect: Callable[[int], int] = gc.collect
    get_count: Callable[[], tuple[int, int, int]] = gc.get_count
    get_threshold: Callable[[], tuple[int, ...]] = gc.get_threshold
    set_threshold: Callable[..., None] = gc.set_threshold
    size: Callable[[int], int] = _size


def generation_due(
    count: tuple[int, int, int],
    threshold: tuple[int, ...],
    full_due: bool,
    pending: int,
    long_lived: int,
) -> int:
    """The generation to collect: the oldest when a full collection is ``full_due`` and
    ``pending`` promoted objects reach a quarter of the ``long_lived`` the last one left; else
    the middle one after ``threshold[1]`` young ones; else the young one."""
    if full_due and pending > long_lived * _OLDEST_GROWTH:
        return 2
    if count[1] > threshold[1]:
        return 1
    return 0


class YoungCollector:
    """Runs the collection ``generation_due`` names every ``interval`` seconds of loop time."""

    def __init__(
        self,
        interval: float,
        api: GcApi | None = None,
        *,
        full_every: float = FULL_EVERY_S,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.api = api if api is not None else GcApi()
        self.full_every = full_every
        self.now = now
        self.collections = [0, 0, 0]
        self.pending = 0  # promoted to the oldest generation since the last full collection
        self.long_lived = 0  # what the last full collection left there (read at start)
        self.last_full = 0.0
        self.young_estimate = 0  # generations 0 and 1 at the last middle collection measured
        self._full_threshold: int | None = None  # CPython's, while the collector holds it
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._handle is not None or self.interval <= 0:
            return
        api = self.api
        self.long_lived = api.size(2)
        self.last_full = self.now()
        young, middle, self._full_threshold = api.get_threshold()[:3]
        api.set_threshold(young, middle, _NEVER)
        self._handle = asyncio.get_running_loop().call_later(self.interval, self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._full_threshold is not None:
            young, middle, full = self.api.get_threshold()[:3]
            if full == _NEVER:  # not given back already by another collector (tests run two)
                self.api.set_threshold(young, middle, self._full_threshold)
            self._full_threshold = None

    def collect(self) -> int:
        """One collection now, of the generation due; returns which."""
        api = self.api
        full_due = self.now() - self.last_full >= self.full_every
        generation = generation_due(
            api.get_count(), api.get_threshold(), full_due, self.pending, self.long_lived
        )
        if generation == 1:
            # What survives a middle collection is promoted: CPython counts it so too. The
            # size is measured every SIZE_EVERY middle collections, estimated in between.
            if self.collections[1] % SIZE_EVERY == 0:
                self.young_estimate = api.size(0) + api.size(1)
            self.pending += max(0, self.young_estimate - api.collect(1))
        else:
            api.collect(generation)
        if generation == 2:
            self.pending = 0
            self.long_lived = api.size(2)
            self.last_full = self.now()
        self.collections[generation] += 1
        return generation

    def _tick(self) -> None:
        self._handle = asyncio.get_running_loop().call_later(self.interval, self._tick)
        self.collect()
