"""KeyedBatches: what waits while a key's batch runs goes in the next one, each caller answered."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest

from server.runtime.batches import Answer, KeyedBatches


async def test_items_submitted_while_a_batch_runs_go_in_the_next_one_together() -> None:
    runs: list[tuple[str, list[int]]] = []
    gate = asyncio.Event()

    async def run(key: str, items: Sequence[int], answer: Answer[int]) -> Mapping[str, int]:
        runs.append((key, list(items)))
        if len(runs) == 1:
            await gate.wait()
        return {str(i): i * 10 for i in items}

    batches: KeyedBatches[int, int] = KeyedBatches(run, max_batch=3)
    first = asyncio.ensure_future(batches.submit("a", "1", 1))
    await asyncio.sleep(0)
    later = [asyncio.ensure_future(batches.submit("a", str(i), i)) for i in (2, 3, 4, 5, 2)]
    other = asyncio.ensure_future(batches.submit("b", "7", 7))  # its own key: not held up
    assert await other == 70
    gate.set()
    assert await first == 10
    assert await asyncio.gather(*later) == [20, 30, 40, 50, 20]
    assert runs == [("a", [1]), ("b", [7]), ("a", [2, 3, 4]), ("a", [5])]


async def test_a_failed_batch_answers_its_callers_with_the_error_and_the_next_runs() -> None:
    async def run(key: str, items: Sequence[int], answer: Answer[int]) -> Mapping[str, int]:
        if 1 in items:
            raise ValueError("no")
        return {str(i): i for i in items}

    batches: KeyedBatches[int, int] = KeyedBatches(run, max_batch=10)
    failing = asyncio.ensure_future(batches.submit("a", "1", 1))
    with pytest.raises(ValueError, match="no"):
        await failing
    assert await batches.submit("a", "2", 2) == 2


async def test_closing_cancels_the_waiting_callers() -> None:
    started = asyncio.Event()

    async def run(key: str, items: Sequence[int], answer: Answer[int]) -> Mapping[str, int]:
        started.set()
        await asyncio.Event().wait()
        return {}

    batches: KeyedBatches[int, int] = KeyedBatches(run, max_batch=10)
    running = asyncio.ensure_future(batches.submit("a", "1", 1))
    await started.wait()
    waiting = asyncio.ensure_future(batches.submit("a", "2", 2))
    await asyncio.sleep(0)
    await batches.aclose()
    for caller in (running, waiting):
        with pytest.raises(asyncio.CancelledError):
            await caller


async def test_a_batch_may_answer_before_it_ends_and_the_next_waits_for_its_end() -> None:
    runs: list[list[int]] = []
    rest = asyncio.Event()

    async def run(key: str, items: Sequence[int], answer: Answer[int]) -> Mapping[str, int]:
        runs.append(list(items))
        done = {str(i): -i for i in items}
        answer(done)  # the callers have what they wait for; the rest is the batch's own
        if len(runs) == 1:
            await rest.wait()
        return done

    batches: KeyedBatches[int, int] = KeyedBatches(run, max_batch=10)
    assert await batches.submit("a", "1", 1) == -1  # answered while its batch still runs
    second = asyncio.ensure_future(batches.submit("a", "2", 2))
    await asyncio.sleep(0.01)
    assert runs == [[1]]  # the next batch waits for the first one's end
    rest.set()
    assert await second == -2
    assert runs == [[1], [2]]
