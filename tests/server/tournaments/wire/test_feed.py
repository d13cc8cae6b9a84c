"""The tournament feed's throttle: a change this process made reaches the followers at once,
never more than one standings frame a second a tournament, and the last change always
arrives (a change made while a push is under way is pushed after it)."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import msgpack

from server.race.services.presence import Presence
from server.race.wire.requests import Race
from server.runtime.clock import SystemClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from server.tournaments.domain.decide import decide_join, decide_paired, decide_score
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.presence import TournamentPresence
from server.tournaments.wire.feed import TournamentFeed
from tests.server.tournaments.services.test_book import created

PUSH_S = 0.3


class NoRoom:
    def member(self, follower: object) -> None:
        return None


class Follower:
    """A connection as the feed sees it: what it was sent, and when."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.frames: list[tuple[float, dict[str, Any]]] = []

    def send(self, frame: bytes | dict[str, Any]) -> None:
        msg = msgpack.unpackb(frame) if isinstance(frame, bytes) else frame
        self.frames.append((time.monotonic(), msg))

    def reply(self, request: dict[str, Any], msg: dict[str, Any]) -> None:
        self.send(msg)

    def standings(self) -> list[tuple[float, dict[str, Any]]]:
        return [(at, m) for at, m in self.frames if m["type"] == "tournament_standings"]


async def seated(room: str) -> None:
    return None


# The feed reads only where a follower is seated (nowhere here): no commands, no metrics.
NO_RACE = Race(commands=None, delivery=NoRoom(), metrics=None)  # type: ignore[arg-type]


async def test_changes_made_here_are_pushed_at_once_at_most_once_a_second() -> None:
    store, clock = MemoryEventStore(), SystemClock()
    book = TournamentBook(store, clock)
    presence = TournamentPresence(store, clock, Config(), Presence(store, clock, "p1"))
    # The periodic look is not started: every push below comes from the changes themselves.
    feed = TournamentFeed(book, presence, clock, NO_RACE, seated=seated, push_s=PUSH_S)
    book.listeners.append(feed.changed)
    tournament = await book.create(created(clock.now_ms()))
    follower = Follower("s1")
    await feed.follow(follower, tournament.id, account="ann")  # type: ignore[arg-type]
    assert len(follower.standings()) == 1  # the page at once, on following
    players = [f"p{i}" for i in range(12)]
    began = time.monotonic()
    for name in players:  # a change every 50 ms, for 600 ms
        await book.run(tournament.id, lambda t, now, n=name: decide_join(t, n, n, 1500, now))
        await asyncio.sleep(0.05)
    final = (await book.get(tournament.id)).version
    changing_s = time.monotonic() - began
    for _ in range(100):
        if follower.standings()[-1][1]["version"] == final:
            break
        await asyncio.sleep(0.05)
    frames = follower.standings()
    assert frames[-1][1]["version"] == final  # the last change arrived
    assert frames[-1][1]["players"] == len(players)
    pushed = [at for at, _ in frames[1:]]
    # Throttled, not a frame a change: at most one a PUSH_S while the changes came, and one
    # after them.
    assert 2 <= len(pushed) <= min(len(players), changing_s // PUSH_S + 2)
    assert all(b - a >= PUSH_S * 0.99 for a, b in itertools.pairwise(pushed))
    await feed.aclose()


async def test_racers_whose_race_was_scored_get_their_standings_at_once() -> None:
    """Within the throttle's second, the two racers of the scored race are sent their row with
    it; a follower who did not race waits for the throttled push."""
    store, clock = MemoryEventStore(), SystemClock()
    book = TournamentBook(store, clock)
    presence = TournamentPresence(store, clock, Config(), Presence(store, clock, "p1"))
    feed = TournamentFeed(book, presence, clock, NO_RACE, seated=seated, push_s=5.0)
    book.listeners.append(feed.changed)
    tournament = await book.create(created(clock.now_ms()))
    followers = {name: Follower(f"s-{name}") for name in ("ann", "bob", "cy")}
    for name, follower in followers.items():
        await book.run(tournament.id, lambda t, now, n=name: decide_join(t, n, n, 1500, now))
        await feed.follow(follower, tournament.id, account=name)  # type: ignore[arg-type]
    await book.run(tournament.id, lambda t, now: decide_paired(t, "r1", ["ann", "bob"], now))
    await asyncio.sleep(0.05)  # the throttled push of the pairing goes, and the second starts
    sent = {name: len(f.standings()) for name, f in followers.items()}
    results = [
        {"account": "ann", "place": 1, "moves": 30, "berserk": False, "abandoned": False},
        {"account": "bob", "place": 2, "moves": 20, "berserk": False, "abandoned": False},
    ]
    await book.run(tournament.id, lambda t, now: decide_score(t, "r1", results, now))
    await asyncio.sleep(0.05)
    for name in ("ann", "bob"):
        assert len(followers[name].standings()) == sent[name] + 1
        assert followers[name].standings()[-1][1]["me"]["races"] == 1
    assert len(followers["cy"].standings()) == sent["cy"]
    await feed.aclose()


async def test_placements_are_looked_for_only_with_a_follower_here() -> None:
    store, clock = MemoryEventStore(), SystemClock()
    book = TournamentBook(store, clock)
    presence = TournamentPresence(store, clock, Config(), Presence(store, clock, "p1"))
    feed = TournamentFeed(book, presence, clock, NO_RACE, seated=seated, push_s=PUSH_S)
    asked: list[str] = []
    placements = presence.placements

    async def counted() -> Any:
        asked.append("placements")
        return await placements()

    presence.placements = counted  # type: ignore[method-assign]
    await feed.place()  # an idle process (no tournament followed here) asks nothing
    assert asked == []
    tournament = await book.create(created(clock.now_ms()))
    await feed.follow(Follower("s1"), tournament.id, account="ann")  # type: ignore[arg-type]
    await feed.place()
    assert asked == ["placements"]
    await feed.aclose()
