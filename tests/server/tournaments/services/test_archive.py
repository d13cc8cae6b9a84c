"""A finished tournament leaves the store for the archive: its stream is gone, every reader
(a fresh process's book, the list) still has it whole, and the archived record folds to the
very tournament the store held."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from server.app import App
from server.archive.record import ArchivedRoom, pack, unpack
from server.archive.sqlite import SqliteArchive
from server.race.domain.lifecycle import RoomStatus
from server.race.services.presence import Presence
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore, MemoryEventStore, RedisEventStore
from server.tournaments.domain.decide import decide_join, decide_paired, decide_score
from server.tournaments.domain.events import TournamentCreated, encode, tournament_stream
from server.tournaments.domain.fold import Tournament, TournamentStatus, fold
from server.tournaments.services.archive import TournamentArchive, TournamentNotFinal
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.lease import TournamentLease, lease_stream
from server.tournaments.services.metrics import TournamentMetrics
from server.tournaments.services.pairer import TournamentPairer
from server.tournaments.services.presence import TournamentPresence
from server.tournaments.services.scorer import TournamentScorer
from shared.errors import ArchiveUnavailable
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer

MIN = 60_000
ID = "tarchivet1"


def created(now: int, tournament_id: str = ID) -> TournamentCreated:
    return TournamentCreated(
        at=now, id=tournament_id, name="Evening", variant="swiss", starts_at=now,
        length_ms=30 * MIN, time_limit_ms=3 * MIN, race_size=2, rated=True, berserk=True,
        streaks=True, creator=None, creator_name=None,
    )  # fmt: skip


def result(account: str, place: int, moves: int = 30) -> dict[str, Any]:
    return {"account": account, "place": place, "moves": moves, "berserk": False}


class StillRacing:
    """Commands as the pairer's check of a race sees them: every race room is racing."""

    def __init__(self) -> None:
        self.hub = self

    async def room(self, room_id: str) -> Any:
        return SimpleNamespace(id=room_id, status=RoomStatus.RACING)

    async def sync(self, room: Any) -> None:
        return None


class Process:
    """One server process's tournament parts on the shared store and archive."""

    def __init__(
        self, store: EventStore, archive: SqliteArchive, clock: FakeClock, name: str = "p1"
    ) -> None:
        config = Config(tournament_lease_s=5.0)
        self.book = TournamentBook(store, clock, TournamentArchive(store, archive, clock))
        presence = TournamentPresence(store, clock, config, Presence(store, clock, name))
        self.registry = CollectorRegistry()
        metrics = TournamentMetrics(self.registry)
        commands: Any = StillRacing()  # nobody is present: no room is made
        self.pairer = TournamentPairer(
            store, self.book, commands, presence, clock, config, metrics,
            TournamentScorer(self.book, metrics),
        )  # fmt: skip


@pytest.fixture
async def archive(tmp_path: Path) -> Any:
    kept = SqliteArchive(tmp_path / "archive.sqlite")
    yield kept
    await kept.aclose()


