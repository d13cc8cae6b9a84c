"""The race clock in process: timers from the folded state, the due index across a restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.app import App
from server.kernel.errors import NoSuchRoom, TooManyLobbies
from server.race.domain.lifecycle import RoomStatus
from server.race.services.directory import DUE_INDEX, LIVE_INDEX, lobbies_index
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from shared import legal_moves
from shared.protocol import BadField
from tests.server.parts import SEED, Peer, join, open_app, racing, until


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


async def test_moves_leave_the_timers_alone_until_a_game_is_done(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    """A move of a game still on changes nothing timed: the room's timer stays the one armed,
    and the race still ends on time, or as soon as every game is done."""
    ann, bob = Peer("ann"), Peer("bob")
    room = await racing(app, clock, [ann, bob], time_limit_ms=60_000)
    armed = app.race_clock._timers[room.id]
    for cid in range(5):
        state = room.games["ann"].state
        assert state is not None
        await app.commands.games.move(room, "ann", cid, sorted(legal_moves(state))[0])
    assert room.games["ann"].version == 6
    assert app.race_clock._timers[room.id] is armed
    await app.commands.games.resign(room, "ann")
    assert room.status is RoomStatus.RACING  # bob still plays
    await app.commands.games.resign(room, "bob")
    await until(lambda: room.status is RoomStatus.FINISHED)
    assert await due(store, {}) == {}


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
    await app.commands.games.resign(room, "ann")
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
        assert a.finished.reason == "time_limit"
        await until(lambda: b.games["bob"].version == 1)  # its game started too
        kinds = [e.data["type"] for e in await store.read(a.stream)]
        assert kinds.count("race_finished") == 1
    finally:
        await again.close_parts()


async def test_every_race_has_a_time_limit_unless_the_operator_allows_none(
    store: MemoryEventStore, clock: FakeClock
) -> None:
    app = open_app(store, clock)
    try:
        room = await app.commands.create_room({"variant": "swiss"}, creator="t")
        assert room.settings.time_limit_ms == 1_200_000  # the Swiss default
        quad = await app.commands.create_room({"variant": "quadrennial"}, creator="t")
        assert quad.settings.time_limit_ms == 900_000
        with pytest.raises(BadField):
            await app.commands.create_room({"variant": "swiss", "time_limit_ms": 0}, creator="t")
        with pytest.raises(BadField):
            await app.commands.create_room(
                {"variant": "swiss", "time_limit_ms": 7_200_001}, creator="t"
            )
    finally:
        await app.close_parts()
    unlimited = open_app(store, clock, Config(max_time_limit_s=0))
    try:
        room = await unlimited.commands.create_room(
            {"variant": "swiss", "time_limit_ms": 0}, creator="t"
        )
        assert room.settings.time_limit_ms == 0
    finally:
        await unlimited.close_parts()


async def test_an_idle_lobby_closes_and_leaves_the_listing(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    """A lobby nobody is connected to closes after the lobby TTL (600 s by default), even
    one its players left; a lobby with a connected player stays open."""
    empty = await app.commands.create_room({"variant": "swiss"}, creator="t")
    kept = await app.commands.create_room({"variant": "swiss"}, creator="t")
    ann = Peer("ann")
    await join(app, ann, kept.id)
    clock.advance(599_000)
    await asyncio.sleep(0.05)
    assert empty.status is RoomStatus.LOBBY
    clock.advance(1_000)
    await until(lambda: empty.status is RoomStatus.CLOSED)
    assert [e.data["type"] for e in await store.read(empty.stream)][-1] == "room_closed"
    assert [r["id"] for r in await app.commands.list_rooms()] == [kept.id]
    with pytest.raises(NoSuchRoom):
        await app.commands.room(empty.id)
    assert kept.status is RoomStatus.LOBBY
    await app.commands.away(kept, "ann", ann.connection_id)  # her connection went
    clock.advance(600_000)
    await until(lambda: kept.status is RoomStatus.CLOSED)
    assert await app.commands.list_rooms() == []


async def test_one_session_holds_a_few_open_lobbies_at_most(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    lobbies = [
        await app.commands.create_room({"variant": "swiss"}, creator="greedy") for _ in range(5)
    ]
    with pytest.raises(TooManyLobbies):
        await app.commands.create_room({"variant": "swiss"}, creator="greedy")
    lobbies.append(await app.commands.create_room({"variant": "swiss"}, creator="someone"))
    assert await store.index_count(LIVE_INDEX) == 6
    # Closed lobbies (idle past the TTL) count neither as the session's nor as open rooms.
    clock.advance(600_000)
    await until(lambda: all(room.status is RoomStatus.CLOSED for room in lobbies))
    await asyncio.sleep(0.05)
    assert await store.index_count(LIVE_INDEX) == 0
    for _ in range(5):
        await app.commands.create_room({"variant": "swiss"}, creator="greedy")


async def test_rooms_made_for_their_members_are_not_the_creators_lobbies(
    app: App, store: MemoryEventStore
) -> None:
    # A match or a tournament's race names a racer as its creator: it is not a lobby they
    # opened, so it neither counts towards their limit nor is listed as theirs.
    for _ in range(6):
        await app.commands.create_room(
            {"variant": "swiss", "capacity": 2}, creator="racer", members=("racer", "rival")
        )
    assert await store.index_range(lobbies_index("racer")) == []
    for _ in range(5):
        await app.commands.create_room({"variant": "swiss"}, creator="racer")
    with pytest.raises(TooManyLobbies):
        await app.commands.create_room({"variant": "swiss"}, creator="racer")


class SlowIndexStore(MemoryEventStore):
    """Index writes that give the loop a few turns, as a round trip to Redis does."""

    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        await super().index_put(index, member, score, value)


async def test_two_processes_firing_one_countdown_start_the_race_once(clock: FakeClock) -> None:
    """Both processes' clocks fire the countdown. The second decided on the fold before the
    first's race_started was folded in (during its due-index write): it must append at the
    version it decided on, and so conflict, not after the first one's event."""
    store = SlowIndexStore()
    one, other = open_app(store, clock), open_app(store, clock)
    try:
        ann, bob = Peer("ann"), Peer("bob")
        room = await one.commands.create_room(
            {"variant": "quadrennial", "seed": SEED, "countdown_ms": 1000}, creator="test"
        )
        for peer in (ann, bob):
            await join(one, peer, room.id)
        there = await other.commands.room(room.id)  # followed by both processes
        await one.commands.start(room, "ann")
        await until(lambda: there.status is RoomStatus.COUNTDOWN)
        clock.advance(1000)
        await until(lambda: room.status is RoomStatus.RACING and there.status is RoomStatus.RACING)
        await asyncio.sleep(0.05)
        kinds = [e.data["type"] for e in await store.read(room.stream)]
        assert kinds.count("race_started") == 1, kinds
    finally:
        await one.close_parts()
        await other.close_parts()
