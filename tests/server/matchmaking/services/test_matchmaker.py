"""The matchmaker's loop on the in-memory store with a fake clock: forming from the queue,
placing once, leaving, the widening range over time, a silent process's players dropped, and a
daily attempt claimed once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest

from server.app import App
from server.kernel.errors import AlreadyQueued, DailyPlayed, NotAllowed
from server.matchmaking.domain.queues import queue_key
from server.matchmaking.services.matchmaker import placed_index
from server.race.domain.lifecycle import RoomStatus
from server.race.services.presence import PROCESSES_INDEX
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from tests.server.parts import Peer, join, open_app, until

KEY = queue_key("swiss", 2, rated=True)

JOIN_WAIT_MS = int(Config().seat_wait_s * 1000)
"""How long a formed room waits for its members to sit down (the server's default)."""


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[App]:
    app = open_app(store, clock)
    await app.matchmaker.aclose()  # the test ticks it by hand
    yield app
    await app.close_parts()


class Waiter:
    def __init__(self) -> None:
        self.placed: list[str] = []
        self.statuses: list[dict[str, Any]] = []

    async def on_placed(self, room: str) -> None:
        self.placed.append(room)

    def on_status(self, status: dict[str, Any]) -> None:
        self.statuses.append(status)


async def queue(app: App, member: str, rating: int) -> Waiter:
    waiter = Waiter()
    await app.matchmaker.enqueue(
        KEY, member, rating, name=member, on_placed=waiter.on_placed, on_status=waiter.on_status
    )
    return waiter


async def settle(app: App) -> None:
    """One forming pass, and the placements it spawned run."""
    await app.matchmaker.tick()
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_process_with_nobody_queued_asks_the_store_nothing(
    app: App, store: MemoryEventStore
) -> None:
    asked: list[str] = []
    index_range = store.index_range

    async def counted(index: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(index)
        return await index_range(index, *args, **kwargs)

    store.index_range = counted  # type: ignore[method-assign]
    for _ in range(3):
        await settle(app)
    assert asked == []
    waiter = await queue(app, "ann", 1500)  # someone here: the placements are looked for
    await settle(app)
    assert placed_index(app.matchmaker.process) in asked
    assert waiter.placed == []


async def test_close_players_are_placed_once_in_one_room(app: App) -> None:
    a, b = await queue(app, "a", 1500), await queue(app, "b", 1550)
    with pytest.raises(AlreadyQueued):
        await queue(app, "a", 1500)
    await settle(app)
    assert a.placed == b.placed
    assert len(a.placed) == 1
    room = await app.commands.room(a.placed[0])
    assert room.settings.capacity == 2
    assert room.settings.rated
    assert set(room.settings.members) == {"a", "b"}
    with pytest.raises(NotAllowed):  # a stranger who found the code: the seats are theirs
        await app.commands.join(room, "x", name="x", token="tok-x", connection="c.x")
    await app.commands.join(room, "a", name="a", token="tok-a", connection="c.a")
    await settle(app)
    assert len(a.placed) == 1
    assert await app.store.queue_entries(KEY.name) == []


async def test_far_players_wait_for_the_range_to_widen(app: App, clock: FakeClock) -> None:
    a, b = await queue(app, "a", 1500), await queue(app, "b", 1750)
    await settle(app)
    assert a.placed == b.placed == []
    assert a.statuses[-1]["range"] == "±100"
    clock.advance(15_000)  # ±250 for both
    await settle(app)
    assert a.placed == b.placed
    assert a.placed


async def test_who_leaves_is_never_placed(app: App) -> None:
    a, b = await queue(app, "a", 1500), await queue(app, "b", 1500)
    assert await app.matchmaker.leave("a")
    assert not await app.matchmaker.leave("a")
    c = await queue(app, "c", 1500)
    await settle(app)
    assert a.placed == []
    assert b.placed == c.placed
    assert b.placed


async def test_who_leaves_after_being_taken_into_a_room_is_seated_in_it(app: App) -> None:
    # Another process took the group (a and b) a moment before a's leave reached the store.
    a, b = await queue(app, "a", 1500), await queue(app, "b", 1500)
    assert await app.store.queue_take(KEY.name, ["a", "b"])
    assert not await app.matchmaker.leave("a")  # answered not_queued: matched first
    room = await app.commands.create_room(
        {"variant": "swiss", "capacity": 2, "rated": True}, creator="a", members=("a", "b")
    )
    for member in ("a", "b"):
        await app.store.index_put(placed_index(app.process), member, 0, room.id.encode())
    await settle(app)
    assert a.placed == b.placed == [room.id]


async def test_a_closed_connection_is_never_seated(app: App) -> None:
    a, b = await queue(app, "a", 1500), await queue(app, "b", 1500)
    assert await app.store.queue_take(KEY.name, ["a", "b"])
    await app.matchmaker.gone("a")
    for member in ("a", "b"):
        await app.store.index_put(placed_index(app.process), member, 0, b"room1")
    await settle(app)
    assert a.placed == []
    assert b.placed == ["room1"]
    assert "a" not in app.matchmaker.tickets


async def test_a_formed_room_only_one_sat_down_in_closes_and_frees_them(
    app: App, clock: FakeClock
) -> None:
    a = await queue(app, "a", 1500)
    await queue(app, "b", 1500)  # b's connection closes before it is seated
    app.matchmaker.start()  # forms the room and times its start
    await until(lambda: bool(a.placed))
    peer = Peer("a")
    room, _ = await join(app, peer, a.placed[0])
    clock.advance(JOIN_WAIT_MS - 1)
    await settle(app)
    assert room.status is RoomStatus.LOBBY  # b may still come
    clock.advance(1)
    await until(lambda: room.status is RoomStatus.CLOSED)
    assert room.closed_reason == "unfilled"
    await until(lambda: app.delivery.member(peer) is None)  # out of it: may queue again
    closed = [m for m in peer.messages if m["type"] == "room"][-1]["room"]
    assert (closed["status"], closed["closed_reason"]) == ("closed", "unfilled")


async def test_a_matched_race_left_by_the_other_in_its_countdown_closes_and_frees_them(
    app: App,
) -> None:
    a, b = await queue(app, "a", 1500), await queue(app, "b", 1500)
    await settle(app)
    peers = {name: Peer(name) for name in ("a", "b")}
    for name in peers:
        room, _ = await join(app, peers[name], a.placed[0])
        await app.matchmaker.seated(room.id)
    assert room.status is RoomStatus.COUNTDOWN  # the last to sit down started it
    await app.commands.leave(room, "b")
    assert (room.status, room.closed_reason) == (RoomStatus.CLOSED, "unfilled")
    await until(lambda: app.delivery.member(peers["a"]) is None)  # may queue again
    closed = [m for m in peers["a"].messages if m["type"] == "room"][-1]["room"]
    assert (closed["status"], closed["closed_reason"]) == ("closed", "unfilled")
    assert b.placed == a.placed


async def test_a_ticket_whose_entry_was_lost_is_queued_again_in_its_place(
    app: App, clock: FakeClock
) -> None:
    queued_at = clock.now_ms()
    a = await queue(app, "a", 1500)
    # Taken, and its room never made (the store failed after the take): no placement comes.
    assert await app.store.queue_take(KEY.name, ["a"])
    await settle(app)
    clock.advance(JOIN_WAIT_MS - 1)
    await settle(app)
    assert await app.store.queue_entries(KEY.name) == []  # it may still be being placed
    clock.advance(1)
    await settle(app)
    (entry,) = await app.store.queue_entries(KEY.name)
    assert (entry.member, msgpack.unpackb(entry.value)["j"]) == ("a", queued_at)  # its place
    b = await queue(app, "b", 1500)
    await settle(app)
    assert a.placed == b.placed
    assert len(a.placed) == 1


async def test_the_players_of_a_silent_process_are_dropped(app: App, clock: FakeClock) -> None:
    # Another process queued "ghost", then stopped beating.
    value = msgpack.packb({"j": clock.now_ms(), "p": "deadbeef", "n": "ghost"})
    await app.store.queue_join(KEY.name, "ghost", 1500, value)
    await app.store.index_put(PROCESSES_INDEX, "deadbeef", clock.now_ms())
    clock.advance(60_000)
    await app.store.index_put(PROCESSES_INDEX, app.process, clock.now_ms())
    a = await queue(app, "a", 1500)
    await settle(app)
    assert a.placed == []
    assert [e.member for e in await app.store.queue_entries(KEY.name)] == ["a"]


async def test_the_players_of_a_process_already_taken_over_are_dropped(
    app: App, clock: FakeClock
) -> None:
    # The process that took over from a silent one forgets it at once (Commands.gone): the
    # queue must not need to see it silent first, or its players would wait there for good.
    value = msgpack.packb({"j": clock.now_ms(), "p": "deadbeef", "n": "ghost"})
    await app.store.queue_join(KEY.name, "ghost", 1500, value)
    await app.store.index_put(PROCESSES_INDEX, "deadbeef", clock.now_ms())
    clock.advance(60_000)
    await app.commands.gone("deadbeef", clock.now_ms() - 60_000)
    assert await app.store.index_get(PROCESSES_INDEX, "deadbeef") is None
    a = await queue(app, "a", 1500)
    await settle(app)
    assert a.placed == []
    assert [e.member for e in await app.store.queue_entries(KEY.name)] == ["a"]


async def test_one_daily_attempt_per_account(app: App) -> None:
    room = await app.daily.attempt("swiss", "ann", "Ann", "p1")
    assert room.settings.daily.startswith("swiss:")
    assert room.settings.capacity == 1
    with pytest.raises(DailyPlayed):
        await app.daily.attempt("swiss", "ann", "Ann", "p2")
    other = await app.daily.attempt("swiss", "bob", "Bob", "p3")
    assert other.settings.commitment == room.settings.commitment


async def test_nobody_found_in_time_gives_a_bot_near_the_players_rating(
    app: App, clock: FakeClock
) -> None:
    """After ``--quick-bot-after-s`` alone in the queue, the player's room is made with a bot
    in the other seat, unrated, and they are told; before it, they wait."""
    alone = await queue(app, "a", 1800)
    clock.advance(int(app.config.quick_bot_after_s * 1000) - 1)
    await settle(app)
    assert alone.placed == []
    assert alone.statuses == [] or alone.statuses[-1]["bot_in_ms"] >= 0
    clock.advance(1)
    await settle(app)
    (room_id,) = alone.placed
    room = await app.commands.room(room_id)
    (bot,) = room.bots()
    assert bot.bot == 5  # 300 above a new account's rating: two levels up from 3
    assert room.settings.members == ("a",)
    assert not room.rated
    await app.commands.join(room, "a", name="a", token="tok-a", connection="c.a")
    await app.matchmaker.seated(room.id)
    assert room.status is RoomStatus.COUNTDOWN
    assert await app.store.queue_entries(KEY.name) == []


async def test_no_bot_when_the_server_gives_none(store: MemoryEventStore, clock: FakeClock) -> None:
    app = open_app(store, clock, Config(quick_bot_after_s=0))
    await app.matchmaker.aclose()
    try:
        alone = await queue(app, "a", 1500)
        clock.advance(600_000)
        await settle(app)
        assert alone.placed == []
        assert (
            app.matchmaker.status(app.matchmaker.tickets["a"], clock.now_ms())["bot_in_ms"] is None
        )
    finally:
        await app.close_parts()


async def test_a_bot_race_whose_player_never_sits_down_closes(app: App, clock: FakeClock) -> None:
    alone = await queue(app, "a", 1500)
    clock.advance(int(app.config.quick_bot_after_s * 1000))
    await settle(app)
    (room_id,) = alone.placed  # told, but their connection closed before they sat down
    room = await app.commands.room(room_id)
    clock.advance(JOIN_WAIT_MS)
    await until(lambda: room.status is RoomStatus.CLOSED)  # bots never race on their own
