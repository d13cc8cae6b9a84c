"""The analyser (server/analysis/services/analyser.py): a finished race's games analysed off the
event loop, through a bounded queue (a full one defers to the sweep), at the configured
budget, written once; the archiver takes the analyses with the room, and an analysis that
comes after the archive goes into the record."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

import server.analysis.services.analyser as analyser_module
from server.analysis.domain.events import analysis_stream
from server.analysis.services.analyser import ANALYSIS_DUE_INDEX
from server.app import App
from server.archive import Archive
from server.race.domain.model import Room, game_stream
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore, MemoryEventStore
from shared import new_game
from shared.events import MOVED
from shared.solver.analysis import GameAnalysis, analyse
from tests.server.parts import until
from tests.server.race.services.test_archiver import AFTER_S, archiving_app, finished_race

BUDGET = {"swiss": 5_000, "quadrennial": 20_000}


class Gate:
    """Holds every analysis in the analysis thread until opened (a busy analysis process)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open = threading.Event()
        self.started = threading.Event()
        real = analyser_module.analyse_game

        def held(
            variant: str, deck: Sequence[str], moves: Sequence[str], max_nodes: int
        ) -> GameAnalysis:
            self.started.set()
            self.open.wait(10)
            return real(variant, deck, moves, max_nodes)

        monkeypatch.setattr(analyser_module, "analyse_game", held)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    made = Gate(monkeypatch)
    yield made
    made.open.set()


def threaded(app: App) -> App:
    """The analysis started as a listening server starts it, in a thread of the test's process
    (the server's is a process of its own)."""
    app.analyser.make_executor = lambda: ThreadPoolExecutor(1)
    app.analyser.start()
    return app


@pytest.fixture
async def app(store: MemoryEventStore, clock: FakeClock) -> AsyncIterator[App]:
    made = App(Config(analysis_max_nodes=BUDGET, analysis_queue=1), store, clock)
    made.delivery.ticker.send_many = lambda peers, msg: None
    made.race_clock.poll_s = 0.01
    threaded(made).open()
    yield made
    await made.close_parts()


async def moves_of(store: EventStore, room: Room, player: str) -> list[str]:
    events = await store.read(game_stream(room.id, player))
    return [str(e.data["move"]) for e in events if e.data["type"] == MOVED]


async def analysed(app: App, room: Room) -> None:
    async def done() -> bool:
        return not any(e.member == room.id for e in await app.store.index_range(ANALYSIS_DUE_INDEX))

    for _ in range(2000):
        if await done() and all([await app.analyser.book.read(room.id, p) for p in room.games]):
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"room {room.id} was never analysed")


async def test_every_game_of_a_finished_race_is_analysed(app: App, clock: FakeClock) -> None:
    room = await finished_race(app, clock)
    await analysed(app, room)
    for player in room.games:
        event = await app.analyser.book.read(room.id, player)
        assert event is not None
        moves = await moves_of(app.store, room, player)
        start = new_game("quadrennial", seed=room.settings.seed)
        expected = analyse(start, moves, max_nodes=BUDGET["quadrennial"])
        assert event.analysis() == expected
        assert event.max_nodes == BUDGET["quadrennial"]
    assert app.analyser.figures.games == 2
    assert app.analyser.stats()["games_analysed"] == 2
    # Written once: analysing the room again writes nothing.
    assert await app.analyser.analyse_room(room.id) == 0
    assert await app.store.last_version(analysis_stream(room.id, "ann")) == 1
    # A rebuild adds one.
    assert await app.analyser.analyse_room(room.id, again=True) == 2
    assert await app.store.last_version(analysis_stream(room.id, "ann")) == 2


