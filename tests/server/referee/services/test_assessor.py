"""The fair-play assessor (server/referee/services/assessor.py) over the embedded store: a
finished rated race becomes due, each racer's game is assessed once with its think times, an
unrated race never is, a game waits for its analysis (or is assessed from times alone when none
comes), two processes write a game once, and an account at "likely" or above is flagged."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from server.app import App
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.referee.domain import referee as r
from server.referee.domain.events import ASSESSMENT_DUE_INDEX, FLAGGED_INDEX, GameAssessed
from server.referee.services.assessor import ANALYSIS_WAIT_MS, LOOK_AGAIN_MS, Assessor
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore, SqliteEventStore
from shared.game import legal_moves
from tests.server.parts import open_app, until

NO_ANALYSIS = {"swiss": 0, "quadrennial": 0}


@pytest.fixture
async def store(tmp_path: Path) -> EventStore:
    return SqliteEventStore(tmp_path / "data")


@pytest.fixture
async def app(store: EventStore) -> AsyncIterator[App]:
    made = open_app(store, FakeClock(), Config(analysis_max_nodes=NO_ANALYSIS))
    yield made
    await made.close_parts()


async def race(app: App, *, rated: bool = True, moves: int = 6) -> Room:
    """Ann and Bob race a rated room: Ann plays ``moves`` moves a second and more apart, then
    both resign."""
    clock = app.clock
    assert isinstance(clock, FakeClock)
    room = await app.commands.create_room(
        {"variant": "quadrennial", "countdown_ms": 0, "rated": rated}, creator="ann"
    )
    for name in ("Ann", "Bob"):
        player = name.lower()
        await app.commands.join(
            room, player, name=name, token=f"tok-{player}", connection=player, account=name
        )
    await app.commands.start(room, "ann")
    await until(lambda: room.status is RoomStatus.RACING and room.games["ann"].version == 1)
    for cid in range(moves):
        clock.advance(1000 * (cid + 1))
        state = room.games["ann"].state
        assert state is not None
        await app.commands.games.move(room, "ann", cid, sorted(legal_moves(state))[0])
    await app.commands.games.resign(room, "ann")
    await app.commands.games.resign(room, "bob")
    await until(lambda: room.status is RoomStatus.FINISHED)
    return room


async def due(store: EventStore) -> set[str]:
    return {e.member for e in await store.index_range(ASSESSMENT_DUE_INDEX)}


async def test_a_rated_race_is_assessed_once_per_racer(app: App, store: EventStore) -> None:
    room = await race(app)
    assessor = app.referee.assessor
    for _ in range(500):
        if room.id in await due(store):
            break
        await asyncio.sleep(0.002)
    assert room.id in await due(store)
    await assessor.sweep()
    assert await due(store) == set()
    (ann,) = await assessor.games("ann")
    assert (ann.room, ann.player, ann.name, ann.kind, ann.moves) == (
        room.id,
        "ann",
        "Ann",
        "race",
        6,
    )
    assert ann.think_mean_ms == 3500  # 1 s, 2 s, ... 6 s apart
    assert ann.deal == "unknown"  # the variant is not analysed: from its times alone
    assert [g.player for g in await assessor.games("bob")] == ["bob"]
    # Another process that finds the room due again writes nothing twice.
    twin = Assessor(store, None, app.clock, NO_ANALYSIS)
    assert await twin.assess_room(room.id) == 0
    assert len(await assessor.games("ann")) == 1


async def test_an_unrated_race_is_not_assessed(app: App, store: EventStore) -> None:
    await race(app, rated=False)
    await asyncio.sleep(0.02)
    assert await due(store) == set()


async def test_focus_lost_counts_only_in_a_rated_race_being_played(app: App) -> None:
    assert await app.referee.focus_lost("ann", {}) is None  # in no race: ignored
    room = await race(app, moves=0)
    assert await app.referee.focus_lost("ann", {}) is None  # the race is over
    await app.referee.assessor.record_focus("ann", room.id, "ann")
    assert await app.referee.assessor.focus_count("ann", room.id, "ann") == 1
    assert await app.referee.assessor.focus_count("ann", "other", "ann") == 0


async def test_a_game_waits_for_its_analysis_then_goes_without(store: EventStore) -> None:
    clock = FakeClock()
    app = open_app(store, clock, Config(analysis_max_nodes={"quadrennial": 1000}))
    try:
        room = await race(app)  # its analyser not started: no analysis comes
        assessor = app.referee.assessor
        assert await assessor.assess_room(room.id) is None  # it waits, and stays due
        assert room.id in await due(store)
        clock.advance(ANALYSIS_WAIT_MS)
        await assessor.sweep()
        assert [g.deal for g in await assessor.games("ann")] == ["unknown"]
        assert await due(store) == set()
    finally:
        await app.close_parts()


async def test_the_sweep_leaves_a_room_waiting_for_its_analysis_for_a_while(
    store: EventStore,
) -> None:
    # Rooms waiting behind a busy analyser are not read again by every sweep.
    clock = FakeClock()
    app = open_app(store, clock, Config(analysis_max_nodes={"quadrennial": 1000}))
    try:
        room = await race(app)
        assessor = app.referee.assessor
        reads: list[str] = []
        assess_room = assessor.assess_room

        async def counted(room_id: str, *, finished_at: int | None = None) -> int | None:
            reads.append(room_id)
            return await assess_room(room_id, finished_at=finished_at)

        assessor.assess_room = counted  # type: ignore[method-assign]
        await assessor.sweep()
        await assessor.sweep()
        assert reads == [room.id]  # found waiting once, then left
        clock.advance(LOOK_AGAIN_MS)
        await assessor.sweep()
        assert reads == [room.id, room.id]
        assert room.id in await due(store)  # still waiting: nothing is written without it
        assessor.analysed(room.id)  # this process's analyser says so: looked at at once
        await until(lambda: len(reads) == 3)
    finally:
        await app.close_parts()


def flat(i: int) -> GameAssessed:
    return GameAssessed(
        at=i, room=f"r{i}", player="p", account="cal", name="Cal", variant="quadrennial",
        kind="race", moves=90, think_mean_ms=1800, think_spread=0.5, even_streak=2,
        timed_moves=150, time_difficulty=0.0, deal="unknown", known="unknown", won=True,
        kept=0, judged=0, focus_lost=0,
    )  # fmt: skip


async def test_two_processes_write_a_game_once_and_a_likely_account_is_flagged(
    app: App, store: EventStore
) -> None:
    one, two = app.referee.assessor, Assessor(store, None, app.clock, NO_ANALYSIS)
    for i in range(6):
        await asyncio.gather(one.write(flat(i)), two.write(flat(i)))
        assert [g.room for g in await one.games("cal")] == [f"r{j}" for j in range(i + 1)]
    (row,) = await one.flagged()
    assert (row["account"], row["level"]) == ("cal", "likely assisted")
    assert row["evidence"].startswith("likely assisted (6 games): think time ignores")
    await store.index_remove(FLAGGED_INDEX, "cal")  # lost: the streams hold the truth
    assert await two.rebuild([]) == (0, 1)
    (queued,) = r.queue(await app.referee.state(), await one.flagged())
    assert (queued["account"], queued["reports"], queued["flag"]["level"]) == (
        "cal", 0, "likely assisted",
    )  # fmt: skip
    # A person's games bring it back under "likely": it leaves the flagged index.
    for i in range(6, 26):
        await one.write(replace(flat(i), time_difficulty=0.5, won=False))
    assert await one.flagged() == []
