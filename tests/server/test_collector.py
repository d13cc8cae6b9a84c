"""The young collector: short collector pauses where CPython's own trigger lets them grow."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from server.runtime.gc_timer import SIZE_EVERY, GcApi, YoungCollector, generation_due


@pytest.fixture
def old_objects() -> Iterator[list[list[int]]]:
    """20,000 tracked objects in the oldest generation, as a racing server's games are."""
    gc.collect()
    old = [[i] for i in range(20_000)]
    gc.collect()
    yield old
    del old
    gc.collect()


def replace_all(
    old: list[list[int]], every: int = 0, collector: YoungCollector | None = None
) -> int:
    """Replace each old object by a new one (one allocation, one free); the largest young
    generation seen at each ``every``-th step."""
    largest = 0
    for i in range(len(old)):
        old[i] = [i]
        if every and i % every == every - 1:
            largest = max(largest, len(gc.get_objects(generation=0)))
            if collector is not None:
                collector.collect()
    return largest


def test_cpython_lets_the_young_generation_grow_while_frees_match_allocations(
    old_objects: list[list[int]],
) -> None:
    """The premise of the module: CPython 3.11 counts every free against the young generation,
    so replacing old objects never starts a collection and the young generation grows with
    every replacement. If this fails, the interpreter counts otherwise: measure again whether
    --gc-interval-ms still pays (bench.load's gc rows, docs/benchmarks.md)."""
    assert gc.isenabled()
    assert replace_all(old_objects, every=1_000) >= 15_000


def test_a_collection_every_interval_keeps_the_young_generation_small(
    old_objects: list[list[int]],
) -> None:
    collector = YoungCollector(interval=0.01)
    largest = replace_all(old_objects, every=500, collector=collector)
    assert largest <= 1_000
    assert sum(collector.collections) == 40


class FakeGc:
    """Counts, thresholds and sizes as the test sets them; records what was collected."""

    def __init__(self, count: tuple[int, int, int], sizes: tuple[int, int, int]) -> None:
        self.count = count
        self.threshold: tuple[int, ...] = (700, 10, 1000)
        self.sizes = list(sizes)
        self.collected: list[int] = []
        self.unreachable = 0

    def collect(self, generation: int) -> int:
        self.collected.append(generation)
        return self.unreachable

    def set_threshold(self, *threshold: int) -> None:
        self.threshold = threshold

    def api(self) -> GcApi:
        return GcApi(
            collect=self.collect,
            get_count=lambda: self.count,
            get_threshold=lambda: self.threshold,
            set_threshold=self.set_threshold,
            size=lambda generation: self.sizes[generation],
        )


class FakeTime:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_the_middle_generation_after_its_threshold_of_young_ones_and_survivors_counted() -> None:
    fake = FakeGc(count=(5, 10, 0), sizes=(300, 2_000, 50_000))
    collector = YoungCollector(interval=0.01, api=fake.api())
    assert collector.collect() == 0
    fake.count = (5, 11, 0)
    fake.unreachable = 100
    assert collector.collect() == 1
    assert fake.collected == [0, 1]
    assert collector.pending == 300 + 2_000 - 100  # promoted to the oldest generation


def test_the_young_size_is_measured_every_size_every_middle_collections() -> None:
    """Counting the young generations' objects cost more than collecting them: it is measured
    at one middle collection in SIZE_EVERY, and the measure stands for the others."""
    fake = FakeGc(count=(5, 11, 0), sizes=(300, 2_000, 50_000))
    measured: list[int] = []
    api = fake.api()

    def size(generation: int) -> int:
        measured.append(generation)
        return fake.sizes[generation]

    collector = YoungCollector(
        interval=0.01,
        api=GcApi(
            collect=api.collect,
            get_count=api.get_count,
            get_threshold=api.get_threshold,
            set_threshold=api.set_threshold,
            size=size,
        ),
        now=lambda: 0.0,  # no full collection due
    )
    assert collector.collect() == 1
    assert measured == [0, 1]
    fake.sizes[0] = 9_000  # grown since: not measured again until SIZE_EVERY
    for _ in range(SIZE_EVERY - 1):
        assert collector.collect() == 1
    assert measured == [0, 1]
    assert collector.pending == SIZE_EVERY * 2_300
    assert collector.collect() == 1
    assert measured == [0, 1, 0, 1]
    assert collector.pending == SIZE_EVERY * 2_300 + 11_000


