"""The tournament book and the lease on one store shared by two "processes" (two books, two
pairers): decisions appended at the version read, so of two pairings of the same players one
wins; a lease held until it expires, then taken over."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from server.race.services.presence import Presence
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from server.tournaments.domain.decide import decide_join, decide_paired
from server.tournaments.domain.events import RacePaired, TournamentCreated
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.metrics import TournamentMetrics
from server.tournaments.services.pairer import TournamentPairer
from server.tournaments.services.presence import TournamentPresence
from server.tournaments.services.scorer import TournamentScorer

MIN = 60_000


def created(now: int) -> TournamentCreated:
    return TournamentCreated(
        at=now, id="tbooktest1", name="T", variant="swiss", starts_at=now, length_ms=30 * MIN,
        time_limit_ms=3 * MIN, race_size=2, rated=True, berserk=True, streaks=True,
        creator=None, creator_name=None,
    )  # fmt: skip


@pytest.fixture
async def store() -> MemoryEventStore:
    return MemoryEventStore()


async def test_two_processes_pairing_the_same_players_one_wins(store: MemoryEventStore) -> None:
    clock = FakeClock()
    one, two = TournamentBook(store, clock), TournamentBook(store, clock)
    now = clock.now_ms()
    await one.create(created(now))
    await one.run("tbooktest1", lambda t, n: decide_join(t, "ann", "Ann", 1500, n))
    await one.run("tbooktest1", lambda t, n: decide_join(t, "bob", "Bob", 1500, n))
    await two.get("tbooktest1")  # both have folded the same version
    results = await asyncio.gather(
        one.run("tbooktest1", lambda t, n: decide_paired(t, "room1", ("ann", "bob"), n)),
        two.run("tbooktest1", lambda t, n: decide_paired(t, "room2", ("ann", "bob"), n)),
    )
    assert sorted(len(events) for events in results) == [0, 1]  # the loser decided again
    stored = [e.data for e in await store.read("{tbooktest1}:tournament")]
    assert [e["type"] for e in stored].count(RacePaired.TYPE) == 1
    assert (await one.get("tbooktest1")).version == (await two.get("tbooktest1")).version


async def test_the_lease_is_held_then_taken_over_once_it_expires(store: MemoryEventStore) -> None:
    clock = FakeClock()
    config = Config(tournament_lease_s=5.0)

    def pairer(process: str) -> TournamentPairer:
        presence = TournamentPresence(store, clock, config, Presence(store, clock, process))
        book = TournamentBook(store, clock)
        metrics = TournamentMetrics(CollectorRegistry())
        scorer = TournamentScorer(book, metrics)
        commands: Any = None  # the lease needs no room
        return TournamentPairer(store, book, commands, presence, clock, config, metrics, scorer)

    a, b = pairer("a"), pairer("b")
    assert await a.leases.claim("t1")
    assert not await b.leases.claim("t1")
    clock.advance(3_000)
    assert await a.leases.claim("t1")  # renewed past half-time
    clock.advance(4_000)
    assert not await b.leases.claim("t1")  # a's renewal still runs
    clock.advance(1_001)  # a died: nobody renewed
    assert await b.leases.claim("t1")
    assert not await a.leases.claim("t1")


async def test_the_book_hides_the_accounts_its_source_names_as_they_change(
    store: MemoryEventStore,
) -> None:
    """The book asks who a fair-play mark holds on (the ratings') each time it hands out a
    tournament: a mark or an unmark reaches the standings shown on the next read, and so does
    a rename."""
    clock = FakeClock()
    marked: set[str] = set()
    renamed: dict[str, str] = {}
    book = TournamentBook(store, clock, hidden=lambda: frozenset(marked), renamed=lambda: renamed)
    await book.create(created(clock.now_ms()))
    for account in ("ann", "bob"):
        await book.run("tbooktest1", lambda t, n, a=account: decide_join(t, a, a, 1500, n))
    assert [e.account for e in (await book.get("tbooktest1")).standings()] == ["ann", "bob"]
    marked.add("bob")
    tournament = await book.get("tbooktest1")
    assert [e.account for e in tournament.standings()] == ["ann"]
    marked.clear()
    renamed["bob"] = "Zed"  # a moderator's rename reaches the names shown likewise
    await book.sync(tournament)
    assert [e.account for e in tournament.standings()] == ["ann", "bob"]
    assert [tournament.name_of(e) for e in tournament.standings()] == ["ann", "Zed"]
