"""Decisions, with plain values: a room folded from events, a request, a time; no store."""

from __future__ import annotations

from typing import Any

import pytest

from server.kernel.errors import (
    AlreadyInRoom,
    CustomDeckDisabled,
    GameOver,
    NotAllowed,
    NotAPlayer,
    NotRacing,
    RoomFull,
    WrongStatus,
)
from server.race.domain import decide as d
from server.race.domain.events import (
    CountdownCancelled,
    CountdownStarted,
    PlayerAway,
    PlayerBack,
    PlayerJoined,
    PlayerLeft,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomClosed,
    RoomEvent,
    encode,
)
from server.race.domain.fold import fold_game_events, fold_room_event
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.domain.timers import Graces, abandoned_now, next_due, time_is_up
from shared import deal_deck, legal_moves
from shared.errors import IllegalMove
from shared.protocol import BadField


class Stored:
    def __init__(self, stream: str, version: int, data: dict[str, Any]) -> None:
        self.stream, self.version, self.data = stream, version, data


def apply(room: Room, events: list[RoomEvent]) -> Room:
    for event in events:
        change = fold_room_event(room, room.version + 1, encode(event))
        assert change is not None
        assert not change.refused
    return room


def lobby(capacity: int = 2, members: tuple[str, ...] = (), **opts: Any) -> Room:
    created = d.decide_create(
        {"variant": "quadrennial", "seed": "s", "countdown_ms": 1000, **opts},
        capacity=capacity,
        deck=None,
        seed="s",
        salt="00",
        time_limit_ms=60_000,
        creator="c",
        now=0,
        members=members,
    )
    return apply(Room("r1"), [created])


def joined(room: Room, *players: str, now: int = 1) -> Room:
    for p in players:
        apply(
            room, d.decide_join(room, p, name=p, token_hash="h" + p, connection=f"x.{p}", now=now)
        )
    return room


def racing(*players: str) -> Room:
    room = joined(lobby(capacity=len(players)), *players)
    apply(room, d.decide_start(room, players[0], now=10))
    apply(room, d.decide_go(room, now=1010))
    for p in players:
        game = room.games[p]
        fold_game_events(game, [Stored(game.stream, 1, d.game_start_event(room, now=1010))])
    return room


def test_create_commits_to_its_secret_and_opens_a_lobby() -> None:
    room = lobby()
    assert room.status is RoomStatus.LOBBY
    assert room.settings.open_seed
    assert room.settings.commitment
    with pytest.raises(ValueError, match="seed or a deck"):
        d.decide_create(
            {"variant": "swiss"},
            capacity=2,
            deck=None,
            seed=None,
            salt="0",
            time_limit_ms=0,
            creator="c",
            now=0,
        )


def test_join_seats_until_full_and_names_stay_unique() -> None:
    room = lobby(capacity=2)
    joined(room, "ann")
    [event] = d.decide_join(room, "bob", name="ann", token_hash="h", connection="x.b", now=2)
    assert isinstance(event, PlayerJoined)
    assert event.name != "ann"
    apply(room, [event])
    with pytest.raises(RoomFull):
        d.decide_join(room, "cat", name="cat", token_hash="h", connection="x.c", now=3)


def test_join_again_takes_the_seat_over_and_only_then() -> None:
    room = joined(lobby(), "ann")
    assert d.decide_join(room, "ann", name="ann", token_hash="h", connection="x.ann", now=2) == []
    [back] = d.decide_join(room, "ann", name="ann", token_hash="h", connection="y.ann", now=2)
    assert back == PlayerBack(2, "ann", "y.ann")


def test_nobody_joins_a_race_under_way() -> None:
    room = racing("ann")
    with pytest.raises(WrongStatus):
        d.decide_join(room, "bob", name="bob", token_hash="h", connection="x", now=2000)


def test_away_only_for_the_connection_that_holds_the_seat() -> None:
    room = joined(lobby(), "ann")
    assert d.decide_away(room, "ann", connection="old.conn", at=5) == []
    assert d.decide_away(room, "ann", connection="x.ann", at=5) == [PlayerAway(5, "ann", "x.ann")]


def test_the_last_to_leave_during_the_countdown_cancels_it() -> None:
    room = joined(lobby(), "ann")
    apply(room, d.decide_start(room, "ann", now=10))
    assert d.decide_leave(room, "ann", now=11) == [PlayerLeft(11, "ann"), CountdownCancelled(11)]
    assert d.decide_leave(room, "nobody", now=11) == []


