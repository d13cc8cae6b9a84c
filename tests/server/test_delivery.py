"""Delivery in process: who gets what, the spectator delay, a seat taken over."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.app import App
from server.clock import FakeClock
from server.delivery import Role
from server.store import MemoryEventStore
from shared import legal_moves, new_game, public_fold
from tests.server.parts import DECK, Peer, join, open_app, racing, until


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
    await app.commands.move(room, "ann", 1, move)
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
    assert await app.commands.move(room, "ann", 1, move) == 2
    await until(lambda: len(again.of("game_event")) == 1)
    assert [m["version"] for m in ann.of("game_event")] == [1]  # nothing after the takeover


async def test_a_racers_own_events_bring_its_waiting_frames_and_leave_the_tick_alone(
    app: App, clock: FakeClock
) -> None:
    """A racer's own event goes at once, after (and in one frame with) the rivals' progress it
    had waiting for the tick; a spectator's waiting frames still wait for the tick."""
    ann, bob, fan = Peer("ann"), Peer("bob"), Peer("fan")
    room = await racing(app, clock, [ann, bob])
    await join(app, fan, room.id, "spectator")
    bob_move = sorted(legal_moves(new_game("quadrennial", deck=DECK)))[0]
    await app.commands.move(room, "bob", 1, bob_move)
    assert (
        app.delivery.audience(room).waiting.get(ann) is not None
    )  # bob's progress waits for the tick
    seen_by_fan = len(fan.messages)
    frames_before = len(ann.frames)
    await app.commands.move(room, "ann", 1, bob_move)  # the same deal: the same move is legal
    first = ann.frames[frames_before]
    assert first[0] == "progress"
    assert first[-1] == "game_event"
    assert ann.of("progress")[-1]["player"] == "bob"
    assert len(fan.messages) == seen_by_fan  # nothing of the tick was sent early
    await until(lambda: any(m["type"] == "progress" for m in fan.messages[seen_by_fan:]))
