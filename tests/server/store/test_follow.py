"""Followers on both backends: catch up, then live; many streams in order; add; no leftovers."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from server.store import EventStore, Follower, StoredEvent

SAFETY = 15.0
"""Seconds before a test that waits for events gives up: a hang fails, it is not a timing test."""


def ev(n: int) -> dict[str, object]:
    return {"type": "moved", "n": n}


async def take(follower: Follower, count: int) -> list[StoredEvent]:
    got: list[StoredEvent] = []
    async with asyncio.timeout(SAFETY):
        while len(got) < count:
            got.append(await anext(follower))
    return got


def versions(events: list[StoredEvent], stream: str) -> list[int]:
    return [e.version for e in events if e.stream == stream]


async def test_a_late_follower_catches_up_then_sees_new_events_in_order(
    store: EventStore,
) -> None:
    stream = "{r}:game:ann"
    await store.append(stream, [ev(n) for n in range(1, 6)], expected_version=0)
    async with store.follow({stream: 0}) as follower:
        caught_up = await take(follower, 5)
        assert [(e.version, e.data) for e in caught_up] == [(n, ev(n)) for n in range(1, 6)]
        waiting = asyncio.ensure_future(take(follower, 3))
        await asyncio.sleep(0.05)  # let it block in its read
        for n in range(6, 9):
            await store.append(stream, [ev(n)], expected_version=n - 1)
        live = await waiting
        assert [(e.stream, e.version, e.data) for e in live] == [
            (stream, n, ev(n)) for n in (6, 7, 8)
        ]
        assert follower.positions == {stream: 8}


async def test_a_follower_starts_after_the_position_it_is_given(store: EventStore) -> None:
    await store.append("s", [ev(n) for n in range(1, 6)], expected_version=0)
    async with store.follow({"s": 3}) as follower:
        assert [e.version for e in await take(follower, 2)] == [4, 5]


async def test_a_follower_of_a_stream_that_does_not_exist_yet_waits_for_it(
    store: EventStore,
) -> None:
    async with store.follow({"later": 0}) as follower:
        waiting = asyncio.ensure_future(take(follower, 2))
        await asyncio.sleep(0.05)
        await store.append("later", [ev(1), ev(2)], expected_version=0)
        assert [e.data for e in await waiting] == [ev(1), ev(2)]


async def test_a_follower_of_many_streams_sees_each_in_order(store: EventStore) -> None:
    streams = [f"{{room}}:game:p{n}" for n in range(20)]
    per_stream = 15
    for stream in streams[:10]:  # half of them have a history already
        await store.append(stream, [ev(0)], expected_version=0)
    follower = store.follow(dict.fromkeys(streams, 0))

    async def writer(stream: str) -> None:
        for _ in range(per_stream):
            version = await store.last_version(stream)
            await store.append(stream, [ev(version + 1)], expected_version=version)
            await asyncio.sleep(0)

    total = 10 + len(streams) * per_stream
    reading = asyncio.ensure_future(take(follower, total))
    await asyncio.gather(*(writer(s) for s in streams))
    events = await reading
    await follower.aclose()
    for stream in streams:
        expected = per_stream + (1 if stream in streams[:10] else 0)
        assert versions(events, stream) == list(range(1, expected + 1)), stream
        assert all(e.data == ev(e.version) for e in events if e.version > 1)


async def test_add_follows_one_more_stream_from_its_position(store: EventStore) -> None:
    await store.append("b", [ev(1), ev(2), ev(3)], expected_version=0)
    async with store.follow({"a": 0}) as follower:
        waiting = asyncio.ensure_future(take(follower, 2))
        await asyncio.sleep(0.05)  # blocked reading "a" alone
        follower.add("b", after=1)
        got = await waiting
        assert [(e.stream, e.version) for e in got] == [("b", 2), ("b", 3)]
        await store.append("a", [ev(1)], expected_version=0)
        await store.append("b", [ev(4)], expected_version=3)
        got = await take(follower, 2)
        assert sorted((e.stream, e.version) for e in got) == [("a", 1), ("b", 4)]
        assert follower.positions == {"a": 1, "b": 4}
        follower.add("b", after=0)  # already followed: left as it is
        assert follower.positions == {"a": 1, "b": 4}


async def test_adding_streams_while_they_are_written_loses_and_doubles_nothing(
    store: EventStore,
) -> None:
    streams = [f"{{r}}:s{n}" for n in range(8)]
    rounds = 12
    follower = store.follow({})

    async def writer() -> None:
        for _ in range(rounds):
            for stream in streams:
                version = await store.last_version(stream)
                await store.append(stream, [ev(version + 1)], expected_version=version)
            await asyncio.sleep(0.005)

    async def adder() -> None:
        for stream in streams:
            follower.add(stream)
            await asyncio.sleep(0.01)

    reading = asyncio.ensure_future(take(follower, len(streams) * rounds))
    await asyncio.gather(writer(), adder())
    events = await reading
    await follower.aclose()
    for stream in streams:
        assert versions(events, stream) == list(range(1, rounds + 1)), stream


async def test_discard_stops_following_a_stream(store: EventStore) -> None:
    async with store.follow({"a": 0, "b": 0}) as follower:
        await store.append("a", [ev(1)], expected_version=0)
        assert [e.stream for e in await take(follower, 1)] == ["a"]
        follower.discard("a")
        follower.discard("never followed")
        await store.append("a", [ev(2)], expected_version=1)
        await store.append("b", [ev(1)], expected_version=0)
        assert [(e.stream, e.version) for e in await take(follower, 1)] == [("b", 1)]
        assert follower.streams == ["b"]


async def test_aclose_from_another_task_ends_the_iteration(store: EventStore) -> None:
    follower = store.follow({"s": 0})
    seen: list[StoredEvent] = []

    async def consume() -> None:
        async for event in follower:
            seen.append(event)

    consumer = asyncio.ensure_future(consume())
    await store.append("s", [ev(1)], expected_version=0)
    await asyncio.sleep(0.05)
    await follower.aclose()
    async with asyncio.timeout(SAFETY):
        await consumer  # ends normally: StopAsyncIteration, no error
    assert [e.version for e in seen] == [1]
    assert follower.closed
    await follower.aclose()  # idempotent


async def test_cancelling_a_follower_leaves_no_task_behind(store: EventStore) -> None:
    before = asyncio.all_tasks()
    follower = store.follow({"s": 0, "t": 0})
    await store.append("s", [ev(1)], expected_version=0)

    async def consume() -> None:
        async for _ in follower:
            pass

    consumer = asyncio.ensure_future(consume())
    await asyncio.sleep(0.1)  # it has caught up and is now waiting
    consumer.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await consumer
    assert asyncio.all_tasks() == before
    # the follower is still usable after its reader was cancelled
    await store.append("t", [ev(1)], expected_version=0)
    assert [(e.stream, e.version) for e in await take(follower, 1)] == [("t", 1)]
    await follower.aclose()
    assert asyncio.all_tasks() == before


async def test_closing_the_store_closes_its_followers(store: EventStore) -> None:
    follower = store.follow({"s": 0})
    consumer = asyncio.ensure_future(take(follower, 1))
    await asyncio.sleep(0.05)
    await store.aclose()
    assert follower.closed
    async with asyncio.timeout(SAFETY):
        assert [e async for e in follower] == []
    consumer.cancel()
    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
        await consumer


async def test_add_on_a_closed_follower_is_an_error(store: EventStore) -> None:
    follower = store.follow({})
    await follower.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        follower.add("s")
