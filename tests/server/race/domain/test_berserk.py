"""Berserk in a tournament race: before the start only, once, halving the racer's own clock,
whose end the race clock then keeps as it keeps the race's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from server.kernel.errors import NotAllowed, NotAPlayer, NotRacing, WrongStatus
from server.race.domain import decide as d
from server.race.domain.events import PlayerBerserked, decode, encode
from server.race.domain.fold import fold_game_events
from server.race.domain.model import Room
from server.race.domain.progress import TIME_LIMIT, PlayerStatus, timed_out_ranking
from server.race.domain.timers import Graces, clocked_out_now, next_due
from tests.server.race.domain.test_decide import Stored, apply, joined

GRACES = Graces(abandon_ms=0, lobby_ttl_ms=0)
LIMIT = 60_000


def tournament_lobby(tournament: str = "t123456789") -> Room:
    created = d.decide_create(
        {"variant": "quadrennial", "countdown_ms": 1000},
        capacity=2,
        deck=None,
        seed="s",
        salt="00",
        time_limit_ms=LIMIT,
        creator="c",
        now=0,
        members=("ann", "bob"),
        tournament=tournament,
    )
    return joined(apply(Room("r1"), [created]), "ann", "bob")


def start(room: Room) -> Room:
    apply(room, d.decide_start(room, "ann", now=10))
    apply(room, d.decide_go(room, now=1010))
    for p in room.seats:
        game = room.games[p]
        fold_game_events(game, [Stored(game.stream, 1, d.game_start_event(room, now=1010))])
    return room


def test_berserk_before_the_start_halves_the_racers_own_clock() -> None:
    room = tournament_lobby()
    [event] = d.decide_berserk(room, "ann", now=5)
    assert event == PlayerBerserked(5, "ann")
    assert decode(encode(event)) == event
    apply(room, [event])
    assert d.decide_berserk(room, "ann", now=6) == []  # once
    apply(room, d.decide_start(room, "ann", now=10))
    apply(room, d.decide_berserk(room, "bob", now=11))  # during the countdown too
    apply(room, d.decide_go(room, now=1010))
    for p in room.seats:
        game = room.games[p]
        fold_game_events(game, [Stored(game.stream, 1, d.game_start_event(room, now=1010))])
    assert room.ends_at == 1010 + LIMIT
    assert room.clock_ends_at("ann") == 1010 + LIMIT // 2
    assert room.seats["ann"].wire()["berserk"]
    assert next_due(room, GRACES) == 1010 + LIMIT // 2
    assert clocked_out_now(room, 1010 + LIMIT // 2 - 1) == []
    assert sorted(clocked_out_now(room, 1010 + LIMIT // 2)) == ["ann", "bob"]
    with pytest.raises(NotRacing, match="clock"):
        d.check_playing(room, room.games["ann"], now=1010 + LIMIT // 2)


def test_berserk_is_refused_after_the_start_outside_tournaments_and_to_spectators() -> None:
    room = start(tournament_lobby())
    with pytest.raises(WrongStatus):
        d.decide_berserk(room, "ann", now=2000)
    with pytest.raises(NotAPlayer):
        d.decide_berserk(tournament_lobby(), "cat", now=5)
    with pytest.raises(NotAllowed):
        d.decide_berserk(tournament_lobby(tournament=""), "ann", now=5)


def test_without_berserk_the_own_clock_is_the_races() -> None:
    room = start(tournament_lobby())
    assert room.clock_ends_at("ann") == room.ends_at
    assert clocked_out_now(room, room.ends_at or 0) == []


def test_a_clock_that_ran_out_is_a_timeout_not_a_resignation() -> None:
    room = start(tournament_lobby())
    ann, bob = room.games["ann"], room.games["bob"]
    out = d.decide_resign(room, ann, reason="clock", now=1010 + LIMIT // 2)
    advanced = fold_game_events(ann, [Stored(ann.stream, 2, out)])
    assert advanced is not None
    assert advanced.progress.status is PlayerStatus.TIMED_OUT
    assert advanced.progress.status.done
    assert ann.progress.finished_at == 1010 + LIMIT // 2
    gave_up = d.decide_resign(room, bob, reason=None, now=1010 + LIMIT // 2)
    fold_game_events(bob, [Stored(bob.stream, 2, gave_up)])
    assert bob.progress.status is PlayerStatus.RESIGNED
    [end] = d.decide_finish(room, "all_done", now=1010 + LIMIT // 2)
    assert [r["status"] for r in end.ranking] == ["timed_out", "resigned"]


def test_the_races_time_limit_times_out_the_games_still_on() -> None:
    room = start(tournament_lobby())
    bob = room.games["bob"]
    fold_game_events(
        bob, [Stored(bob.stream, 2, d.decide_resign(room, bob, reason=None, now=2000))]
    )
    [end] = d.decide_finish(room, TIME_LIMIT, now=1010 + LIMIT)
    assert {r["player"]: r["status"] for r in end.ranking} == {
        "ann": "timed_out",
        "bob": "resigned",
    }
    apply(room, [end])
    assert room.games["ann"].progress.status is PlayerStatus.TIMED_OUT
    assert room.games["ann"].progress.finished_at == 1010 + LIMIT
    assert room.games["bob"].progress.status is PlayerStatus.RESIGNED


def test_an_end_written_before_timeouts_were_recorded_reads_as_one() -> None:
    room = start(tournament_lobby())
    [end] = d.decide_finish(room, TIME_LIMIT, now=1010 + LIMIT)
    old = replace(end, ranking=tuple({**r, "status": "playing"} for r in end.ranking))
    apply(room, [decode(encode(old))])
    assert room.finished is not None
    assert {r["status"] for r in room.finished.ranking} == {"timed_out"}
    assert timed_out_ranking([{"status": "won"}, {"status": "waiting"}]) == (
        {"status": "won"},
        {"status": "timed_out"},
    )
