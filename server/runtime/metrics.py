"""What a running server reports at ``GET /metrics`` (Prometheus text format, prometheus-client).

One ``Metrics`` per process, on a registry of its own (passed in, never the library's global
one). Counters and histograms are observed where things happen (connections, commands,
delivery); gauges of live state are read at scrape time from the parts that hold it, so the
hot path pays nothing for them. docs/operations.md says what each metric means.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LATENCY_BUCKETS = (
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


class Metrics:
    """The server's metrics; ``state`` names the live figures read at each scrape."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.moves = Counter(
            "arena_moves",
            "Moves answered, by outcome: accepted, or the reject code.",
            ["outcome"],
            registry=self.registry,
        )
        self.moves_accepted = self.moves.labels("accepted")  # the one per move: looked up once
        self.ack_seconds = Histogram(
            "arena_ack_seconds",
            "From a move's frame read to its answer queued (accepted and rejected).",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.append_seconds = Histogram(
            "arena_store_append_seconds",
            "Event store appends, from call to return (conflicts included).",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.slow_consumers = Counter(
            "arena_slow_consumers_dropped",
            "Connections closed with 4009 because they did not read their frames fast enough.",
            registry=self.registry,
        )
        self.errors = Counter(
            "arena_errors",
            "error frames sent, by code.",
            ["code"],
            registry=self.registry,
        )
        self.gc_pause_seconds = Histogram(
            "arena_gc_pause_seconds",
            "The cyclic garbage collector's pauses, by generation (--gc-interval-ms).",
            ["generation"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._gc_pauses = [self.gc_pause_seconds.labels(str(g)) for g in range(3)]
        self._gc_started = 0.0

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


_LIVE: dict[str, tuple[str, str]] = {
    "rooms_live": ("gauge", "Rooms loaded in this process that are not finished or closed."),
    "rooms_loaded": ("gauge", "Rooms this process has loaded (folded and followed)."),
    "games_live": ("gauge", "Games of loaded rooms that are still being played."),
    "connections": ("gauge", "Open WebSocket connections."),
    "frames_fanned_out": ("counter", "Frames handed to connections by delivery (per recipient)."),
    "hub_wakeups": ("counter", "Wake-ups received for loaded rooms."),
    "hub_catch_ups": ("counter", "Stream reads after a wake-up, a gap or a periodic check."),
    "rooms_unloaded": ("counter", "Ended rooms forgotten with nobody here (--unload-after-s)."),
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
