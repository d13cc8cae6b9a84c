"""The hub on both stores: lazy loads equal the live fold, lost wake-ups are caught up, and a
thousand followed rooms cost no more store connections than one."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.app import App
from server.race.domain.events import PlayerLeft, RaceStarted, RoomCreated, encode
from server.race.domain.model import room_stream
from server.race.services.hub import load_many
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore, MemoryEventStore, RedisEventStore, Wakeup
from shared import legal_moves
from tests.server.parts import Peer, join, open_app, racing, until
from tests.support.redis_server import RedisServer

FAST = Config(catch_up_s=0.05)


class Stores:
    """Store objects on one backend: each server process has its own (memory: one shared)."""

    def __init__(self, kind: str, redis: RedisServer) -> None:
        self.kind = kind
        self.redis = redis
        self.prefix = f"t{uuid.uuid4().hex[:10]}:"
        self.made: list[EventStore] = []
        self.memory = MemoryEventStore()

    def new(self, **options: object) -> EventStore:
        if self.kind == "memory":
            return self.memory
        store = RedisEventStore(self.redis.url, prefix=self.prefix, **options)  # type: ignore[arg-type]
        self.made.append(store)
        return store

    async def aclose(self) -> None:
        for store in self.made:
            await store.aclose()
        await self.memory.aclose()


@pytest.fixture(params=["memory", "redis"])
async def stores(
    request: pytest.FixtureRequest, redis_server: RedisServer
) -> AsyncIterator[Stores]:
    found = Stores(request.param, redis_server)
    yield found
    await found.aclose()


async def play(app: App, clock: FakeClock, count: int) -> str:
    """A two-racer room where ann plays ``count`` moves and bob plays until stuck, resigning."""
    ann, bob = Peer("ann"), Peer("bob")
    room = await racing(app, clock, [ann, bob])
    for peer, moves in (("ann", count), ("bob", 400)):
        game = room.games[peer]
        for cid in range(moves):
            assert game.state is not None
            if game.progress.status.done:
                break
            options = sorted(legal_moves(game.state))
            if not options:
                await app.commands.games.resign(room, peer)
                break
            clock.advance(7 if cid % 3 else 1000)
            await app.commands.games.move(room, peer, cid, options[(cid * 7) % len(options)])
    return room.id


async def test_a_restart_loads_rooms_on_first_use_to_what_the_live_fold_reached(
    stores: Stores,
) -> None:
    clock = FakeClock()
    app = open_app(stores.new(), clock, FAST)
    room_id = await play(app, clock, 40)
    room = app.hub.rooms[room_id]
    live = {p: (g.state, g.version, g.progress, g.public, g.cids) for p, g in room.games.items()}
    assert live["bob"][2].status.done
    await app.close_parts()

    again = open_app(stores.new(), clock, FAST)
    try:
        assert again.hub.rooms == {}  # nothing is folded before it is used
        loaded = await again.hub.room(room_id)
        assert loaded is not None
        for player, (state, version, progress, public, cids) in live.items():
            game = loaded.games[player]
            assert (game.state, game.version, game.progress) == (state, version, progress)
            assert (game.public, game.cids) == (public, cids)
        assert loaded.status.value == "racing"  # ann still plays
        assert await again.hub.room("nosuchroom") is None
    finally:
        await again.close_parts()


async def test_a_room_made_here_is_followed_from_its_first_event_without_reading_it_back(
    stores: Stores,
) -> None:
    """The creator folds the event it appended; another process's join then wakes it."""
    clock = FakeClock()
    maker_store, other_store = stores.new(), stores.new()
    maker = open_app(maker_store, clock, FAST)
    other = open_app(other_store, clock, FAST)
    try:
        reads: list[str] = []
        read = maker_store.read

        async def counted(stream: str, *args: object, **kwargs: object) -> object:
            reads.append(stream)
            return await read(stream, *args, **kwargs)  # type: ignore[arg-type]

        maker_store.read = counted  # type: ignore[assignment, method-assign]
        room = await maker.commands.create_room({"variant": "swiss"}, creator="ann")
        assert maker.hub.rooms[room.id] is room
        assert room.version == 1
        assert reads == []
        maker_store.read = read  # type: ignore[method-assign]
        await join(other, Peer("bob"), room.id, "player")
        await until(lambda: "bob" in room.seats)
    finally:
        await other.close_parts()
        await maker.close_parts()


