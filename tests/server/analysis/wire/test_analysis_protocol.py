"""`analysis` over the protocol, on a real server (its sockets, in this process) whose clock the
test moves: an analysis names cards of the deck, so nobody gets any of it while a game on that
deal is live where it could help: not a racer of a race still on, not before the spectators'
delay has shown its end, not a daily attempt before its day is over, not a challenge's attempt
before the asker has played theirs or the challenge is over. Then it comes, and agrees with the
pure analysis of the game; on the store, and after the room moved to the archive."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from server.app import App
from server.archive.sqlite import SqliteArchive
from server.kernel.days import tag_end_ms
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from shared import new_game
from shared.solver.analysis import analyse
from tests.server.challenges.test_challenge_protocol import HOUR, Served, play_out, serving
from tests.server.wsclient import Client

BUDGET = {"swiss": 4_000, "quadrennial": 80_000}


@pytest.fixture(params=["store", "archive"])
async def served(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Served]:
    clock = FakeClock()
    config = Config(port=0, rate=1000, burst=1000, analysis_max_nodes=BUDGET, archive_after_s=1.0)
    archive = SqliteArchive(tmp_path / "archive.sqlite") if request.param == "archive" else None
    app = App(config, MemoryEventStore(), clock, archive)
    app.analyser.make_executor = lambda: ThreadPoolExecutor(1)
    async with serving(app, clock) as done:
        yield done


async def ask_analysis(s: Served, client: Client, room: str, player: str) -> dict[str, Any]:
    return await s.ask(
        client, {"type": "analysis", "room": room, "player": player}, "game_analysis"
    )


async def analysis_when_ready(s: Served, client: Client, room: str, player: str) -> dict[str, Any]:
    """The analysis, asked again while the server has not written it yet (`no_analysis`)."""
    async with asyncio.timeout(30):
        while True:
            answer = await ask_analysis(s, client, room, player)
            if answer.get("code") != "no_analysis":
                return answer
            await asyncio.sleep(0.02)


async def create_race(s: Served, creator: Client, **opts: Any) -> str:
    made = await s.ask(
        creator,
        {"type": "create_room", "variant": "quadrennial", "countdown_ms": 0, **opts},
        "room",
    )
    return str(made["room"]["id"])


def pure(seed: str, moves: list[str]) -> Any:
    return analyse(new_game("quadrennial", seed=seed), moves, max_nodes=BUDGET["quadrennial"])


async def test_no_racer_gets_an_analysis_before_the_race_and_its_delay_are_over(
    served: Served,
) -> None:
    s = served
    ann, bob, eve = await s.connect("ann"), await s.connect("bob"), await s.connect("eve")
    room = await create_race(s, ann, capacity=2, spectator_delay_ms=5_000)
    for client in (ann, bob):
        await s.ask(client, {"type": "join", "room": room}, "joined")
    await ann.send({"type": "start"})
    for client in (ann, bob):
        await client.expect("started")
    for _ in range(3):
        await ann.move("d")
    await ann.send({"type": "resign"})
    await ann.expect("game_event", lambda m: m["event"]["type"] == "resigned")
    # Bob still races on the deal: nobody gets an analysis of it, not even ann of her own.
    for client, player in ((bob, "ann"), (ann, "ann"), (eve, "bob"), (bob, "bob")):
        refused = await ask_analysis(s, client, room, player)
        assert refused["code"] == "wrong_status", refused
    await bob.move("d")
    await bob.send({"type": "resign"})
    finished = await bob.expect("finished")
    refused = await ask_analysis(s, eve, room, "ann")
    assert refused["code"] == "wrong_status"  # the spectators see the end 5 s late
    assert "5 s late" in refused["reason"]
    s.clock.advance(5_000)
    answer = await analysis_when_ready(s, eve, room, "Ann")  # a name, case-blind
    assert answer["type"] == "game_analysis", answer
    expected = pure(finished["seed"], ["d", "d", "d"])
    assert answer["name"] == "ann"
    assert answer["deal"] == expected.deal.value
    assert (answer["won_until"], answer["lost_from"]) == (expected.won_until, expected.lost_from)
    assert answer["line"] == list(expected.line)
    assert [m["move"] for m in answer["moves"]] == ["d", "d", "d"]
    assert answer["moves"][0]["before"] == expected.deal.value
    assert answer["losing_move"] == expected.losing_move
    unknown = await ask_analysis(s, eve, room, "nobody")
    assert unknown["code"] == "no_such_player"
    missing = await ask_analysis(s, eve, "zzzzzzzz", "ann")
    assert missing["code"] == "no_such_room"
    if s.app.archiver is not None:  # the room leaves the store: its analysis goes with it
        s.clock.advance(2_000)
        stream = f"{{{room}}}:room"
        for _ in range(200):  # the server's own sweep may hold the room's claim: until it is done
            await s.app.archiver.sweep()
            if await s.app.store.last_version(stream) == 0:
                break
            await asyncio.sleep(0.05)
        assert await s.app.store.last_version(stream) == 0
        again = await ask_analysis(s, eve, room, "ann")
        assert {k: v for k, v in again.items() if k != "ref"} == {
            k: v for k, v in answer.items() if k != "ref"
        }


async def test_a_daily_attempt_is_analysed_for_nobody_before_its_day_is_over(
    served: Served,
) -> None:
    s = served
    ann, eve = await s.account("ann"), await s.account("eve")
    started = await s.ask(ann, {"type": "daily", "variant": "quadrennial"}, "daily_started")
    room = started["room"]
    await ann.expect("started")
    await ann.move("d")
    await ann.send({"type": "resign"})
    await ann.expect("finished")
    await asyncio.sleep(0.2)  # time enough to analyse: it is the day that holds it back
    for client in (ann, eve):
        refused = await ask_analysis(s, client, room, "ann")
        assert refused["code"] == "not_allowed", refused
    s.clock.advance(tag_end_ms(f"quadrennial:{started['date']}") - s.clock.now_ms())
    answer = await analysis_when_ready(s, eve, room, "ann")
    assert answer["type"] == "game_analysis", answer
    assert [m["move"] for m in answer["moves"]] == ["d"]


async def test_a_challenge_attempt_is_analysed_for_its_players_once_they_played(
    served: Served,
) -> None:
    s = served
    ann, bob = await s.account("ann"), await s.account("bob")
    made = await s.ask(
        ann, {"type": "challenge_create", "variant": "quadrennial", "to": ["bob"]}, "challenge"
    )
    anns = await play_out(s, ann, made["code"])
    await asyncio.sleep(0.2)
    refused = await ask_analysis(s, bob, anns["room"], "ann")
    assert refused["code"] == "not_allowed", refused  # bob has the same deal to play
    s.clock.advance(HOUR)
    await play_out(s, bob, made["code"])
    answer = await analysis_when_ready(s, bob, anns["room"], "ann")
    assert answer["type"] == "game_analysis", answer
    assert [m["move"] for m in answer["moves"]] == ["d", "d", "d"]


async def test_a_profile_counts_a_game_once_it_may_be_shown(served: Served) -> None:
    """Accuracy from the analyses, on the profile: a game lost from a won deal at its third
    move kept two moves of three; counted only once the spectators have seen its end."""
    s = served
    ann, eve = await s.account("ann"), await s.account("eve")
    room = await create_race(s, ann, capacity=1, seed=47, spectator_delay_ms=5_000)
    await s.ask(ann, {"type": "join", "room": room}, "joined")
    await ann.send({"type": "start"})
    await ann.expect("started")
    for move in ("r4f", "r4f", "r7f"):
        await ann.move(move)
    await ann.send({"type": "resign"})
    await ann.expect("finished")
    await asyncio.sleep(0.3)  # analysed by now: the delay holds it back
    card = await s.ask(eve, {"type": "profile", "name": "ann"}, "player_card")
    assert card["accuracy"] == []
    s.clock.advance(5_000)
    await analysis_when_ready(s, eve, room, "ann")
    card = await s.ask(eve, {"type": "profile", "name": "Ann"}, "player_card")
    assert card["accuracy"] == [
        {"variant": "quadrennial", "games": 1, "moves": 3, "kept": 2, "lost_won": 1,
         "share": 0.6667},
    ]  # fmt: skip
