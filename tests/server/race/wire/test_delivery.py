"""Delivery in process: who gets what, the spectator delay, a seat taken over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.app import App
from server.race.wire.audience import Role
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from shared import legal_moves, new_game, public_fold
from tests.server.parts import DECK, Peer, join, open_app, racing, until
from tests.server.wsclient import greedy_moves


@pytest.fixture
async def app() -> AsyncIterator[App]:
    store = MemoryEventStore()
    app = open_app(store, FakeClock())
    yield app
    await app.close_parts()


@pytest.fixture
def clock(app: App) -> FakeClock:
    assert isinstance(app.clock, FakeClock)
    return app.clock


async def test_spectator_delay_holds_back_events(app: App, clock: FakeClock) -> None:
    ann, early, late = Peer("ann"), Peer("early"), Peer("late")
    room = await racing(app, clock, [ann], spectator_delay_ms=5000)
    await join(app, early, room.id, "spectator")
    assert [(g["version"], g["events"]) for g in early.of("game")] == [(0, [])]  # held back
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    await app.commands.games.move(room, "ann", 1, move)
    await until(lambda: len(ann.of("game_event")) == 2)  # the player at once
    assert [m["version"] for m in ann.of("game_event")] == [1, 2]
    assert early.of("game_event") == []
    assert early.of("progress") == []
    clock.advance(5000)
    await until(lambda: len(early.of("game_event")) == 2)
    await join(app, late, room.id, "spectator")
    snapshot = late.of("game")[0]
    assert snapshot["version"] == 2
    assert early.of("room")[0]["room"]["players"][0]["status"] == "waiting"  # not even started
    assert late.of("room")[0]["room"]["players"][0]["moves"] == 1
    assert public_fold(snapshot["events"]) == public_fold(
        [m["event"] for m in early.of("game_event")]
    )
    assert app.delivery.audience(room).released["ann"] == 2


async def test_a_seat_taken_over_closes_the_old_connection(app: App, clock: FakeClock) -> None:
    ann = Peer("ann")
    room = await racing(app, clock, [ann])
    found = await app.commands.resume("tok-ann")
    assert found is not None
    again = Peer("ann")
    app.delivery.attach(found[0], again, Role.PLAYER, player=found[1])
    assert ann.closed == [4001]
    assert app.delivery.member(ann) is None
    assert [m["type"] for m in again.messages] == ["room", "game"]
    assert again.of("game")[0]["version"] == 1
    move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    assert await app.commands.games.move(room, "ann", 1, move) == 2
    await until(lambda: len(again.of("game_event")) == 1)
    assert [m["version"] for m in ann.of("game_event")] == [1]  # nothing after the takeover


async def test_a_quiet_rooms_move_goes_at_once_and_what_follows_waits_for_the_tick() -> None:
    """Leading edge: a move in a quiet room reaches viewers in the same loop pass; another
    within the tick waits for the tick's end (at most a frame a tick per viewer); a racer's own
    event takes its waiting frames along in one frame, and its own progress follows at once,
    leaving the tick alone for others; a tick that ends with nothing waiting closes."""
    tick_s = 0.5  # wide, so a loaded CI machine cannot blur at once and at the tick's end
    app = open_app(MemoryEventStore(), FakeClock(), Config(tick_ms=int(tick_s * 1000)))
    try:
        assert isinstance(app.clock, FakeClock)
        ann, bob, fan = Peer("ann"), Peer("bob"), Peer("fan")
        room = await racing(app, app.clock, [ann, bob])
        await join(app, fan, room.id, "spectator")
        audience = app.delivery.audience(room)
        loop = asyncio.get_running_loop()
        # Whatever the start sent, its tick is over.
        await until(lambda: audience.tick is None and audience.tick_ends <= loop.time())
        moves = greedy_moves(new_game("quadrennial", deck=DECK))

        def bob_moves_seen() -> int:
            return max([m["moves"] for m in fan.of("progress") if m["player"] == "bob"] or [0])

        began = loop.time()
        await app.commands.games.move(room, "bob", 1, moves[0])
        await until(lambda: bob_moves_seen() == 1)
        assert loop.time() - began < tick_s / 2  # not held for a tick
        assert audience.tick_ends > loop.time()  # the tick it opened
        await app.commands.games.move(room, "bob", 2, moves[1])
        await asyncio.sleep(tick_s / 4)
        assert bob_moves_seen() == 1  # waits for the tick's end
        assert audience.waiting.get(ann) is not None  # bob's progress, for ann too
        seen_by_fan = len(fan.messages)
        frames_before = len(ann.frames)
        await app.commands.games.move(room, "ann", 1, moves[0])  # the same deal: the same move
        first = ann.frames[frames_before]
        assert first[0] == "progress"
        assert first[-1] == "game_event"
        # Then her own progress, at once with her event (one write), not with the tick.
        assert [m["player"] for m in ann.of("progress")[-2:]] == ["bob", "ann"]
        assert ann.frames[frames_before + 1] == ["progress"]
        assert len(fan.messages) == seen_by_fan  # nothing of the tick was sent early
        await until(lambda: bob_moves_seen() == 2)
        assert loop.time() - began >= tick_s * 0.9
        assert audience.tick is None  # nothing waits: no timer
        await asyncio.sleep(tick_s * 1.5)
        assert audience.tick is None
        assert audience.tick_ends < loop.time()  # the tick is over: the next move goes at once
    finally:
        await app.close_parts()