async def test_a_lost_wake_up_is_caught_up(stores: Stores) -> None:
    """Two processes on one store; the watcher's process loses every wake-up of a stretch:
    the periodic catch-up still brings each event, in order, to its spectator."""
    clock = FakeClock()
    writer = open_app(stores.new(), clock, FAST)
    watcher = open_app(stores.new(), clock, FAST)
    try:
        ann = Peer("ann")
        room = await racing(writer, clock, [ann])
        far = Peer("far")
        await join(watcher, far, room.id, "spectator")  # its snapshot may lag a wake-up behind
        await watcher.hub.sync(watcher.hub.rooms[room.id])
        subscription = watcher.hub._subscription
        assert subscription is not None
        dropped: list[Wakeup] = []
        deliver = subscription.deliver
        subscription.deliver = dropped.append  # type: ignore[method-assign]
        game = room.games["ann"]
        for cid in range(5):
            assert game.state is not None
            await writer.commands.games.move(room, "ann", cid, sorted(legal_moves(game.state))[0])
        if stores.kind == "memory":
            assert len(dropped) == 5  # one store object: the writer's appends reached it too
        subscription.deliver = deliver  # type: ignore[method-assign]
        await until(lambda: [m["version"] for m in far.of("game_event")][-1:] == [6])
        moves = [m["version"] for m in far.of("game_event") if m["version"] > 1]
        assert moves == [2, 3, 4, 5, 6]
        assert watcher.hub.catch_ups > 0
    finally:
        await watcher.close_parts()
        await writer.close_parts()


async def test_a_thousand_rooms_followed_on_a_bounded_number_of_connections(
    stores: Stores,
) -> None:
    clock = FakeClock()
    name = f"hub-{uuid.uuid4().hex[:8]}"
    store = stores.new(client_name=name, max_connections=12)
    app = open_app(store, clock, FAST)
    writer = stores.new()
    try:
        ids = [f"r{n:04d}" for n in range(1000)]
        event = encode(
            RoomCreated(
                variant="swiss",
                seed="s",
                deck=None,
                salt="00",
                commitment="c",
                deal_version=1,
                capacity=2,
                countdown_ms=0,
                time_limit_ms=0,
                spectator_delay_ms=0,
                open_seed=False,
                winnable=False,
                creator=None,
                at=clock.now_ms(),
            )
        )
        for room_id in ids:
            await writer.append(room_stream(room_id), [event], expected_version=0)
        await load_many(app.hub, ids)
        assert len(app.hub.rooms) == 1000
        joined = encode(PlayerLeft(clock.now_ms(), "nobody"))
        for room_id in ids[::100]:  # another process writes to some of them: all are heard
            await writer.append(room_stream(room_id), [joined], expected_version=1)
        await until(lambda: all(app.hub.rooms[r].version == 2 for r in ids[::100]))
        if isinstance(store, RedisEventStore):
            raw = aioredis.Redis.from_url(stores.redis.url)
            try:
                clients = await raw.client_list()
            finally:
                await raw.aclose()
            ours = [c for c in clients if c.get("name") == name]
            assert 1 <= len(ours) <= 16
    finally:
        await app.close_parts()
        await asyncio.sleep(0)


async def test_a_stream_that_went_back_is_folded_again() -> None:
    """A failover can lose acknowledged events (Redis replicates asynchronously): the fold is
    then ahead of the stream, and the hub folds the room again from the stream, the truth."""
    store = MemoryEventStore()
    clock = FakeClock()
    app = open_app(store, clock, FAST)
    try:
        room = await racing(app, clock, [Peer("ann")])
        game = room.games["ann"]
        for cid in range(4):
            assert game.state is not None
            await app.commands.games.move(room, "ann", cid, sorted(legal_moves(game.state))[0])
        assert game.version == 5
        store._streams[game.stream].entries[3:] = []  # the last two moves are lost
        await app.hub.sync(room)
        again = room.games["ann"]
        assert again.version == 3
        assert again.state is not None
        version = await app.commands.games.move(
            room, "ann", "next", sorted(legal_moves(again.state))[0]
        )
        assert version == 4  # play goes on from what the store holds
    finally:
        await app.close_parts()


async def test_a_room_event_its_lifecycle_refuses_is_skipped_not_fatal() -> None:
    """A second race_started (a stream written by hand, or a bug) is logged and skipped: the
    room still loads and plays."""
    store = MemoryEventStore()
    clock = FakeClock()
    app = open_app(store, clock, FAST)
    try:
        room = await racing(app, clock, [Peer("ann")])
        again = encode(RaceStarted(clock.now_ms(), None))
        last = await store.append(room.stream, [again], expected_version=room.version)
    finally:
        await app.close_parts()
    fresh = open_app(store, clock, FAST)
    try:
        loaded = await fresh.hub.room(room.id)
        assert loaded is not None
        assert loaded.status.value == "racing"
        assert loaded.version == last
    finally:
        await fresh.close_parts()