async def test_a_full_queue_defers_to_the_sweep(app: App, clock: FakeClock, gate: Gate) -> None:
    """One room being analysed, one waiting (the queue holds one): a third finished race is
    turned away, stays due, and the sweep brings it in once there is room."""
    rooms = [await finished_race(app, clock)]
    await asyncio.to_thread(gate.started.wait, 10)
    rooms += [await finished_race(app, clock), await finished_race(app, clock)]
    await until(lambda: app.analyser.figures.deferred >= 1)
    due = {e.member for e in await app.store.index_range(ANALYSIS_DUE_INDEX)}
    assert due == {r.id for r in rooms}
    gate.open.set()
    await until(lambda: app.analyser.idle.is_set())
    await app.analyser.sweep()
    for room in rooms:
        await analysed(app, room)


async def test_a_race_finishes_whatever_the_analysis_does(
    app: App, clock: FakeClock, gate: Gate
) -> None:
    """Analyses held up never hold up a race: results come, the next races run."""
    first = await finished_race(app, clock)
    second = await finished_race(app, clock)
    assert first.finished is not None
    assert second.finished is not None
    assert await app.analyser.book.read(first.id, "ann") is None


async def test_a_variant_with_no_budget_is_not_analysed(
    store: MemoryEventStore, clock: FakeClock
) -> None:
    off = App(Config(analysis_max_nodes={"swiss": 5_000, "quadrennial": 0}), store, clock)
    off.delivery.ticker.send_many = lambda peers, msg: None
    threaded(off).open()
    try:
        room = await finished_race(off, clock)
        await asyncio.sleep(0.05)
        assert await off.analyser.analyse_room(room.id) == 0
        assert await off.analyser.book.read(room.id, "ann") is None
    finally:
        await off.close_parts()


async def test_the_archive_keeps_the_analyses(
    store: MemoryEventStore, clock: FakeClock, archive: Archive
) -> None:
    app = threaded(archiving_app(store, clock, archive, analysis=True))
    try:
        room = await finished_race(app, clock)
        await analysed(app, room)
        before = {p: await app.analyser.book.read(room.id, p) for p in room.games}
        clock.advance(int(AFTER_S * 1000) + 1)
        assert app.archiver is not None
        await app.archiver.sweep()
        assert await store.last_version(analysis_stream(room.id, "ann")) == 0  # moved
        record = await archive.get(room.id)
        assert record is not None
        assert sorted(record.analyses) == sorted(analysis_stream(room.id, p) for p in room.games)
        assert {p: await app.analyser.book.read(room.id, p) for p in room.games} == before
    finally:
        await app.close_parts()


async def test_an_analysis_after_the_archive_goes_into_the_record(
    store: MemoryEventStore, clock: FakeClock, archive: Archive, gate: Gate
) -> None:
    """A busy analyser never holds the archive back: the room is archived without its
    analyses, which are added to its record when they come."""
    app = threaded(archiving_app(store, clock, archive, analysis=True))
    try:
        room = await finished_race(app, clock)
        await asyncio.to_thread(gate.started.wait, 10)
        clock.advance(int(AFTER_S * 1000) + 1)
        assert app.archiver is not None
        await app.archiver.sweep()
        record = await archive.get(room.id)
        assert record is not None
        assert record.analyses == {}
        gate.open.set()
        await analysed(app, room)
        record = await archive.get(room.id)
        assert record is not None
        assert len(record.analyses) == 2
        assert await store.last_version(analysis_stream(room.id, "ann")) == 0
    finally:
        await app.close_parts()


async def test_parts_opened_without_listening_analyse_nothing(
    store: MemoryEventStore, clock: FakeClock
) -> None:
    """A tool's or a test's parts (opened, never listening) neither analyse nor mark."""
    quiet = App(Config(analysis_max_nodes=BUDGET), store, clock)
    quiet.delivery.ticker.send_many = lambda peers, msg: None
    quiet.open()
    try:
        await finished_race(quiet, clock)
        await asyncio.sleep(0.05)
        assert await store.index_range(ANALYSIS_DUE_INDEX) == []
    finally:
        await quiet.close_parts()
