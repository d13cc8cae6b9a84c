"""Events and the fold (docs/architecture.md, "Events"): a game is its game_started event and
the moves after it; folding events gives the state, a prefix gives the state at that point."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from shared import (
    DEAL_VERSION,
    EVENT_VERSION,
    CorruptEvent,
    IllegalMove,
    apply_move,
    deal_deck,
    fold,
    fold_event,
    move_event,
    new_game,
    resign_event,
    start_event,
)


def _game(variant: str, seed: int, moves: list[str]) -> list[dict[str, Any]]:
    state = new_game(variant, seed=seed)
    events = [start_event(variant, deal_deck(variant, seed), at=1000, seed=seed)]
    for i, move in enumerate(moves):
        events.append(move_event(state, move, at=2000 + i))
        state = apply_move(state, move)
    return events


def test_start_event_shape() -> None:
    deck = deal_deck("swiss", 5)
    event = start_event("swiss", deck, at=1234, seed=5)
    assert event == {
        "type": "game_started",
        "v": EVENT_VERSION,
        "variant": "swiss",
        "deal_version": DEAL_VERSION,
        "deck": deck,
        "seed": 5,
        "at": 1234,
    }


def test_move_event_lists_the_dealt_card() -> None:
    """The revealed list names the card a deal turned up (Swiss: deck[25] first)."""
    deck = deal_deck("swiss", 5)
    state = new_game("swiss", deck=deck)
    event = move_event(state, "d", at=7)
    assert event == {"type": "moved", "v": 1, "move": "d", "revealed": [deck[25]], "at": 7}


def test_move_event_lists_refilled_reserve_cards() -> None:
    """Quadrennial: a reserve card played is replaced from the stock, and the event says by what
    (RULES.md, Quadrennial, standing refill rule)."""
    deck = deal_deck("quadrennial", 1)
    ace = deck.index("AH")
    deck[0], deck[ace] = deck[ace], deck[0]  # AH to r1
    state = new_game("quadrennial", deck=deck)
    event = move_event(state, "r1f", at=1)
    assert event["revealed"] == [deck[8]]


def test_move_event_validates() -> None:
    state = new_game("swiss", seed=5)
    with pytest.raises(IllegalMove):
        move_event(state, "wf", at=1)
    with pytest.raises(IllegalMove):
        move_event(state, "nonsense", at=1)


def test_resign_event() -> None:
    assert resign_event(at=9) == {"type": "resigned", "v": 1, "at": 9}


def test_events_are_msgpack_ready() -> None:
    events = [*_game("quadrennial", 3, ["d", "d"]), resign_event(at=5)]
    for event in events:
        assert msgpack.unpackb(msgpack.packb(event)) == event


def test_fold_rebuilds_the_state_and_prefixes_give_earlier_states() -> None:
    moves = ["d", "d", "d", "d"]
    events = _game("swiss", 8, moves)
    state = new_game("swiss", seed=8)
    assert fold(events[:1]) == state
    for k, move in enumerate(moves, start=2):
        state = apply_move(state, move)
        assert fold(events[:k]) == state


def test_fold_event_step_by_step() -> None:
    events = _game("quadrennial", 4, ["d", "d"])
    state = None
    for event in events:
        state = fold_event(state, event)
    assert state == fold(events)
    assert state is not None
    assert state.moves_made == 2


def test_fold_of_resignation() -> None:
    events = [*_game("swiss", 2, ["d"]), resign_event(at=3)]
    state = fold(events)
    assert state.resigned
    assert state.moves_made == 1


def test_fold_ignores_the_revealed_field() -> None:
    """The fold recomputes dealt cards from the deck; it trusts nothing from "revealed"."""
    events = _game("swiss", 2, ["d"])
    events[1] = {**events[1], "revealed": ["AS"]}
    assert fold(events).waste == (deal_deck("swiss", 2)[25],)


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        ([], "no events"),
        ([{"type": "moved", "v": 1, "move": "d", "revealed": [], "at": 1}], "starts with"),
        ([{"type": "exploded", "v": 1}], "unknown event type"),
        ([{"v": 1}], "unknown event type"),
        (["not a map"], "map"),
        ([{"type": "game_started", "v": 2}], "schema version 2"),
        ([{"type": "game_started"}], "schema version None"),
        (
            [{"type": "game_started", "v": 1, "variant": "chess", "deal_version": 1, "deck": []}],
            "unknown variant",
        ),
        (
            [{"type": "game_started", "v": 1, "variant": "swiss", "deal_version": 1, "deck": []}],
            "bad deck",
        ),
        (
            [{"type": "game_started", "v": 1, "variant": "swiss", "deck": deal_deck("swiss", 1)}],
            "deal_version",
        ),
    ],
)
def test_corrupt_streams_are_rejected(events: list[Any], reason: str) -> None:
    with pytest.raises(CorruptEvent, match=reason) as info:
        fold(events)
    assert info.value.code == "corrupt_event"


def test_illegal_stored_move_is_corrupt() -> None:
    events = _game("swiss", 1, [])
    events.append({"type": "moved", "v": 1, "move": "wf", "revealed": [], "at": 1})
    with pytest.raises(CorruptEvent, match="illegal"):
        fold(events)


@pytest.mark.parametrize("move", [None, 35, ["d"], {"m": "d"}, "D"])
def test_malformed_stored_move_is_corrupt(move: object) -> None:
    events = [*_game("swiss", 1, []), {"type": "moved", "v": 1, "move": move, "at": 1}]
    with pytest.raises(CorruptEvent, match="illegal"):
        fold(events)


def test_boolean_schema_version_is_corrupt() -> None:
    start = {**_game("swiss", 1, [])[0], "v": True}
    with pytest.raises(CorruptEvent, match="schema version True"):
        fold([start])


def test_second_start_is_corrupt() -> None:
    events = _game("swiss", 1, ["d"])
    with pytest.raises(CorruptEvent, match="only one game_started"):
        fold([*events, events[0]])


def test_moves_after_resignation_are_corrupt() -> None:
    events = [*_game("swiss", 1, []), resign_event(at=2)]
    with pytest.raises(CorruptEvent, match="resigned"):
        fold([*events, {"type": "moved", "v": 1, "move": "d", "revealed": [], "at": 3}])
    with pytest.raises(CorruptEvent):
        fold([*events, resign_event(at=3)])
