"""Commands in process (memory store, fake clock, fake connections): decide, append, fold."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.app import App
from server.kernel.errors import IdReused, TooManyRooms, WrongStatus
from server.race.domain.lifecycle import RoomStatus
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from shared import apply_move, legal_moves, new_game
from tests.server.parts import DECK, SEED, Peer, join, open_app, racing, until


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[App]:
    app = open_app(store, clock, Config(max_rooms=3))
    yield app
    await app.close_parts()


async def test_moves_dedup_and_all_done(app: App, clock: FakeClock) -> None:
    ann, bob = Peer("ann"), Peer("bob")
    room = await racing(app, clock, [ann, bob])
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    assert await app.commands.games.move(room, "ann", 7, move) == 2
    assert room.games["ann"].version == 2  # the process's own append is folded on the spot
    assert await app.commands.games.move(room, "ann", 7, move) == 2
    await app.commands.games.resign(room, "ann")
    with pytest.raises(WrongStatus):
        await app.commands.start(room, "bob")
    await app.commands.games.resign(room, "bob")
    await until(lambda: room.status is RoomStatus.FINISHED)
    ranking = ann.of("finished")[0]["ranking"]
    assert [r["status"] for r in ranking] == ["resigned", "resigned"]


async def test_leaving_an_ended_race_asks_the_store_nothing(app: App, clock: FakeClock) -> None:
    # Racers leave a finished race by the hundred when a tournament pairs its next round.
    ann, bob = Peer("ann"), Peer("bob")
    room = await racing(app, clock, [ann, bob])
    for racer in ("ann", "bob"):
        await app.commands.games.resign(room, racer)
    await until(lambda: room.status is RoomStatus.FINISHED)
    syncs: list[str] = []
    sync = app.hub.sync

    async def counted(synced: object) -> None:
        syncs.append(room.id)
        await sync(synced)  # type: ignore[arg-type]

    app.hub.sync = counted  # type: ignore[method-assign]
    version = room.version
    await app.commands.leave(room, "ann")
    await app.commands.away(room, "ann", ann.connection_id)
    assert syncs == []
    assert room.version == version
    assert list(room.seats) == ["ann", "bob"]


async def test_moves_validate_against_the_fold_their_own_appends_left(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room = await racing(app, clock, [ann])
    game = room.games["ann"]
    assert game.state is not None
    state = game.state
    played = []
    for cid in range(1, 9):
        move = sorted(legal_moves(state))[0]
        assert await app.commands.games.move(room, "ann", cid, move) == cid + 1
        played.append(move)
        state = apply_move(state, move)
    assert game.state == state
    assert (
        await app.commands.games.move(room, "ann", 3, played[2]) == 4
    )  # a resent id, answered again
    with pytest.raises(IdReused):
        await app.commands.games.move(room, "ann", 3, "not even a move")
    stored = await store.read(game.stream)
    assert [e.data.get("move") for e in stored[1:]] == played
    assert [m["version"] for m in ann.of("game_event")] == list(range(1, 10))


async def test_leaving_the_countdown_empty_goes_back_to_the_lobby(
    app: App, clock: FakeClock
) -> None:
    ann = Peer("ann")
    room = await app.commands.create_room(
        {"variant": "swiss", "countdown_ms": 1000}, creator="test"
    )
    await join(app, ann, room.id)
    await app.commands.start(room, "ann")
    await app.commands.leave(room, "ann")
    assert room.status is RoomStatus.LOBBY
    assert room.seats == {}
    clock.advance(1000)
    await asyncio.sleep(0.02)
    assert room.status is RoomStatus.LOBBY


async def test_too_many_rooms(app: App) -> None:
    for _ in range(3):
        await app.commands.create_room({"variant": "swiss"}, creator="test")
    with pytest.raises(TooManyRooms):
        await app.commands.create_room({"variant": "swiss"}, creator="test")


async def test_a_move_right_after_started_finds_its_game(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    """`started` can reach a client before the game streams are written: the move still lands."""
    ann = Peer("ann")

    async def too_late(_room: object) -> None:
        return None

    app.commands.timed.start_games = too_late  # type: ignore[method-assign,assignment]
    room = await app.commands.create_room(
        {"variant": "quadrennial", "seed": SEED, "countdown_ms": 0}, creator="test"
    )
    await join(app, ann, room.id)
    await app.commands.start(room, "ann")
    await until(lambda: room.status is RoomStatus.RACING)
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    assert await app.commands.games.move(room, "ann", 1, move) == 2
    assert [e.data["type"] for e in await store.read(room.games["ann"].stream)] == [
        "game_started",
        "moved",
    ]


async def test_a_token_resumes_the_latest_seat_also_after_a_restart(
    app: App, store: MemoryEventStore, clock: FakeClock
) -> None:
    ann = Peer("ann")
    first = await racing(app, clock, [ann])
    await app.commands.leave(first, "ann")  # resigns; the seat stays
    clock.advance(10)
    second = await app.commands.create_room({"variant": "swiss"}, creator="test")
    await join(app, ann, second.id)
    found = await app.commands.resume("tok-ann")
    assert found is not None
    assert (found[0].id, found[1]) == (second.id, "ann")
    await app.close_parts()
    again = open_app(store, clock)
    try:
        found = await again.commands.resume("tok-ann")
        assert found is not None
        assert found[0].id == second.id
        assert set(again.hub.rooms) == {second.id}  # nothing else was loaded to find it
    finally:
        await again.close_parts()
    assert await app.commands.resume("no such token") is None


async def test_racers_asking_for_a_rematch_at_once_share_one_room(
    app: App, clock: FakeClock
) -> None:
    ann, bob, cy = Peer("ann"), Peer("bob"), Peer("cy")
    room = await racing(app, clock, [ann, bob, cy])
    for player in ("ann", "bob", "cy"):
        await app.commands.games.resign(room, player)
    await until(lambda: room.status is RoomStatus.FINISHED)
    asked = await asyncio.gather(
        *(app.commands.rematch(room, p, creator=p) for p in ("ann", "bob", "cy"))
    )
    assert asked[0] == asked[1] == asked[2] == room.rematch
    rooms = {r["id"]: r for r in await app.commands.list_rooms()}
    lobbies = [r for r in rooms.values() if r["status"] == "lobby"]
    assert [r["id"] for r in lobbies] == [room.rematch]  # the others' rooms closed at once
    assert len(rooms) == 2  # the race and its rematch; closed rooms leave the list
    made = [r for r in app.hub.rooms.values() if r.meta and r.meta.creator != "test"]
    assert len(made) == 3  # all three asked before any offer was folded: two were closed
    assert sorted(r.status.value for r in made) == ["closed", "closed", "lobby"]
