"""Unloading: ended rooms nobody here is in are forgotten after ``--unload-after-s``; the
store keeps them, and their next use loads them again as they were."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.app import App
from server.kernel.errors import NoSuchRoom
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.services.presence import held_index
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore, RedisEventStore
from server.store.redis_wakeups import RedisSubscription
from shared import legal_moves
from tests.server.parts import Peer, join, open_app, racing, until
from tests.server.store.conftest import unique_prefix
from tests.support.redis_server import RedisServer

AFTER_S = 300


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[App]:
    app = open_app(store, clock, Config(unload_after_s=AFTER_S))
    await app.unloader.aclose()  # these tests sweep by hand; the last one checks it runs alone
    yield app
    await app.close_parts()


async def finished_race(app: App, clock: FakeClock, peer: Peer) -> str:
    room = await racing(app, clock, [peer])
    await app.commands.games.resign(room, peer.session)
    await until(lambda: room.status is RoomStatus.FINISHED)
    app.delivery.detach(peer)  # the racer went away
    return room.id


async def test_an_ended_room_nobody_is_in_is_unloaded_after_the_delay_and_reloads_the_same(
    app: App, clock: FakeClock
) -> None:
    room_id = await finished_race(app, clock, Peer("ann"))
    before = app.hub.rooms[room_id]
    summary = before.finished_message()
    clock.advance(AFTER_S * 1000 - 1)
    assert await app.unloader.sweep() == []  # not a millisecond early
    clock.advance(1)
    assert await app.unloader.sweep() == [room_id]
    assert room_id not in app.hub.rooms
    assert room_id not in app.delivery.audiences
    assert app.hub._subscription is not None
    assert room_id not in app.hub._subscription.groups  # its wake-ups stopped
    assert app.live_figures()["rooms_unloaded"] == 1
    again = await app.commands.room(room_id)  # a late spectator, a replay: loaded again
    assert again is not before
    assert again.finished_message() == summary
    assert again.games.keys() == before.games.keys()
    assert [g.version for g in again.games.values()] == [g.version for g in before.games.values()]


async def test_a_room_with_someone_here_stays_until_they_leave(app: App, clock: FakeClock) -> None:
    room_id = await finished_race(app, clock, Peer("ann"))
    fan = Peer("fan")
    await join(app, fan, room_id, "spectator")
    clock.advance(AFTER_S * 1000)
    assert await app.unloader.sweep() == []
    app.delivery.detach(fan)
    assert await app.unloader.sweep() == [room_id]


async def test_a_live_room_is_never_unloaded(app: App, clock: FakeClock) -> None:
    ann = Peer("ann")
    room = await racing(app, clock, [ann])
    app.delivery.detach(ann)  # nobody here, but the race goes on
    clock.advance(AFTER_S * 1000 * 10)
    await until(lambda: room.status is RoomStatus.FINISHED)  # the time limit ended it
    assert room.finished is not None
    assert await app.unloader.sweep() == []  # it only just ended
    clock.advance(AFTER_S * 1000)
    assert await app.unloader.sweep() == [room.id]


async def test_a_closed_lobby_is_unloaded_too(app: App, clock: FakeClock) -> None:
    room = await app.commands.create_room({"variant": "swiss"}, creator="test")
    clock.advance(int(app.config.lobby_ttl_s * 1000))  # nobody came: the race clock closes it
    await until(lambda: room.status is RoomStatus.CLOSED)
    assert await app.unloader.sweep() == []
    clock.advance(AFTER_S * 1000)
    assert await app.unloader.sweep() == [room.id]


async def test_the_sweep_runs_by_itself_and_zero_turns_it_off() -> None:
    app = open_app(MemoryEventStore(), FakeClock(), Config(unload_after_s=AFTER_S))
    never = open_app(MemoryEventStore(), FakeClock(), Config(unload_after_s=0))
    try:
        for each in (app, never):
            assert isinstance(each.clock, FakeClock)
            room_id = await finished_race(each, each.clock, Peer("ann"))
            each.clock.advance(AFTER_S * 1000 * 2)
        await until(lambda: app.unloader.unloaded == 1)
        assert await never.unloader.sweep() == []
        assert room_id in never.hub.rooms
    finally:
        await app.close_parts()
        await never.close_parts()


async def test_a_viewer_who_comes_while_the_room_unloads_gets_the_fresh_fold(
    redis_server: RedisServer,
) -> None:
    """The unsubscribe is a round trip (here held 20 ms longer, as a slow network would): a
    spectator who joins meanwhile reloads the room; when the sweep ends the spectator is in the
    fresh fold's audience, and its channel is subscribed in Redis (the subscribe of the reload
    went after the unsubscribe of the unload, not before)."""
    store = RedisEventStore(redis_server.url, prefix=unique_prefix())
    app = open_app(store, FakeClock(), Config(unload_after_s=AFTER_S))
    await app.unloader.aclose()  # swept by hand, at the moment the test chooses
    try:
        assert isinstance(app.clock, FakeClock)
        room_id = await finished_race(app, app.clock, Peer("ann"))
        app.clock.advance(AFTER_S * 1000)
        subscription = app.hub._subscription
        assert isinstance(subscription, RedisSubscription)
        [reader] = subscription._readers.values()  # one Redis: one pub/sub connection
        pubsub = reader.pubsub
        sunsubscribe = pubsub.sunsubscribe

        async def slow_sunsubscribe(*channels: str) -> Any:
            await asyncio.sleep(0.02)
            return await sunsubscribe(*channels)

        pubsub.sunsubscribe = slow_sunsubscribe
        fan = Peer("fan")

        async def join_meanwhile() -> Room:
            await asyncio.sleep(0.005)  # the sweep has let go of the room, not yet returned
            assert room_id not in app.hub.rooms
            room, _ = await join(app, fan, room_id, "spectator")
            return room

        swept, room = await asyncio.gather(app.unloader.sweep(), join_meanwhile())
        assert swept == [room_id]
        assert app.hub.rooms[room_id] is room  # the fresh fold
        assert app.delivery.in_use(room_id)
        assert app.delivery.audiences[room_id].members.keys() == {fan}
        assert fan.of("finished")  # what the fresh fold shows a late viewer
        assert room_id in subscription.groups  # and it is followed: subscribed after the old
        channel = store.channel(room_id)
        raw = aioredis.Redis.from_url(redis_server.url)
        try:
            assert await raw.execute_command("PUBSUB", "SHARDNUMSUB", channel) == [
                channel.encode(),
                1,
            ]
        finally:
            await raw.aclose()
    finally:
        await app.close_parts()


async def test_an_ended_room_nobody_is_in_keeps_its_summary_only_until_it_is_used_again(
    app: App, clock: FakeClock
) -> None:
    ann, bob = Peer("ann"), Peer("bob")
    room = await racing(app, clock, [ann, bob])
    for peer in (ann, bob):
        for _ in range(3):
            game = room.games[peer.session]
            assert game.state is not None
            move = sorted(legal_moves(game.state))[0]
            await app.commands.games.move(room, peer.session, f"m{game.version}", move)
        await app.commands.games.resign(room, peer.session)
    await until(lambda: room.status is RoomStatus.FINISHED)
    full = {p: (g.version, g.state, list(g.public), g.progress) for p, g in room.games.items()}
    summary, state = room.finished_message(), app.delivery.room_state(room)
    for peer in (ann, bob):
        app.delivery.detach(peer)
    assert await app.unloader.sweep() == []
    assert app.hub.rooms[room.id] is room  # still loaded and followed, but compacted
    assert room.compacted
    assert all(g.state is None and not g.public and not g.cids for g in room.games.values())
    assert room.finished_message() == summary  # the results, ranking and reveal stay
    assert room.id not in app.delivery.audiences
    fan = Peer("fan")  # a late viewer: the games are read again, in place
    again, _ = await join(app, fan, room.id, "spectator")
    assert again is room
    assert not room.compacted
    assert {p: (g.version, g.state, g.public, g.progress) for p, g in room.games.items()} == full
    games = {m["player"]: m for m in fan.of("game")}
    assert {p: len(m["events"]) for p, m in games.items()} == {p: v for p, (v, *_) in full.items()}
    assert fan.of("finished") == [summary]
    assert fan.of("room")[0]["room"]["players"] == state["players"]


async def test_a_compacted_room_answers_a_resent_move_id_as_before(
    app: App, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room = await racing(app, clock, [ann])
    game = room.games[ann.session]
    assert game.state is not None
    version = await app.commands.games.move(
        room, ann.session, 7, sorted(legal_moves(game.state))[0]
    )
    await app.commands.games.resign(room, ann.session)
    await until(lambda: room.status is RoomStatus.FINISHED)
    app.delivery.detach(ann)
    await app.unloader.sweep()
    assert room.compacted
    resumed = await app.commands.resume(f"tok-{ann.session}")  # the racer comes back
    assert resumed == (room, ann.session)
    assert not room.compacted
    move = room.games[ann.session].cid_moves[7]
    assert move is not None
    assert await app.commands.games.move(room, ann.session, 7, move) == version


async def test_a_compacted_room_gone_from_the_store_is_forgotten(
    app: App, clock: FakeClock, store: MemoryEventStore
) -> None:
    room_id = await finished_race(app, clock, Peer("ann"))
    room = app.hub.rooms[room_id]
    await app.unloader.sweep()
    assert room.compacted
    for stream in room.streams():
        await store.expire(stream, 0)
    with pytest.raises(NoSuchRoom):
        await app.commands.room(room_id)
    assert room_id not in app.hub.rooms


async def test_an_unloaded_room_leaves_the_rooms_this_process_holds_seats_in(
    app: App, clock: FakeClock, store: MemoryEventStore
) -> None:
    room_id = await finished_race(app, clock, Peer("ann"))
    held = held_index(app.process)
    assert [e.member for e in await store.index_range(held)] == [room_id]
    clock.advance(AFTER_S * 1000)
    assert await app.unloader.sweep() == [room_id]
    assert await store.index_range(held) == []  # it would grow by every room ever seated