@pytest.fixture(params=["memory", "redis", "cluster"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[EventStore]:
    """The store backends a server archives tournaments from (the embedded SQLite store keeps
    them itself), each under a key prefix of its own."""
    if request.param == "memory":
        memory = MemoryEventStore()
        yield memory
        await memory.aclose()
        return
    prefix = f"t{uuid.uuid4().hex[:12]}:"
    if request.param == "cluster":
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        store = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    else:
        single: RedisServer = request.getfixturevalue("redis_server")
        store = RedisEventStore(single.url, prefix=prefix)
    yield store
    await store.aclose()


async def keys_naming(store: EventStore, tournament_id: str) -> list[str]:
    """Every key of the store whose name holds the tournament's id: its streams, its indexes
    (presence), anything a backend keeps beside them (an append head)."""
    if isinstance(store, MemoryEventStore):
        names = [*await store.streams(), *(n for n, i in store._indexes.items() if i)]
        names += [n for n, q in store._queues.items() if q]
        return sorted(n for n in names if tournament_id in n)
    assert isinstance(store, RedisEventStore)
    pattern = f"{store.prefix}*{tournament_id}*"
    return sorted({key.decode() async for key in store.topology.client.scan_iter(match=pattern)})


@contextlib.contextmanager
def archive_down(archive: SqliteArchive) -> Iterator[None]:
    """While inside, the archive refuses every write, as one that is down does."""
    real_put = archive.put

    async def down(*args: Any, **kwargs: Any) -> None:
        raise ArchiveUnavailable("down")

    archive.put = down  # type: ignore[method-assign]
    try:
        yield
    finally:
        archive.put = real_put  # type: ignore[method-assign]


async def played(book: TournamentBook, clock: FakeClock) -> Tournament:
    """A tournament with three entrants and two races played, one still running."""
    await book.create(created(clock.now_ms()))
    for account in ("ann", "bob", "cy"):
        await book.run(ID, lambda t, n, a=account: decide_join(t, a, a.title(), 1500, n))
    await book.run(ID, lambda t, n: decide_paired(t, "room0001", ("ann", "bob"), n))
    clock.advance(2 * MIN)
    await book.run(
        ID, lambda t, n: decide_score(t, "room0001", [result("ann", 1), result("bob", 2)], n)
    )
    await book.run(ID, lambda t, n: decide_paired(t, "room0002", ("ann", "cy"), n))
    return await book.get(ID)


async def test_a_finished_tournament_leaves_the_store_and_is_read_whole_from_the_archive(
    archive: SqliteArchive,
) -> None:
    store, clock = MemoryEventStore(), FakeClock()
    one = Process(store, archive, clock)
    await played(one.book, clock)
    clock.advance(30 * MIN)  # time is up; a race still runs: not final, nothing archived
    await one.pairer.tick()
    assert (await one.book.get(ID)).status is TournamentStatus.OPEN
    assert await store.read(tournament_stream(ID))
    assert await archive.get(f"tournament.{ID}") is None
    with pytest.raises(TournamentNotFinal):
        await one.book.archive.keep(ID)  # type: ignore[union-attr]

    await one.book.run(
        ID, lambda t, n: decide_score(t, "room0002", [result("cy", 1), result("ann", 2)], n)
    )
    live = fold(ID, [e.data for e in await store.read(tournament_stream(ID))])
    await one.pairer.tick()  # the last race scored: finished, then archived

    assert await store.read(tournament_stream(ID)) == []
    assert [(t.id, t.finished, t.archived) for t in await one.book.listed()] == [(ID, True, True)]
    finished = await one.book.get(ID)
    assert finished.status is TournamentStatus.FINISHED
    other = Process(store, archive, clock)  # a fresh process: nothing folded, the store empty
    shown = await other.book.get(ID)
    assert shown.same_fold(finished)
    assert [e.account for e in shown.podium()] == ["cy", "ann", "bob"]  # cy: the better performance
    assert [r.wire() for r in shown.entrants["ann"].sheet] == [
        r.wire() for r in finished.entrants["ann"].sheet
    ]
    assert live.version + 1 == shown.version  # what the store held, and its end
    assert [row["place"] for row in await other.book.played("ann")] == [2]
    await other.pairer.tick()  # archived before: nothing more to do, nothing broken
    assert await other.book.archive.keep(ID) is not None  # type: ignore[union-attr]


async def test_an_archive_that_fails_keeps_the_stream_and_a_later_tick_archives_it(
    archive: SqliteArchive,
) -> None:
    store, clock = MemoryEventStore(), FakeClock()
    one = Process(store, archive, clock)
    await one.book.create(created(clock.now_ms()))
    clock.advance(31 * MIN)
    with archive_down(archive):
        await one.pairer.tick()
    assert (await one.book.get(ID)).status is TournamentStatus.FINISHED
    assert await store.read(tournament_stream(ID))
    assert [t.archived for t in await one.book.listed()] == [False]
    await one.pairer.tick()
    assert await store.read(tournament_stream(ID)) == []
    assert [t.archived for t in await one.book.listed()] == [True]


async def test_an_archived_tournament_leaves_no_key_and_a_stale_listing_does_not_run_it_again(
    backend: EventStore, archive: SqliteArchive
) -> None:
    clock = FakeClock()
    one, two = Process(backend, archive, clock, "p1"), Process(backend, archive, clock, "p2")
    await played(one.book, clock)
    await one.book.run(
        ID, lambda t, n: decide_score(t, "room0002", [result("cy", 1), result("ann", 2)], n)
    )
    clock.advance(31 * MIN)
    with archive_down(archive):
        await one.pairer.tick()  # finished, its archive deferred: the lease stays with p1
    stale = await two.book.listed()  # what p2 read just before p1's next tick archived it
    assert [(t.finished, t.archived) for t in stale] == [(True, False)]
    assert await backend.read(lease_stream(ID))
    await one.pairer.tick()

    assert await keys_naming(backend, ID) == []  # the stream, the lease: nothing is left
    assert [(t.id, t.finished, t.archived) for t in await one.book.listed()] == [(ID, True, True)]

    async def listed_before() -> Any:
        return stale

    two.book.listed = listed_before  # type: ignore[method-assign]
    clock.advance(10_000)  # whatever lease there was would have run out
    await two.pairer.tick()  # finished and not archived, it reads: yet it takes no lease
    assert two.registry.get_sample_value("tournament_leases_taken_total") == 0
    assert await keys_naming(backend, ID) == []
    assert [t.archived for t in await one.book.listed()] == [True]
    assert (await two.book.get(ID)).status is TournamentStatus.FINISHED  # from the archive


async def test_a_lease_taken_over_meanwhile_is_kept_for_its_holder_who_releases_it(
    backend: EventStore, archive: SqliteArchive
) -> None:
    clock = FakeClock()
    one, two = Process(backend, archive, clock, "p1"), Process(backend, archive, clock, "p2")
    await one.book.create(created(clock.now_ms()))
    clock.advance(31 * MIN)
    with archive_down(archive):
        await one.pairer.tick()  # finished; p1 holds the lease, the archive deferred
    clock.advance(6_000)  # p1's lease ran out: p2 takes it over
    assert await two.pairer.leases.claim(ID)
    await one.pairer.leases.release(ID)  # p1, late: the claim is p2's now, and it stays
    assert await backend.read(lease_stream(ID))
    await two.pairer.tick()
    assert await keys_naming(backend, ID) == []
    assert [t.archived for t in await two.book.listed()] == [True]


async def test_a_lease_its_holder_died_before_deleting_is_swept_once_it_ran_out(
    backend: EventStore, archive: SqliteArchive, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    one, two = Process(backend, archive, clock, "p1"), Process(backend, archive, clock, "p2")
    await one.book.create(created(clock.now_ms()))
    clock.advance(31 * MIN)

    async def died(_lease: TournamentLease, _tournament: str) -> None:
        return None  # killed after marking it archived, before deleting its lease

    monkeypatch.setattr(TournamentLease, "release", died)
    await one.pairer.tick()
    monkeypatch.undo()
    assert [t.archived for t in await one.book.listed()] == [True]
    assert await backend.read(lease_stream(ID))  # all that is left of it
    assert await backend.read(tournament_stream(ID)) == []
    await two.pairer.tick()  # p1's claim has not run out: it may still be deleting it
    assert await backend.read(lease_stream(ID))
    clock.advance(6_000)
    await two.pairer.tick()
    assert await keys_naming(backend, ID) == []
    assert two.registry.get_sample_value("tournament_leases_taken_total") == 0
    await two.pairer.tick()  # looked at no more
    assert ID in two.pairer._swept


_ACCOUNTS = ["ann", "bob", "cy", "dee"]


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A finished tournament's events as the deciders make them: joins, races and scores."""
    now = 1_000_000
    t = Tournament(ID)
    events = [created(now)]
    t.apply(events[0])
    for step in range(draw(st.integers(0, 12))):
        now += draw(st.integers(1, 60_000))
        kind = draw(st.sampled_from(["join", "pair", "score"]))
        made: list[Any] = []
        if kind == "join":
            account = draw(st.sampled_from(_ACCOUNTS))
            made = decide_join(t, account, account.title(), draw(st.integers(800, 2500)), now)
        elif kind == "pair":
            free = [a for a, e in t.entrants.items() if e.racing is None and e.active]
            if len(free) >= 2:
                group = draw(st.permutations(free))[: draw(st.integers(2, len(free)))]
                made = decide_paired(t, f"room{step:04d}", group, now)
        elif t.races:
            race = t.races[draw(st.sampled_from(sorted(t.races)))]
            order = draw(st.permutations(race.players))
            made = decide_score(
                t,
                race.room,
                [result(a, i + 1, draw(st.integers(0, 40))) for i, a in enumerate(order)],
                now,
            )
        for event in made:
            t.apply(event)
        events.extend(made)
    for room in sorted(t.races):
        made = decide_score(
            t, room, [result(a, i + 1) for i, a in enumerate(t.races[room].players)], now
        )
        for event in made:
            t.apply(event)
        events.extend(made)
    return [encode(e) for e in events]


@settings(max_examples=60, deadline=None)
@given(histories())
def test_the_archived_record_folds_to_the_live_tournament(events: list[dict[str, Any]]) -> None:
    record = ArchivedRoom(f"tournament.{ID}", 1, {"kind": "tournament"}, events)
    again = unpack(pack(record)).room_events
    assert fold(ID, again).same_fold(fold(ID, events))
    assert again == events


async def test_a_server_with_an_archive_archives_a_finished_tournament_and_lists_no_room_for_it(
    archive: SqliteArchive,
) -> None:
    store, clock = MemoryEventStore(), FakeClock()
    app = App(Config(), store, clock, archive)
    app.open()
    try:
        book = app.tournaments.book
        await book.create(created(clock.now_ms()))
        await book.run(ID, lambda t, n: decide_join(t, "ann", "Ann", 1500, n))
        clock.advance(31 * MIN)
        await app.tournaments.pairer.tick()
        assert await store.read(tournament_stream(ID)) == []
        book.forget(ID)  # what another process, or this one later, reads: the archive
        shown = await book.get(ID)
        assert shown.status is TournamentStatus.FINISHED
        assert list(shown.entrants) == ["ann"]
        assert await app.commands.list_rooms() == []  # the record is no room
    finally:
        await app.stop()