def test_a_lobby_race_goes_on_with_one_left_in_its_countdown() -> None:
    room = joined(lobby(), "ann", "bob")
    apply(room, d.decide_start(room, "ann", now=10))
    assert d.decide_leave(room, "bob", now=11) == [PlayerLeft(11, "bob")]


def test_a_matched_room_left_with_one_in_its_countdown_closes_unfilled() -> None:
    room = joined(lobby(capacity=3, members=("ann", "bob", "cy")), "ann", "bob", "cy")
    apply(room, d.decide_start(room, "ann", now=10))
    apply(room, d.decide_leave(room, "cy", now=11))  # two still race
    assert room.status is RoomStatus.COUNTDOWN
    events = d.decide_leave(room, "bob", now=12)
    assert events == [PlayerLeft(12, "bob"), CountdownCancelled(12), RoomClosed(12, "unfilled")]
    apply(room, events)
    assert (room.status, room.closed_reason) == (RoomStatus.CLOSED, "unfilled")
    assert d.decide_go(room, now=1010) == []  # the countdown's timer finds nothing to start


def test_start_needs_a_seat_and_a_lobby() -> None:
    room = joined(lobby(), "ann")
    with pytest.raises(NotAPlayer):
        d.decide_start(room, "bob", now=1)
    assert d.decide_start(room, "ann", now=10) == [CountdownStarted(10, 1010)]
    apply(room, d.decide_start(room, "ann", now=10))
    with pytest.raises(WrongStatus):
        d.decide_start(room, "ann", now=11)


def test_go_and_finish_happen_once_whoever_asks() -> None:
    room = joined(lobby(), "ann")
    assert d.decide_go(room, now=5) == []  # not counting down
    apply(room, d.decide_start(room, "ann", now=10))
    [started] = d.decide_go(room, now=1010)
    assert started == RaceStarted(1010, 61_010)
    apply(room, [started])
    assert d.decide_go(room, now=1011) == []
    assert d.decide_finish(room, "all_done", now=1020) == []  # ann still plays
    [finished] = d.decide_finish(room, "time_limit", now=61_010)
    assert isinstance(finished, RaceFinished)
    assert finished.ranking[0]["player"] == "ann"
    apply(room, [finished])
    assert d.decide_finish(room, "time_limit", now=61_011) == []


def test_a_rematch_is_offered_once_by_a_racer_of_a_race_that_is_over() -> None:
    room = racing("ann", "bob")
    with pytest.raises(WrongStatus):
        d.decide_rematch(room, "ann", rematch="r2", now=2000)
    apply(room, d.decide_finish(room, "time_limit", now=61_010))
    with pytest.raises(NotAPlayer):
        d.decide_rematch(room, "watcher", rematch="r2", now=61_020)
    [offered] = d.decide_rematch(room, "bob", rematch="r2", now=61_020)
    assert offered == RematchOffered(61_020, "r2", "bob")
    apply(room, [offered])
    assert (room.status, room.rematch) == (RoomStatus.FINISHED, "r2")
    assert d.decide_rematch(room, "ann", rematch="r3", now=61_030) == []  # r2 is everyone's


def test_a_rematch_is_made_like_its_room_on_a_new_secret_deal() -> None:
    room = lobby(capacity=3, spectator_delay_ms=5000, rated=False, time_limit_ms=60_000)
    asked = d.rematch_request(room)
    assert asked == {  # no seed: the chosen seed "s" is not dealt again
        "variant": "quadrennial",
        "capacity": 3,
        "countdown_ms": 1000,
        "time_limit_ms": 60_000,
        "spectator_delay_ms": 5000,
        "rated": False,
        "winnable": False,
    }
    daily = joined(lobby(capacity=1, daily="swiss:2026-12-03"), "ann")
    with pytest.raises(NotAllowed):
        d.check_rematch(daily, "ann")


def test_only_a_lobby_nobody_ever_sat_in_closes_unused() -> None:
    room = lobby()
    assert d.decide_close_unused(room, now=5) == [RoomClosed(5, "idle")]
    joined(room, "ann")
    apply(room, d.decide_leave(room, "ann", now=6))
    assert d.decide_close_unused(room, now=7) == []  # someone sat down once: the TTL decides


def test_an_idle_lobby_closes_after_its_ttl_only() -> None:
    room = lobby()
    assert d.decide_close_idle(room, ttl_ms=100, now=99) == []
    assert d.decide_close_idle(room, ttl_ms=0, now=10**9) == []
    assert d.decide_close_idle(room, ttl_ms=100, now=100) == [RoomClosed(100, "idle")]


