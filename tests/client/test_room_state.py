"""The room's folded state on the client: what each message changes, with no screen and no
connection."""

from __future__ import annotations

from typing import Any

import pytest

from client.room_state import Fold, RoomState
from shared import apply_move_revealing, deal_deck, new_game, public_event, start_event
from shared.errors import ArenaError, ClientError


def events(moves: list[str]) -> list[dict[str, Any]]:
    deck = deal_deck("swiss", 1)
    state = new_game("swiss", deck=deck)
    out = [public_event(start_event("swiss", deck, at=1000))]
    for move in moves:
        state, revealed = apply_move_revealing(state, move)
        out.append({"type": "moved", "v": 1, "move": move, "revealed": revealed, "at": 1001})
    return out


def seat(pid: str, name: str, status: str = "waiting") -> dict[str, Any]:
    return {"player": pid, "name": name, "status": status, "foundation": 0, "moves": 0}


def test_another_rooms_state_is_not_folded() -> None:
    state = RoomState(room_id="abc")
    assert not state.fold_room({"id": "xyz", "players": [seat("pa", "ann")]})
    assert state.room == {}
    assert state.fold_room({"id": "ABC", "players": [seat("pa", "ann")]})  # codes: any case
    assert state.names == {"pa": "ann"}


def test_a_waiting_player_who_left_the_lobby_is_dropped_a_racer_is_kept() -> None:
    state = RoomState()
    state.fold_room({"id": "r", "players": [seat("pa", "ann"), seat("pb", "bob", "playing")]})
    state.fold_room({"id": "r", "players": []})
    assert list(state.progress) == ["pb"]


def test_game_events_fold_in_order_only() -> None:
    state = RoomState(me="pa")
    game = events(["d", "t7t1"])
    state.fold_game({"player": "pa", "version": 1, "events": game[:1]})
    assert state.my_version() == 1
    assert state.fold_game_event({"player": "pa", "version": 1, "event": game[0]}) is Fold.STALE
    assert state.fold_game_event({"player": "pa", "version": 3, "event": game[2]}) is Fold.GAP
    assert state.fold_game_event({"player": "pa", "version": 2, "event": game[1]}) is Fold.APPLIED
    assert state.my_view.moves_made == 1
    assert state.my_events() == game[:2]


def test_an_event_that_does_not_fold_changes_nothing() -> None:
    state = RoomState(me="pa")
    game = events(["d"])
    state.fold_game({"player": "pa", "version": 1, "events": game[:1]})
    bad = {"type": "moved", "v": 1, "move": "zz", "revealed": None, "at": 1}
    with pytest.raises(ArenaError):
        state.fold_game_event({"player": "pa", "version": 2, "event": bad})
    assert state.my_version() == 1
    with pytest.raises(ArenaError):
        state.fold_game({"player": "pa", "version": 2, "events": [game[0], bad]})
    assert state.my_version() == 1


def test_a_room_left_for_its_rematch_is_forgotten_and_not_folded_again() -> None:
    state = RoomState(room_id="abc")
    state.fold_joined({"room": "abc", "player": "pa"})
    state.fold_room({"id": "abc", "status": "finished", "players": [seat("pa", "ann", "won")]})
    state.fold_finished({"ranking": [{"place": 1, **seat("pa", "ann", "won")}], "reason": "x"})
    state.forget_room()
    assert (state.room_id, state.me, state.room, state.ranking) == (None, None, {}, None)
    assert not state.names
    assert not state.progress
    # The finished room's state, sent as the rematch was offered, comes after the move.
    assert not state.fold_room({"id": "ABC", "status": "finished", "rematch": "xyz"})
    state.fold_joined({"room": "xyz", "player": "pa"})
    assert state.fold_room({"id": "xyz", "status": "lobby", "players": [seat("pa", "ann")]})
    assert state.room["status"] == "lobby"


def test_finished_ranks_and_names_everyone() -> None:
    state = RoomState()
    ranking = [{"place": 1, **seat("pb", "bob", "won")}]
    state.fold_finished({"ranking": ranking, "reason": "all_done"})
    assert state.ranking == ranking
    assert state.names == {"pb": "bob"}
    assert state.progress["pb"]["place"] == 1
    state.new_game()
    assert state.ranking is None
    assert not state.progress


def test_a_player_by_number_name_or_id() -> None:
    state = RoomState()
    state.fold_room({"id": "r", "players": [seat("pa", "Ann"), seat("pb", "bob")]})
    assert state.player_id("1", []) == "pa"  # join order without a panel
    assert state.player_id("1", ["pb", "pa"]) == "pb"  # the panel's order
    assert state.player_id("ANN", []) == "pa"
    assert state.player_id("pb", []) == "pb"
    with pytest.raises(ClientError, match="players: Ann, bob"):
        state.player_id("zed", [])