async def test_full_collections_are_the_collectors_at_most_every_full_every() -> None:
    """A full collection goes over every live object: CPython would start one after 1,000
    middle collections, every 100 s at the timer's pace; the collector holds them to one per
    ``full_every`` while the oldest generation has grown by a quarter, and gives CPython its
    threshold back when it stops."""
    fake = FakeGc(count=(0, 11, 5_000), sizes=(1_000, 3_000, 40_000))
    clock = FakeTime()
    collector = YoungCollector(interval=60.0, api=fake.api(), full_every=600.0, now=clock)
    collector.start()
    assert fake.threshold[2] > 10**9  # CPython's own full collections are off meanwhile
    collector.pending = 20_000
    clock.now += 599.0
    assert collector.collect() == 1  # grown enough, but too soon
    clock.now += 1.0
    assert collector.collect() == 2
    assert (collector.pending, collector.long_lived, collector.last_full) == (0, 40_000, 1_600)
    assert fake.collected == [1, 2]
    collector.stop()
    assert fake.threshold == (700, 10, 1000)


def test_a_full_collection_waits_for_the_oldest_generation_to_grow_by_a_quarter() -> None:
    fake = FakeGc(count=(0, 11, 0), sizes=(1_000, 3_000, 40_000))
    clock = FakeTime()
    collector = YoungCollector(interval=0.01, api=fake.api(), full_every=600.0, now=clock)
    collector.long_lived, collector.pending, clock.now = 40_000, 9_000, 700.0
    assert collector.collect() == 1  # 9,000 + 4,000 promoted: not yet a quarter
    assert collector.pending == 13_000
    fake.sizes[2] = 30_000
    assert collector.collect() == 2
    assert (collector.pending, collector.long_lived) == (0, 30_000)
    assert fake.collected == [1, 2]


async def test_two_collectors_leave_cpythons_threshold_as_they_found_it() -> None:
    """Tests run two servers in one process, and stop them in either order."""
    for first_to_stop in (0, 1):
        fake = FakeGc(count=(0, 0, 0), sizes=(0, 0, 0))
        pair = [YoungCollector(interval=60.0, api=fake.api()) for _ in range(2)]
        for collector in pair:
            collector.start()
        pair[first_to_stop].stop()
        pair[1 - first_to_stop].stop()
        assert fake.threshold == (700, 10, 1000)


@pytest.mark.parametrize(
    ("count", "full_due", "pending", "due"),
    [
        ((0, 0, 0), False, 0, 0),
        ((699, 10, 10_000), False, 10**6, 0),
        ((0, 11, 0), False, 10**6, 1),
        ((0, 11, 0), True, 250, 1),
        ((0, 0, 0), True, 251, 2),
    ],
)
def test_generation_due_follows_cpythons_order(
    count: tuple[int, int, int], full_due: bool, pending: int, due: int
) -> None:
    assert generation_due(count, (700, 10, 1000), full_due, pending, long_lived=1000) == due


async def test_runs_on_the_loop_until_stopped() -> None:
    collector = YoungCollector(interval=0.002)
    collector.start()
    await asyncio.sleep(0.1)
    collector.stop()
    ran = sum(collector.collections)
    assert ran >= 5
    await asyncio.sleep(0.05)
    assert sum(collector.collections) == ran


async def test_interval_zero_leaves_collections_to_cpython() -> None:
    collector = YoungCollector(interval=0)
    collector.start()
    await asyncio.sleep(0.02)
    assert collector.collections == [0, 0, 0]
    collector.stop()
