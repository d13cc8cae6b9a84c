"""What a running server reports at ``GET /metrics`` (Prometheus text format, prometheus-client).

One ``Metrics`` per process, on a registry of its own (passed in, never the library's global
one). Counters and histograms are observed where things happen (connections, commands,
delivery); gauges of live state are read at scrape time from the parts that hold it, so the
hot path pays nothing for them. The ones a move touches (moves, ack and append times, gc
pauses) are plain ints and floats (``Tally``, ``Timings``) reported by a collector at scrape
time: prometheus-client takes a lock per increment (1.3 % of a paced server), and a process
counts from its one event-loop thread. docs/operations.md says what each metric means.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import gc
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

T = TypeVar("T")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
)


class Tally:
    """A counter as a plain int, read at scrape time (one event-loop thread writes it)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def inc(self, amount: int = 1) -> None:
        self.value += amount


class Timings:
    """A histogram as plain counts per bucket and a sum, read at scrape time."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound (+Inf)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def buckets(self) -> list[tuple[str, float]]:
        """Cumulative counts by upper bound, as Prometheus reports them."""
        cumulative = 0
        rows: list[tuple[str, float]] = []
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            cumulative += count
            rows.append((floatToGoString(bound), cumulative))
        return rows


class Labelled(Generic[T]):
    """One ``T`` per label value, made when first asked (as prometheus-client's ``labels``)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self.children: dict[str, T] = {}

    def labels(self, value: str) -> T:
        child = self.children.get(value)
        if child is None:
            child = self.children[value] = self._make()
        return child


class Metrics:
    """The server's metrics; ``state`` names the live figures read at each scrape."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.moves: Labelled[Tally] = Labelled(Tally)
        self.moves_accepted = self.moves.labels("accepted")  # the one per move: looked up once
        self.ack_seconds = Timings(LATENCY_BUCKETS)
        self.append_seconds = Timings(LATENCY_BUCKETS)
        self.slow_consumers = Counter(
            "arena_slow_consumers_dropped",
            "Connections closed with 4009 because they did not read their frames fast enough.",
            registry=self.registry,
        )
        self.busy = Counter(
            "arena_connections_busy",
            "WebSocket upgrades answered 503 busy (Retry-After): --max-connections were held.",
            registry=self.registry,
        )
        self.errors = Counter(
            "arena_errors",
            "error frames sent, by code.",
            ["code"],
            registry=self.registry,
        )
        self.gc_pause_seconds: Labelled[Timings] = Labelled(lambda: Timings(LATENCY_BUCKETS))
        self._gc_pauses = [self.gc_pause_seconds.labels(str(g)) for g in range(3)]
        self._gc_started = 0.0
        self.registry.register(_Counted(self))

    def watch_gc(self) -> None:
        """Time every collection of this process (``gc.callbacks``) until ``unwatch_gc``."""
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def unwatch_gc(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: Mapping[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self._gc_pauses[info["generation"]].observe(time.perf_counter() - self._gc_started)

    def watch(self, state: Callable[[], Mapping[str, float]]) -> None:
        """Report the live figures ``state`` returns at every scrape (see ``_LIVE``)."""
        self.registry.register(_Live(state))

    def render(self) -> bytes:
        return generate_latest(self.registry)


def process_figures() -> dict[str, float]:
    """What any process reports of itself: its asyncio tasks and the interpreter's live blocks,
    the two that grow with a leak of objects."""
    return {"tasks": len(asyncio.all_tasks()), "python_blocks": sys.getallocatedblocks()}


_LIVE: dict[str, tuple[str, str]] = {
    "rooms_live": ("gauge", "Rooms loaded in this process that are not finished or closed."),
    "rooms_loaded": ("gauge", "Rooms this process has loaded (folded and followed)."),
    "games_live": ("gauge", "Games of loaded rooms that are still being played."),
    "connections": ("gauge", "Open WebSocket connections."),
    "frames_fanned_out": ("counter", "Frames handed to connections by delivery (per recipient)."),
    "hub_wakeups": ("counter", "Wake-ups received for loaded rooms."),
    "hub_catch_ups": ("counter", "Stream reads after a wake-up, a gap or a periodic check."),
    "rooms_unloaded": ("counter", "Ended rooms forgotten with nobody here (--unload-after-s)."),
    "rooms_compacted": (
        "counter",
        "Ended rooms cut to their summary with nobody here (their events read again on use).",
    ),
    "python_blocks": (
        "gauge",
        "Memory blocks the interpreter holds (sys.getallocatedblocks): flat under steady load.",
    ),
    "tasks": ("gauge", "asyncio tasks of the process (a number that grows with time is a leak)."),
    "rooms_archived": ("counter", "Finished rooms this process moved from Redis to the archive."),
    "archive_failures": (
        "counter",
        "Rooms (or sweeps) the archiver could not archive: the archive down, a mismatch.",
    ),
    "archive_waiting": ("gauge", "Finished rooms not archived yet (at the last sweep)."),
    "archive_oldest_waiting_seconds": (
        "gauge",
        "Age of the oldest finished room not archived yet (at the last sweep).",
    ),
    "archive_reads": ("counter", "Finished rooms read from the archive (gone from Redis)."),
    "bots_playing": ("gauge", "Bot seats this process plays (a task each)."),
    "bot_moves": ("counter", "Moves bots of this process made (docs/bots.md)."),
    "archive_read_failures": (
        "counter",
        "Reads of archived rooms the archive could not serve (unreachable, corrupt record).",
    ),
    "games_analysed": ("counter", "Finished games this process analysed and wrote."),
    "analysis_deferred": (
        "counter",
        "Finished rooms a full analysis queue turned away (the next sweep offers them again).",
    ),
    "analysis_failures": ("counter", "Rooms whose analysis failed (they stay due)."),
    "analysis_busy_seconds": (
        "counter",
        "Seconds the analysis process worked for this process's games.",
    ),
    "analysis_queued": ("gauge", "Rooms in this process's analysis queue."),
}


class _Live(Collector):
    def __init__(self, state: Callable[[], Mapping[str, float]]) -> None:
        self._state = state

    def collect(self) -> Iterator[Metric]:
        values = self._state()
        for key, (kind, text) in _LIVE.items():
            name = f"arena_{key}"
            if kind == "gauge":
                yield GaugeMetricFamily(name, text, value=values.get(key, 0))
            else:
                yield CounterMetricFamily(name, text, value=values.get(key, 0))


class _Counted(Collector):
    """The plain-int metrics of a ``Metrics``, as Prometheus families at each scrape."""

    def __init__(self, metrics: Metrics) -> None:
        self._m = metrics

    def collect(self) -> Iterator[Metric]:
        m = self._m
        moves = CounterMetricFamily(
            "arena_moves",
            "Moves answered, by outcome: accepted, or the reject code.",
            labels=["outcome"],
        )
        for outcome, tally in list(m.moves.children.items()):
            moves.add_metric([outcome], tally.value)
        yield moves
        yield _histogram(
            "arena_ack_seconds",
            "From a move's frame read to its answer queued (accepted and rejected).",
            {"": m.ack_seconds},
        )
        yield _histogram(
            "arena_store_append_seconds",
            "Event store appends, from call to return (conflicts included).",
            {"": m.append_seconds},
        )
        yield _histogram(
            "arena_gc_pause_seconds",
            "The cyclic garbage collector's pauses, by generation (--gc-interval-ms).",
            dict(m.gc_pause_seconds.children),
            "generation",
        )


def _histogram(
    name: str, text: str, timings: Mapping[str, Timings], label: str | None = None
) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, text, labels=[label] if label else None)
    for value, t in timings.items():
        family.add_metric([value] if label else [], t.buckets(), t.total)
    return family
