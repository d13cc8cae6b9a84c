"""The ratings projection: recorded live by several processes, rebuilt from the log, equal."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgpack

from server.accounts.domain.ratings import MODEL, decide_rating, display, ratings_stream
from server.accounts.services.ratings import BUILT_INDEX, PENDING_INDEX, Ratings, leaderboard_index
from server.race.domain.events import encode
from server.race.domain.model import room_stream
from server.runtime.clock import FakeClock
from server.store import MemoryEventStore
from tests.server.accounts.rooms import finished_room, room_events


async def test_a_race_is_rated_once_whoever_records_it() -> None:
    store = MemoryEventStore()
    one, two = Ratings(store, FakeClock()), Ratings(store, FakeClock())
    room = finished_room("r1", [("Ann", "ann"), ("Bob", "bob"), ("Cy", "cy")])
    first = await one.record(room)
    again = await two.record(room)
    assert first == again
    assert await store.last_version(ratings_stream("swiss")) == 1
    assert first is not None
    deltas = [c.after - c.before for c in first]
    # The documented direction: the winner gains most, the last place loses.
    assert deltas[0] > deltas[1] > deltas[2]
    assert deltas[0] > 0 > deltas[2]
    await store.aclose()


async def test_guests_unrated_rooms_and_lone_accounts_are_not_rated() -> None:
    store = MemoryEventStore()
    ratings = Ratings(store, FakeClock())
    assert await ratings.record(finished_room("a", [("Ann", "ann"), ("Guest", None)])) is None
    assert await ratings.record(finished_room("b", [("A", "a"), ("B", "b")], rated=False)) is None
    mixed = decide_rating(finished_room("c", [("Guest", None), ("Ann", "Ann"), ("Bob", "bob")]))
    assert mixed is not None
    assert [(r["account"], r["place"]) for r in mixed.racers] == [("ann", 2), ("bob", 3)]
    # A guest had the name first: the seat is "Ann 2", the rating is the account's own name.
    rated = decide_rating(finished_room("d", [("Ann", None), ("Ann 2", "Ann"), ("Bob", "Bob")]))
    assert rated is not None
    assert [r["name"] for r in rated.racers] == ["Ann", "Bob"]
    await store.aclose()


async def test_rebuild_from_the_log_equals_the_live_ratings_after_200_races() -> None:
    rng = random.Random(24)
    store = MemoryEventStore()
    clock = FakeClock()
    processes = [Ratings(store, clock), Ratings(store, clock), Ratings(store, clock)]
    accounts = [f"acct{i:02d}" for i in range(30)]
    for race in range(200):
        racers = rng.sample(accounts, rng.randint(2, 6))
        guests = [("guest", None)] * rng.randint(0, 1)
        entrants = [(a.upper(), a) for a in racers] + guests
        rng.shuffle(entrants)
        variant = rng.choice(["swiss", "quadrennial"])
        room = finished_room(
            f"r{race}", entrants, variant=variant, at=race * 100_000, won=rng.randint(0, 2)
        )
        # Each race is seen finishing by one or two processes, in any order.
        for process in rng.sample(processes, rng.randint(1, 2)):
            await process.record(room)
    live = {}
    for variant in ("swiss", "quadrennial"):
        table = await processes[0].catch_up(variant)
        live[variant] = {
            a: (s.mu, s.sigma, s.games, s.wins, s.best_ms) for a, s in table.players.items()
        }
    index_live = {v: await store.index_range(leaderboard_index(v)) for v in live}
    rebuilt = Ratings(store, clock)
    folded = await rebuilt.rebuild()
    assert sum(folded.values()) == 200
    for variant, players in live.items():
        table = rebuilt.tables[variant]
        assert {
            a: (s.mu, s.sigma, s.games, s.wins, s.best_ms) for a, s in table.players.items()
        } == players
        assert await store.index_range(leaderboard_index(variant)) == index_live[variant]
        rows = [msgpack.unpackb(e.value) for e in index_live[variant]]
        assert [r["rating"] for r in rows] == sorted((r["rating"] for r in rows), reverse=True)
        built = await store.index_get(BUILT_INDEX, variant)
        assert built is not None
        assert built.score == table.version
    await store.aclose()


async def test_start_rebuilds_a_missing_projection() -> None:
    store = MemoryEventStore()
    ratings = Ratings(store, FakeClock())
    await ratings.record(finished_room("r", [("Ann", "ann"), ("Bob", "bob")]))
    for variant in ("swiss", "quadrennial"):
        await store.index_remove(BUILT_INDEX, variant)
        await store.index_remove(leaderboard_index(variant), "ann")
    fresh = Ratings(store, FakeClock())
    await fresh.start()
    assert await store.index_get(leaderboard_index("swiss"), "ann") is not None
    await fresh.aclose()
    await store.aclose()


def test_a_new_player_is_shown_at_the_base() -> None:
    assert display(MODEL.mu, MODEL.sigma) == 1500


async def test_the_sweep_rates_finished_pending_rooms_and_leaves_racing_ones() -> None:
    store = MemoryEventStore()
    ratings = Ratings(store, FakeClock())
    racers = [("Ann", "Ann"), ("Bob", "Bob")]
    finished = room_events("done", racers)
    racing = room_events("racing", racers)[:-1]  # no race_finished yet
    for room_id, events in (("done", finished), ("racing", racing)):
        await store.append(room_stream(room_id), [encode(e) for e in events], expected_version=0)
        await store.index_put(PENDING_INDEX, room_id, 1)
    await store.index_put(PENDING_INDEX, "expired", 1)
    await ratings.sweep()
    await ratings.sweep()  # again: nothing more
    assert [e.member for e in await store.index_range(PENDING_INDEX)] == ["racing"]
    assert [e.data["room"] for e in await store.read(ratings_stream("swiss"))] == ["done"]
    await store.aclose()


async def test_races_ending_together_are_rated_once_each_in_a_few_appends() -> None:
    """A round's races end together on several processes: each process appends what waits in
    one append at a time, each race once in the log, and every caller gets its race's changes."""
    rng = random.Random(7)
    store = MemoryEventStore()
    appends = 0
    append = store.append

    async def counted(*args: Any, **kwargs: Any) -> int:
        nonlocal appends
        appends += 1
        return await append(*args, **kwargs)

    store.append = counted  # type: ignore[method-assign]
    clock = FakeClock()
    processes = [Ratings(store, clock), Ratings(store, clock), Ratings(store, clock)]
    accounts = [f"acct{i:02d}" for i in range(40)]
    rooms = []
    for race in range(90):
        entrants = [(a.upper(), a) for a in rng.sample(accounts, 4)]
        rooms.append(finished_room(f"r{race}", entrants, at=race * 1_000, won=rng.randint(0, 2)))
    calls = [(p, room) for room in rooms for p in rng.sample(processes, rng.randint(1, 3))]
    rng.shuffle(calls)
    answers = await asyncio.gather(*(p.record(room) for p, room in calls))
    log = await store.read(ratings_stream("swiss"))
    assert sorted(e.data["room"] for e in log) == sorted(room.id for room in rooms)
    assert appends < len(rooms) / 3
    table = await processes[0].catch_up("swiss")
    for (_, room), changes in zip(calls, answers, strict=True):
        assert changes == table.races[room.id]
    rebuilt = Ratings(store, clock)
    await rebuilt.rebuild(["swiss"])
    assert rebuilt.tables["swiss"].players == table.players
    await store.aclose()
