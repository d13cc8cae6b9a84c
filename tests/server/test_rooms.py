"""Rooms in process (memory store, fake clock, fake connections): timers, delay, rebuild."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import msgpack
import pytest

from server.clock import FakeClock
from server.config import Config
from server.connection import TokenBucket
from server.errors import TooManyRooms, WrongStatus
from server.race import RoomStatus
from server.rooms import RoomManager
from server.store import MemoryEventStore
from shared import apply_move, deal_deck, legal_moves, new_game, public_fold

SEED = "rooms-unit"
DECK = deal_deck("quadrennial", SEED)


class Peer:
    def __init__(self, session: str) -> None:
        self.session = session
        self.messages: list[dict[str, Any]] = []
        self.closed: list[int] = []

    def send(self, msg: dict[str, Any] | bytes) -> None:
        self.messages.append(msgpack.unpackb(msg) if isinstance(msg, bytes) else msg)

    def close_soon(self, code: int, reason: str) -> None:
        self.closed.append(code)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == kind]


def send_many(peers: Iterable[Any], msg: dict[str, Any] | bytes) -> None:
    for peer in peers:
        peer.send(msg)


async def until(ready: Callable[[], bool]) -> None:
    """Let the event loop run until ``ready`` (the follower and timers are tasks)."""
    for _ in range(5000):
        if ready():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the condition never came true")


@pytest.fixture
async def store() -> AsyncIterator[MemoryEventStore]:
    s = MemoryEventStore()
    yield s
    await s.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def rooms(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[RoomManager]:
    manager = RoomManager(store, clock, Config(max_rooms=3), send_many)
    await manager.rebuild()
    yield manager
    await manager.aclose()


async def racing(rooms: RoomManager, clock: FakeClock, players: list[Peer], **opts: Any) -> str:
    room = await rooms.create_room(
        {"variant": "quadrennial", "seed": SEED, "countdown_ms": 1000, **opts}
    )
    for peer in players:
        await rooms.join(peer, room.id, "player", name=peer.session, token=f"tok-{peer.session}")
    await rooms.start_race(players[0])
    assert room.status is RoomStatus.COUNTDOWN
    clock.advance(999)
    await asyncio.sleep(0.01)
    assert room.status is RoomStatus.COUNTDOWN  # not a millisecond early
    clock.advance(1)
    await until(lambda: all(room.games[p.session].version == 1 for p in players))
    assert room.status is RoomStatus.RACING
    assert room.started_at == clock.now_ms()
    return room.id


async def test_countdown_and_time_limit_come_from_the_clock(
    rooms: RoomManager, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room_id = await racing(rooms, clock, [ann], time_limit_ms=60_000)
    room = rooms.rooms[room_id]
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


async def test_moves_dedup_and_all_done(rooms: RoomManager, clock: FakeClock) -> None:
    ann, bob = Peer("ann"), Peer("bob")
    room_id = await racing(rooms, clock, [ann, bob])
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    assert await rooms.move(ann, 7, move, None) == 2
    assert await rooms.move(ann, 7, move, None) == 2
    await until(lambda: rooms.rooms[room_id].games["ann"].version == 2)  # acked before folded
    await rooms.resign(ann)
    with pytest.raises(WrongStatus):
        await rooms.start_race(bob)
    await rooms.resign(bob)
    room = rooms.rooms[room_id]
    await until(lambda: room.status is RoomStatus.FINISHED)
    ranking = ann.of("finished")[0]["ranking"]
    assert [r["status"] for r in ranking] == ["resigned", "resigned"]


async def test_spectator_delay_holds_back_events(rooms: RoomManager, clock: FakeClock) -> None:
    ann, early, late = Peer("ann"), Peer("early"), Peer("late")
    room_id = await racing(rooms, clock, [ann], spectator_delay_ms=5000)
    room = rooms.rooms[room_id]
    await rooms.join(early, room_id, "spectator", name="e", token="te")
    assert [(g["version"], g["events"]) for g in early.of("game")] == [(0, [])]  # held back
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    await rooms.move(ann, 1, move, None)
    await until(lambda: len(ann.of("game_event")) == 2)  # the player at once
    assert [m["version"] for m in ann.of("game_event")] == [1, 2]
    assert early.of("game_event") == []
    assert early.of("progress") == []
    clock.advance(5000)
    await until(lambda: len(early.of("game_event")) == 2)
    await rooms.join(late, room_id, "spectator", name="l", token="tl")
    snapshot = late.of("game")[0]
    assert snapshot["version"] == 2
    assert early.of("room")[0]["room"]["players"][0]["status"] == "waiting"  # not even started
    assert late.of("room")[0]["room"]["players"][0]["moves"] == 1
    assert public_fold(snapshot["events"]) == public_fold(
        [m["event"] for m in early.of("game_event")]
    )
    assert room.games["ann"].released == 2


async def test_rebuild_restores_rooms_games_dedup_and_timers(
    rooms: RoomManager, store: MemoryEventStore, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room_id = await racing(rooms, clock, [ann])
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    await rooms.move(ann, "m1", move, None)
    waiting = await rooms.create_room({"variant": "swiss", "countdown_ms": 2000})
    bob = Peer("bob")
    await rooms.join(bob, waiting.id, "player", name="bob", token="tok-bob")
    await rooms.start_race(bob)
    await rooms.aclose()

    again = RoomManager(store, clock, Config(), send_many)
    await again.rebuild()
    try:
        room = again.rooms[room_id]
        assert room.status is RoomStatus.RACING
        assert room.games["ann"].version == 2
        found = await again.resume("tok-ann")
        assert found is not None
        assert found[1] == "ann"
        ann2 = Peer("ann")
        again.attach_resumed(ann2, room, "ann")
        assert await again.move(ann2, "m1", move, None) == 2  # the old id, not applied again
        assert again.rooms[waiting.id].status is RoomStatus.COUNTDOWN
        clock.advance(2000)
        await until(lambda: again.rooms[waiting.id].status is RoomStatus.RACING)
    finally:
        await again.aclose()


async def test_leaving_the_countdown_empty_goes_back_to_the_lobby(
    rooms: RoomManager, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room = await rooms.create_room({"variant": "swiss", "countdown_ms": 1000})
    await rooms.join(ann, room.id, "player", name="ann", token="t")
    await rooms.start_race(ann)
    await rooms.leave(ann)
    assert room.status is RoomStatus.LOBBY
    assert room.seats == {}
    clock.advance(1000)
    await asyncio.sleep(0.01)
    assert room.status is RoomStatus.LOBBY


async def test_too_many_rooms(rooms: RoomManager) -> None:
    for _ in range(3):
        await rooms.create_room({"variant": "swiss"})
    with pytest.raises(TooManyRooms):
        await rooms.create_room({"variant": "swiss"})


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(rate=2, burst=3, now=lambda: now[0])
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] += 0.5
    assert [bucket.take(), bucket.take()] == [True, False]


async def test_a_move_right_after_started_finds_its_game(
    rooms: RoomManager, store: MemoryEventStore, clock: FakeClock
) -> None:
    """`started` can reach a client before the game streams are written: the move still lands."""
    ann = Peer("ann")

    async def too_late(_room: object) -> None:
        return None

    rooms._ensure_games_started = too_late  # type: ignore[method-assign]
    room = await rooms.create_room({"variant": "quadrennial", "seed": SEED, "countdown_ms": 0})
    await rooms.join(ann, room.id, "player", name="ann", token="t")
    await rooms.start_race(ann)
    await until(lambda: room.status is RoomStatus.RACING)
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    assert await rooms.move(ann, 1, move, None) == 2
    assert [e.data["type"] for e in await store.read(room.games["ann"].stream)] == [
        "game_started",
        "moved",
    ]


async def test_a_token_resumes_the_latest_seat_after_a_rebuild(
    rooms: RoomManager, store: MemoryEventStore, clock: FakeClock
) -> None:
    ann = Peer("ann")
    first = await racing(rooms, clock, [ann])
    await rooms.leave(ann)  # resigns; the seat stays
    clock.advance(10)
    second = await rooms.create_room({"variant": "swiss"})
    await rooms.join(ann, second.id, "player", name="ann", token="tok-ann")
    found = await rooms.resume("tok-ann")
    assert found is not None
    assert (found[0].id, found[1]) == (second.id, "ann")
    await rooms.aclose()
    for order in (1, -1):  # whichever room the rebuild folds last
        again = RoomManager(store, clock, Config(), send_many)
        for room_id in [first, second.id][::order]:
            await again.load(room_id)
        try:
            found = await again.resume("tok-ann")
            assert found is not None
            assert found[0].id == second.id
        finally:
            await again.aclose()


async def test_a_seat_resumed_elsewhere_closes_the_old_connection(
    rooms: RoomManager, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room_id = await racing(rooms, clock, [ann])
    found = await rooms.resume("tok-ann")
    assert found is not None
    again = Peer("ann")
    rooms.attach_resumed(again, found[0], found[1])
    assert ann.closed == [4001]
    assert rooms.member(ann) is None
    assert [m["type"] for m in again.messages] == ["room", "game"]
    assert again.of("game")[0]["version"] == 1
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    assert await rooms.move(again, 1, move, None) == 2
    await until(lambda: rooms.rooms[room_id].games["ann"].version == 2)


@pytest.mark.parametrize("in_child", [False, True], ids=["one-process", "forked-child"])
async def test_a_rebuild_folds_each_game_in_bulk_to_what_the_live_fold_reached(
    rooms: RoomManager, store: MemoryEventStore, clock: FakeClock, in_child: bool
) -> None:
    """Progress, state, public events and move ids: bulk (rebuild) equals one event at a time,
    also for the games a forked child folds (a rebuild with many events folds half there)."""
    ann, bob = Peer("ann"), Peer("bob")
    room_id = await racing(rooms, clock, [ann, bob])
    room = rooms.rooms[room_id]
    for peer, count in ((ann, 40), (bob, 400)):  # bob plays until stuck, then resigns
        for cid in range(count):
            game = room.games[peer.session]
            assert game.state is not None
            if game.progress.status.done:
                break
            options = sorted(legal_moves(game.state))
            if not options:
                await rooms.resign(peer)
                break
            clock.advance(7 if cid % 3 else 1000)
            version = await rooms.move(peer, cid, options[(cid * 7) % len(options)], None)
            await until(lambda v=version, g=game: g.version == v)
    live = {p: (g.state, g.version, g.progress, g.public, g.cids) for p, g in room.games.items()}
    assert live["bob"][2].status.done
    assert live["bob"][2].finished_at is not None
    await rooms.aclose()

    again = RoomManager(store, clock, Config(), send_many)
    if in_child:
        again.parallel_fold_min_events = 0
    await again.rebuild()
    try:
        # the server forks only while it runs no other thread (a fork would copy held locks)
        forked = in_child and threading.active_count() == 1
        assert again.folded_elsewhere == (1 if forked else 0)
        rebuilt = again.rooms[room_id].games
        for player, (state, version, progress, public, cids) in live.items():
            assert rebuilt[player].state == state
            assert rebuilt[player].version == version
            assert rebuilt[player].progress == progress
            assert rebuilt[player].public == public
            assert rebuilt[player].cids == cids
            assert rebuilt[player].released == version
            assert rebuilt[player].shown == progress
        assert again.rooms[room_id].status is RoomStatus.RACING  # ann still plays
    finally:
        await again.aclose()


async def test_moves_are_acked_on_append_and_the_next_is_checked_against_the_accepted_state(
    rooms: RoomManager, store: MemoryEventStore, clock: FakeClock
) -> None:
    """A move is acked once appended; the next one, sent before the follower folded the first,
    is validated against the state the first one left (not the follower's older fold)."""
    ann = Peer("ann")
    room_id = await racing(rooms, clock, [ann])
    game = rooms.rooms[room_id].games["ann"]
    assert game.state is not None
    state = game.state
    played = []
    for cid in range(1, 9):
        move = sorted(legal_moves(state))[0]
        assert await rooms.move(ann, cid, move, None) == cid + 1
        played.append(move)
        state = apply_move(state, move)
    assert game.version < 9  # the follower is behind: the moves went by the accepted state
    assert await rooms.move(ann, 3, "not even a move", None) == 4  # a resent id, answered
    await until(lambda: game.version == 9)
    assert game.state == state
    stored = await store.read(game.stream)
    assert [e.data.get("move") for e in stored[1:]] == played
    assert [m["version"] for m in ann.of("game_event")] == list(range(1, 10))
