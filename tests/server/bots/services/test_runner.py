"""Bots on the server's parts (memory store, a clock moved by hand): seated by the creator,
played through the ordinary command path to the race's end, marked in every view, unrated,
refused where they do not belong, and taken over when the process running them is gone."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from server.app import App
from server.bots.domain.player import PATIENCE
from server.kernel.errors import NotAllowed, TooManyBots, WrongStatus
from server.race.domain.bot_seats import bot_connection
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.domain.progress import PlayerStatus
from server.race.services.presence import PROCESSES_INDEX
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.runtime.solver_pool import SolverPool
from server.store import MemoryEventStore
from tests.server.parts import Peer, join, open_app, until

FAST = Config(bot_floor_ms=200, bot_think_scale=0.05)


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[App]:
    app = open_app(store, clock, FAST)
    app._solver = SolverPool(ThreadPoolExecutor(1))  # the solver on a thread: no processes
    yield app
    await app.close_parts()


async def play_out(clock: FakeClock, room: Room, step_ms: int = 50) -> None:
    """Move the clock on until the race is over (the bots think on it)."""
    for _ in range(100_000):
        if room.status is RoomStatus.FINISHED:
            return
        clock.advance(step_ms)
        await asyncio.sleep(0.0005)
    raise AssertionError("the race never finished")


async def start_race(app: App, clock: FakeClock, room: Room, person: Peer) -> None:
    await app.commands.start(room, person.session)
    clock.advance(room.settings.countdown_ms)
    await until(lambda: room.status is RoomStatus.RACING)


@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
async def test_a_person_and_three_bots_race_to_the_end(
    app: App, clock: FakeClock, variant: str
) -> None:
    room = await app.commands.create_room(
        {"variant": variant, "capacity": 4, "bots": 3, "bot_level": 4}, creator="ann"
    )
    assert [s.bot for s in room.seats.values()] == [4, 4, 4]
    assert not room.rated  # a bot in it: no rating for anyone
    ann = Peer("ann")
    await join(app, ann, room.id)
    await start_race(app, clock, room, ann)
    await app.commands.games.resign(room, "ann")
    await play_out(clock, room)
    assert room.finished is not None
    ranking = room.finished.ranking
    assert sorted(r["bot"] or 0 for r in ranking) == [0, 4, 4, 4]
    for seat in room.bots():
        assert room.games[seat.player].progress.status.done
        assert room.games[seat.player].progress.moves > 0
    state = app.delivery.room_state(room)
    assert sorted(p["bot"] or 0 for p in state["players"]) == [0, 4, 4, 4]
    assert room.summary()["bots"].count(4) == 3


@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
async def test_a_stuck_bot_keeps_a_person_company_until_their_end(
    app: App, clock: FakeClock, variant: str
) -> None:
    room = await app.commands.create_room(
        {"variant": variant, "capacity": 2, "bots": 1, "bot_level": 1, "seed": "7"},
        creator="ann",
    )
    ann = Peer("ann")
    await join(app, ann, room.id)
    await start_race(app, clock, room, ann)
    [bot] = [seat.player for seat in room.bots()]
    for _ in range(6000):  # ten minutes of the bot's play while ann thinks
        clock.advance(100)
        await asyncio.sleep(0.0005)
    game = room.games[bot]
    assert room.status is RoomStatus.RACING
    assert game.progress.status is not PlayerStatus.RESIGNED  # stuck, maybe, but still there
    assert game.progress.moves > PATIENCE
    await app.commands.games.resign(room, "ann")
    await play_out(clock, room)  # ann is done: now the bot may give up, and the race ends
    assert game.progress.status.done


async def test_bot_moves_are_never_closer_than_the_floor(
    app: App, clock: FakeClock, store: MemoryEventStore
) -> None:
    room = await app.commands.create_room(
        {"variant": "quadrennial", "capacity": 3, "bots": 2, "bot_level": 1}, creator="ann"
    )
    ann = Peer("ann")
    await join(app, ann, room.id)
    await start_race(app, clock, room, ann)
    await app.commands.games.resign(room, "ann")
    await play_out(clock, room, step_ms=13)
    for seat in room.bots():
        times = [e.data["at"] for e in await store.read(room.games[seat.player].stream)]
        assert len(times) > 2
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= FAST.bot_floor_ms


async def test_the_creator_adds_bots_in_the_lobby_within_the_limits(app: App) -> None:
    room = await app.commands.create_room({"variant": "swiss", "capacity": 3}, creator="ann")
    assert room.rated
    with pytest.raises(NotAllowed):
        await app.commands.bot_seats.add(room, by="bob", level=2)
    await app.commands.bot_seats.add(room, by="ann", level=2)
    assert not room.rated  # made unrated, as docs/ratings.md says
    await app.commands.bot_seats.add(room, by="ann", level=5)
    with pytest.raises(TooManyBots):
        await app.commands.bot_seats.add(room, by="ann", level=5)
    names = [s.name for s in room.bots()]
    assert len(set(names)) == 2
    assert all("(bot " in n for n in names)
    with pytest.raises(TooManyBots):
        await app.commands.create_room({"variant": "swiss", "capacity": 2, "bots": 2}, creator="x")


async def test_no_bot_joins_a_race_under_way_or_a_quick_races_room(
    app: App, clock: FakeClock
) -> None:
    room = await app.commands.create_room({"variant": "swiss", "capacity": 3}, creator="ann")
    ann = Peer("ann")
    await join(app, ann, room.id)
    await start_race(app, clock, room, ann)
    with pytest.raises(WrongStatus):
        await app.commands.bot_seats.add(room, by="ann", level=2)
    quick = await app.commands.create_room(
        {"variant": "swiss", "capacity": 2}, creator="ann", members=("ann", "bob")
    )
    with pytest.raises(NotAllowed):
        await app.commands.bot_seats.add(quick, by="ann", level=2)


async def test_a_lobby_of_bots_alone_still_closes_when_its_people_are_gone(
    app: App, clock: FakeClock
) -> None:
    room = await app.commands.create_room(
        {"variant": "swiss", "capacity": 2, "bots": 1}, creator="ann"
    )
    assert room.idle_since is not None  # a bot's connection keeps no lobby open
    clock.advance(int(FAST.lobby_ttl_s * 1000) + 10)
    await until(lambda: room.status is RoomStatus.CLOSED)


async def test_a_bot_of_a_process_gone_is_claimed_once_and_plays_on(
    app: App, clock: FakeClock, store: MemoryEventStore
) -> None:
    """Another process's bot (its seat names a process that stopped beating) is claimed by
    this one at the room's version: one claim, and the game goes on here."""
    room = await app.commands.create_room(
        {"variant": "quadrennial", "capacity": 2, "bots": 1, "bot_level": 2}, creator="ann"
    )
    (bot,) = room.bots()
    ann = Peer("ann")
    await join(app, ann, room.id)
    # The bot was seated by a process "dead" that beat long ago: rewrite the hints as such.
    await app.bots.aclose()
    await start_race(app, clock, room, ann)
    stored = await store.read(room.stream)
    assert any(e.data.get("bot") for e in stored)
    await store.index_put(PROCESSES_INDEX, "dead", clock.now_ms() - 60_000)
    from server.race.domain.events import PlayerBack

    await app.commands.loop.run(room, lambda now: [PlayerBack(now, bot.player, "dead.bot.x")])
    runner = type(app.bots)(app.commands, clock, replace(FAST), app.solver)
    app.hub.listen(runner.on_change)
    try:
        await asyncio.gather(runner.scan(), runner.scan())  # two passes race: one claim
        seat = room.seats[bot.player]
        assert seat.connection == bot_connection(app.process, bot.player)
        claims = [e for e in await store.read(room.stream) if e.data["type"] == "player_back"]
        assert len(claims) == 2  # the test's own, then exactly one claim
        await app.commands.games.resign(room, "ann")
        await play_out(clock, room)
        assert room.games[bot.player].progress.moves > 0
    finally:
        await runner.aclose()


async def test_a_rematch_brings_the_races_bots_back(app: App, clock: FakeClock) -> None:
    room = await app.commands.create_room(
        {"variant": "quadrennial", "capacity": 3, "bots": 2, "bot_level": 1}, creator="ann"
    )
    ann = Peer("ann")
    await join(app, ann, room.id)
    await start_race(app, clock, room, ann)
    await app.commands.games.resign(room, "ann")
    await play_out(clock, room)
    again = await app.commands.room(await app.commands.rematch(room, "ann", creator="ann"))
    assert [s.bot for s in again.bots()] == [1, 1]
    assert not again.rated
