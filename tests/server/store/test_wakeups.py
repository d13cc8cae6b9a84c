"""The wake-ups contract (``Wakeups``) on every backend: appends wake the subscribers of their
stream's group, and a lost wake-up is reported as a gap."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from server.store import EventStore, Wakeup, stream_group
from tests.server.store.conftest import Backend


def ev(n: int) -> dict[str, object]:
    return {"type": "moved", "move": f"m{n}", "at": 1_700_000_000_000 + n}


async def until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never came true")


def test_a_stream_group_is_its_hash_tag() -> None:
    assert stream_group("{r1}:room") == "r1"
    assert stream_group("{r1}:game:ann") == "r1"
    assert stream_group("plain") == "plain"
    assert stream_group("{}:odd") == "{}:odd"


async def test_an_own_append_wakes_at_once_with_its_events(store: EventStore) -> None:
    seen: list[Wakeup] = []
    subscription = store.subscribe(seen.append)
    await subscription.subscribe(["r1"])
    await store.append("{r1}:game:ann", [ev(1), ev(2)], expected_version=0)
    # Delivered inside append, before it returns: the writer folds without reading back.
    assert [(w.stream, w.version) for w in seen][:1] == [("{r1}:game:ann", 2)]
    assert seen[0].events is not None
    assert [dict(e) for e in seen[0].events] == [ev(1), ev(2)]
    await subscription.aclose()


async def test_only_subscribed_groups_wake(store: EventStore) -> None:
    seen: list[Wakeup] = []
    subscription = store.subscribe(seen.append)
    await subscription.subscribe(["r1"])
    await store.append("{r2}:room", [ev(1)], expected_version=0)
    await store.append("{r1}:room", [ev(1)], expected_version=0)
    await until(lambda: any(w.stream == "{r1}:room" for w in seen))
    await asyncio.sleep(0.1)
    assert {w.stream for w in seen} == {"{r1}:room"}
    await subscription.unsubscribe(["r1"])
    count = len(seen)
    await store.append("{r1}:room", [ev(2)], expected_version=1)
    await asyncio.sleep(0.2)
    assert len(seen) == count
    await subscription.aclose()


async def test_another_process_append_wakes_without_events(backend: Backend) -> None:
    """A second store object on the same backend stands for another server process."""
    store = backend.store
    seen: list[Wakeup] = []
    subscription = store.subscribe(seen.append)
    await subscription.subscribe(["r9"])
    other = backend.twin()
    try:
        await other.append("{r9}:game:bob", [ev(1), ev(2), ev(3)], expected_version=0)
        await until(lambda: any(w.version == 3 for w in seen))
        wakeup = next(w for w in seen if w.version == 3)
        assert wakeup.stream == "{r9}:game:bob"
    finally:
        if other is not store:
            await other.aclose()
        await subscription.aclose()


async def test_a_writer_that_follows_the_group_still_wakes_the_others(backend: Backend) -> None:
    """Both processes follow the room; each one's appends wake the other (Redis publishes a
    wake-up only when someone besides the writer listens: here someone does)."""
    store = backend.store
    other = backend.twin()
    mine: list[Wakeup] = []
    theirs: list[Wakeup] = []
    a = store.subscribe(mine.append)
    b = other.subscribe(theirs.append)
    try:
        await a.subscribe(["r7"])
        await b.subscribe(["r7"])
        await asyncio.sleep(0.2)  # both subscribes answered, so each counts its own
        version = await store.append("{r7}:game:ann", [ev(1)], expected_version=0)
        await until(lambda: any(w.version == version for w in theirs))
        version = await other.append("{r7}:game:ann", [ev(2)], expected_version=1)
        await until(lambda: any(w.version == version for w in mine))
    finally:
        await a.aclose()
        await b.aclose()
        if other is not store:
            await other.aclose()


async def test_a_closed_subscription_hears_nothing(store: EventStore) -> None:
    seen: list[Wakeup] = []
    subscription = store.subscribe(seen.append)
    await subscription.subscribe(["r1"])
    await subscription.aclose()
    await subscription.aclose()  # idempotent
    await store.append("{r1}:room", [ev(1)], expected_version=0)
    await asyncio.sleep(0.1)
    assert seen == []
    with pytest.raises(RuntimeError):
        await subscription.subscribe(["r2"])
