"""The queues contract, on memory, a real Redis and a real Redis Cluster: joining once, taking
a group all or nothing, leaving, and concurrent takes from two store objects (two processes)."""

from __future__ import annotations

import asyncio

import pytest

from server.store import QueueEntry
from tests.server.store.conftest import Backend

Q = "mm:swiss:2:rated"


async def test_join_once_and_read_by_score(backend: Backend) -> None:
    store = backend.store
    assert await store.queue_entries(Q) == []
    assert await store.queue_join(Q, "bob", 1600, b"b")
    assert await store.queue_join(Q, "ann", 1500, b"a")
    assert not await store.queue_join(Q, "ann", 1700, b"changed")
    assert await store.queue_entries(Q) == [
        QueueEntry("ann", 1500, b"a"),
        QueueEntry("bob", 1600, b"b"),
    ]
    assert await store.queue_entries("mm:other") == []


async def test_a_take_is_all_or_nothing(backend: Backend) -> None:
    store = backend.store
    for name in ("a", "b", "c"):
        await store.queue_join(Q, name, 0)
    assert not await store.queue_take(Q, ["a", "gone"])
    assert [e.member for e in await store.queue_entries(Q)] == ["a", "b", "c"]
    assert await store.queue_take(Q, ["a", "c"])
    assert [e.member for e in await store.queue_entries(Q)] == ["b"]
    assert not await store.queue_take(Q, ["a", "b"])  # a was taken already


async def test_leave_then_nobody_can_take_the_leaver(backend: Backend) -> None:
    store = backend.store
    await store.queue_join(Q, "a", 0)
    await store.queue_join(Q, "b", 0)
    assert await store.queue_leave(Q, "a")
    assert not await store.queue_leave(Q, "a")
    assert not await store.queue_take(Q, ["a", "b"])
    assert await store.queue_join(Q, "a", 5)  # may queue again
    assert await store.queue_take(Q, ["a", "b"])
    assert await store.queue_entries(Q) == []


async def test_concurrent_takes_from_two_processes_never_share_a_member(backend: Backend) -> None:
    one, two = backend.store, backend.twin()
    members = [f"p{i}" for i in range(40)]
    for i, member in enumerate(members):
        await one.queue_join(Q, member, i)
    # Every pair of overlapping groups is tried by both objects at once.
    groups = [[members[i], members[(i + 1) % 40]] for i in range(40)]
    results = await asyncio.gather(
        *(one.queue_take(Q, g) for g in groups), *(two.queue_take(Q, g) for g in groups)
    )
    taken = [g for g, ok in zip(groups + groups, results, strict=True) if ok]
    placed = [m for g in taken for m in g]
    assert len(placed) == len(set(placed))
    left = {e.member for e in await two.queue_entries(Q)}
    assert left | set(placed) == set(members)
    assert not left & set(placed)
    if two is not one:
        await two.aclose()


async def test_bad_names_are_refused(backend: Backend) -> None:
    store = backend.store
    for queue, members in (("", ["a"]), ("q{x}", ["a"]), (Q, []), (Q, ["a", "a"]), (Q, [""])):
        with pytest.raises(ValueError, match=r"queue|take"):
            await store.queue_take(queue, members)
