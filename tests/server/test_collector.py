"""The young collector: short collector pauses where CPython's own trigger lets them grow."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from server.collector import GcApi, YoungCollector, generation_due


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
    --gc-interval-ms still pays (docs/benchmarks.md, round 9)."""
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
    """Counts and sizes as the test sets them; records what was collected."""

    def __init__(self, count: tuple[int, int, int], sizes: tuple[int, int, int]) -> None:
        self.count = count
        self.sizes = list(sizes)
        self.collected: list[int] = []
        self.unreachable = 0

    def collect(self, generation: int) -> int:
        self.collected.append(generation)
        return self.unreachable

    def api(self) -> GcApi:
        return GcApi(
            collect=self.collect,
            get_count=lambda: self.count,
            get_threshold=lambda: (700, 10, 1000),
            size=lambda generation: self.sizes[generation],
        )


def test_the_middle_generation_after_its_threshold_of_young_ones_and_survivors_counted() -> None:
    fake = FakeGc(count=(5, 10, 0), sizes=(300, 2_000, 50_000))
    collector = YoungCollector(interval=0.01, api=fake.api())
    assert collector.collect() == 0
    fake.count = (5, 11, 0)
    fake.unreachable = 100
    assert collector.collect() == 1
    assert fake.collected == [0, 1]
    assert collector.pending == 300 + 2_000 - 100  # promoted to the oldest generation


def test_a_full_collection_waits_for_the_oldest_generation_to_grow_by_a_quarter() -> None:
    fake = FakeGc(count=(5, 11, 1_001), sizes=(1_000, 3_000, 40_000))
    collector = YoungCollector(interval=0.01, api=fake.api())
    collector.long_lived = 40_000
    collector.pending = 9_000
    assert collector.collect() == 1  # 9,000 + 4,000 promoted: not yet a quarter
    assert collector.pending == 13_000
    fake.sizes[2] = 30_000
    assert collector.collect() == 2
    assert (collector.pending, collector.long_lived) == (0, 30_000)
    assert fake.collected == [1, 2]


@pytest.mark.parametrize(
    ("count", "pending", "due"),
    [
        ((0, 0, 0), 0, 0),
        ((699, 10, 1000), 10**6, 0),
        ((0, 11, 0), 0, 1),
        ((0, 11, 1001), 250, 1),
        ((0, 0, 1001), 251, 2),
    ],
)
def test_generation_due_follows_cpythons_order(
    count: tuple[int, int, int], pending: int, due: int
) -> None:
    assert generation_due(count, (700, 10, 1000), pending, long_lived=1000) == due


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
