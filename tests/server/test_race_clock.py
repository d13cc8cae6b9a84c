"""The race clock in process: timers from the folded state, the due index across a restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.app import App
from server.clock import FakeClock
from server.commands import DUE_INDEX
from server.race import RoomStatus
from server.store import MemoryEventStore
from tests.server.parts import SEED, Peer, join, open_app, racing, until


@pytest.fixture
async def store() -> AsyncIterator[MemoryEventStore]:
    s = MemoryEventStore()
    yield s
    await s.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[App]:
    app = open_app(store, clock)
    yield app
    await app.close_parts()


async def test_countdown_and_time_limit_come_from_the_clock(app: App, clock: FakeClock) -> None:
    ann = Peer("ann")
    room = await racing(app, clock, [ann], time_limit_ms=60_000)
    assert room.ends_at == clock.now_ms() + 60_000
    clock.advance(59_999)
    await asyncio.sleep(0.01)
    assert room.status is RoomStatus.RACING
    clock.advance(1)
    await until(lambda: room.status is RoomStatus.FINISHED)
    finished = ann.of("finished")[0]
    assert finished["reason"] == "time_limit"
    assert finished["at"] == clock.now_ms()
    assert finished["seed"] == SEED


async def due(store: MemoryEventStore, expected: dict[str, int]) -> dict[str, int]:
    """The due index once it shows ``expected`` (the clock writes it in the background)."""
    found: dict[str, int] = {}
    for _ in range(200):
        found = {e.member: e.score for e in await store.index_range(DUE_INDEX)}
        if found == expected:
            break
        await asyncio.sleep(0.01)
    return found


async def test_the_due_index_follows_the_room(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room = await racing(app, clock, [ann], time_limit_ms=60_000)
    assert room.ends_at is not None
    assert await due(store, {room.id: room.ends_at}) == {room.id: room.ends_at}
    await app.commands.resign(room, "ann")
    await until(lambda: room.status is RoomStatus.FINISHED)
    assert await due(store, {}) == {}


async def test_timers_that_came_due_while_down_fire_at_restart(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    """Nothing loads the rooms after the restart but the due index: the countdown still ends
    and the time limit still finishes the race, each once, late by the downtime only."""
    ann, bob = Peer("ann"), Peer("bob")
    timed = await racing(app, clock, [ann], time_limit_ms=10_000)
    counting = await app.commands.create_room(
        {"variant": "swiss", "countdown_ms": 3000}, creator="test"
    )
    await join(app, bob, counting.id)
    await app.commands.start(counting, "bob")
    assert timed.ends_at is not None
    assert counting.go_at is not None
    expected = {timed.id: timed.ends_at, counting.id: counting.go_at}
    assert await due(store, expected) == expected
    await app.close_parts()
    clock.advance(60_000)  # down for a minute: both came due meanwhile

    again = open_app(store, clock)
    try:
        assert again.hub.rooms == {}
        await until(lambda: {timed.id, counting.id} <= set(again.hub.rooms))
        a, b = again.hub.rooms[timed.id], again.hub.rooms[counting.id]
        await until(lambda: a.status is RoomStatus.FINISHED and b.status is RoomStatus.RACING)
        assert a.finished is not None
        assert a.finished["reason"] == "time_limit"
        await until(lambda: b.games["bob"].version == 1)  # its game started too
        kinds = [e.data["type"] for e in await store.read(a.stream)]
        assert kinds.count("race_finished") == 1
    finally:
        await again.close_parts()