def test_a_move_is_checked_against_the_folded_game_and_the_clock() -> None:
    room = racing("ann")
    game = room.games["ann"]
    assert game.state is not None
    move = sorted(legal_moves(game.state))[0]
    event = d.decide_move(room, game, move, cid=7, now=2000)
    assert (event["type"], event["move"], event["cid"]) == ("moved", move, 7)
    with pytest.raises(IllegalMove):
        d.decide_move(room, game, "t9t9x9", cid=8, now=2000)
    with pytest.raises(NotRacing):
        d.decide_move(room, game, move, cid=9, now=61_010)  # the time is up


def test_resign_once_and_hints_only_alone() -> None:
    room = racing("ann", "bob")
    game = room.games["ann"]
    with pytest.raises(NotAllowed):
        d.check_hint(room, game)
    event = d.decide_resign(room, game, reason="abandoned", now=3000)
    fold_game_events(game, [Stored(game.stream, 2, event)])
    with pytest.raises(GameOver):
        d.decide_resign(room, game, reason=None, now=3001)


def test_timers_follow_the_room() -> None:
    graces = Graces(abandon_ms=500, lobby_ttl_ms=1000)
    room = lobby()
    assert next_due(room, graces) == 1000  # idle since it was made
    joined(room, "ann", "bob")
    apply(room, d.decide_start(room, "ann", now=10))
    assert next_due(room, graces) == 1010
    apply(room, d.decide_go(room, now=1010))
    assert next_due(room, graces) == 61_010
    apply(room, d.decide_away(room, "bob", connection="x.bob", at=2000))
    for p in ("ann", "bob"):
        game = room.games[p]
        fold_game_events(game, [Stored(game.stream, 1, d.game_start_event(room, now=1010))])
    assert next_due(room, graces) == 2500
    assert abandoned_now(room, graces, 2499) == []
    assert abandoned_now(room, graces, 2500) == ["bob"]
    assert d.abandoned(room, "bob", grace_ms=500, now=2500)
    assert not time_is_up(room, 61_009)
    assert time_is_up(room, 61_010)


# ---- accounts and rated rooms ---------------------------------------------------------------


def _created(msg: dict[str, Any], *, capacity: int = 4, deck: list[str] | None = None) -> bool:
    return d.decide_create(
        {"variant": "swiss", **msg},
        capacity=capacity,
        deck=deck,
        seed=None if deck else "s",
        salt="00",
        time_limit_ms=0,
        creator="c",
        now=0,
    ).rated


def test_only_a_secret_seed_between_several_racers_is_rated_unless_asked_not_to() -> None:
    assert _created({}) is True
    assert _created({"rated": False}) is False
    assert _created({"seed": "chosen"}) is False
    assert _created({}, deck=["AS"] * 52) is False
    assert _created({}, capacity=1) is False


def test_an_account_has_one_seat_in_a_room() -> None:
    room = lobby(capacity=3, seed="x")
    apply(
        room,
        d.decide_join(
            room, "p1", name="ann", token_hash="t1", connection="c1", now=1, account="ann"
        ),
    )
    with pytest.raises(AlreadyInRoom):
        d.decide_join(
            room, "p2", name="ANN", token_hash="t2", connection="c2", now=2, account="ANN"
        )
    events = d.decide_join(room, "p3", name="bob", token_hash="t3", connection="c3", now=2)
    assert isinstance(events[0], PlayerJoined)
    assert events[0].account is None  # a guest
    assert room.seats["p1"].account == "ann"


def test_a_create_request_is_read_against_what_the_server_allows() -> None:
    read = d.read_create_request
    assert read({"variant": "swiss"}, max_players=8, allow_custom_deck=False) == d.Deal(
        4, None, None, False
    )
    assert read({"variant": "swiss", "seed": 42}, max_players=2, allow_custom_deck=False).seed
    with pytest.raises(BadField):
        read({"variant": "swiss", "capacity": 5}, max_players=4, allow_custom_deck=False)
    with pytest.raises(BadField):
        read(
            {"variant": "swiss", "seed": 1, "winnable": True},
            max_players=4,
            allow_custom_deck=False,
        )
    deck = deal_deck("swiss", 1)
    with pytest.raises(CustomDeckDisabled):
        read({"variant": "swiss", "deck": deck}, max_players=4, allow_custom_deck=False)
    assert read(
        {"variant": "swiss", "deck": deck}, max_players=4, allow_custom_deck=True
    ).deck == tuple(deck)
