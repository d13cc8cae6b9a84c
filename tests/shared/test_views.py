"""Public views and public events (docs/architecture.md, "Public views"): no stock order
leaves the server, and the public fold reaches the same view as the private one."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from shared import (
    CorruptEvent,
    PublicView,
    apply_move,
    deal_deck,
    fold,
    foundation_count,
    legal_moves,
    move_event,
    new_game,
    public_event,
    public_fold,
    public_fold_event,
    public_legal_moves,
    public_view,
    resign_event,
    start_event,
)


def _events(variant: str, deck: list[str], moves: list[str]) -> list[dict[str, Any]]:
    state = new_game(variant, deck=deck)
    events = [start_event(variant, deck, at=10, seed="secret")]
    for i, move in enumerate(moves):
        events.append(move_event(state, move, at=11 + i))
        state = apply_move(state, move)
    return events


def test_public_start_has_layout_but_no_deck_or_seed() -> None:
    deck = deal_deck("swiss", 42)
    event = public_event(start_event("swiss", deck, at=5, seed=42))
    assert "deck" not in event
    assert "seed" not in event
    assert event == {
        "type": "game_started",
        "v": 1,
        "variant": "swiss",
        "deal_version": 1,
        "layout": {
            "tableau": [
                ["KD"],
                ["AH", "QD"],
                ["9S", "9H", "8H"],
                ["7D", "4D", "QS", "TD"],
                ["4H", "6D", "QH", "4C", "KH"],
                ["6C", "7H", "JD", "2D"],
                ["7S", "3D", "5D"],
                ["2C", "TS"],
                ["AC"],
            ],
            "reserve": [],
        },
        "stock_count": 27,
        "at": 5,
    }
    assert msgpack.unpackb(msgpack.packb(event)) == event


def test_public_start_of_quadrennial() -> None:
    event = public_event(start_event("quadrennial", deal_deck("quadrennial", 42), at=5))
    assert event["layout"] == {
        "tableau": [],
        "reserve": ["JC", "8C", "3H", "TD", "KC", "7H", "AD", "8S"],
    }
    assert event["stock_count"] == 44


def test_other_events_are_already_public() -> None:
    state = new_game("swiss", seed=1)
    moved = move_event(state, "d", at=3)
    assert public_event(moved) == moved
    assert public_event(resign_event(at=4)) == resign_event(at=4)


def test_public_view_hides_the_stock_order() -> None:
    state = new_game("swiss", seed=1)
    view = public_view(state)
    assert view.stock_count == 27
    hidden = [card for card in state.stock if card is not None and card not in view.waste]
    assert hidden
    assert not any(card in repr(view) for card in hidden)
    assert view.foundation_count == 0
    assert foundation_count(view) == 0
    assert (view.won, view.over, view.resigned) == (False, False, False)


def test_public_fold_equals_public_view_of_fold_with_redeals() -> None:
    """Quadrennial through both redeals: refills after a redeal come from the events."""
    deck = deal_deck("quadrennial", 9)
    state = new_game("quadrennial", deck=deck)
    moves: list[str] = []
    # Deal everything, playing whatever plays, redealing when possible, until stuck.
    while legal := legal_moves(state):
        move = next((m for m in sorted(legal) if m.endswith("f")), None) or sorted(legal)[0]
        moves.append(move)
        state = apply_move(state, move)
    assert moves.count("redeal") == 2
    events = _events("quadrennial", deck, moves)
    for k in range(1, len(events) + 1, 7):
        assert public_fold(public_event(e) for e in events[:k]) == public_view(fold(events[:k]))
    assert public_fold(map(public_event, events)) == public_view(state)


def test_public_fold_accepts_a_private_start() -> None:
    events = _events("swiss", deal_deck("swiss", 3), ["d", "d"])
    assert public_fold(events) == public_view(fold(events))


def test_public_fold_of_resignation() -> None:
    events = [*_events("swiss", deal_deck("swiss", 3), ["d"]), resign_event(at=99)]
    view = public_fold(map(public_event, events))
    assert view.resigned
    assert view.over
    assert not view.won
    assert public_legal_moves(view) == set()


def test_public_legal_moves_match() -> None:
    state = new_game("swiss", seed=5)
    for _ in range(10):
        assert public_legal_moves(public_view(state)) == legal_moves(state)
        state = apply_move(state, sorted(legal_moves(state))[0])


def test_public_fold_needs_the_revealed_cards() -> None:
    events = [public_event(e) for e in _events("swiss", deal_deck("swiss", 3), ["d"])]
    missing = {**events[1], "revealed": []}
    with pytest.raises(CorruptEvent, match="unknown"):
        public_fold([events[0], missing])
    extra = {**events[1], "revealed": [*events[1]["revealed"], "AS"]}
    with pytest.raises(CorruptEvent, match="more cards"):
        public_fold([events[0], extra])
    for bad in (["ZZ"], [["AS"]], "AS", None):
        bogus = {**events[1], "revealed": bad}
        with pytest.raises(CorruptEvent, match="revealed"):
            public_fold([events[0], bogus])


def test_public_fold_needs_every_card_a_move_turned_up() -> None:
    """A Quadrennial redeal refills several empty reserve piles at once: given fewer of the
    cards it turned up, the public fold refuses it at the first card missing."""
    for seed in range(100):
        state = new_game("quadrennial", seed=seed)
        events = [start_event("quadrennial", deal_deck("quadrennial", seed), at=0)]
        while legal := sorted(legal_moves(state), key=lambda m: (not m.endswith("f"), m)):
            events.append(move_event(state, legal[0], at=len(events)))
            state = apply_move(state, legal[0])
            if len(events[-1]["revealed"]) >= 2:
                break
        if len(events[-1]["revealed"]) >= 2:
            break
    assert len(events[-1]["revealed"]) >= 2
    public = [public_event(e) for e in events]
    assert public_fold(public) == public_view(state)
    short = {**public[-1], "revealed": public[-1]["revealed"][:1]}
    with pytest.raises(CorruptEvent, match="unknown"):
        public_fold([*public[:-1], short])


@pytest.mark.parametrize(
    "event",
    [
        {"type": "game_started", "v": 1, "variant": "swiss", "layout": {}, "stock_count": 27},
        {"type": "game_started", "v": 1, "variant": "swiss", "stock_count": 27},
        {"type": "game_started", "v": 1, "variant": "golf", "layout": {}, "stock_count": 1},
        {"type": "moved", "v": 1, "move": "d", "revealed": ["AS"], "at": 1},
        {"type": "game_started", "v": 7},
    ],
)
def test_bad_public_starts_are_corrupt(event: dict[str, Any]) -> None:
    with pytest.raises(CorruptEvent):
        public_fold_event(None, event)


def test_public_view_is_a_frozen_value() -> None:
    view = public_view(new_game("quadrennial", seed=1))
    assert isinstance(view, PublicView)
    with pytest.raises(AttributeError):
        view.moves_made = 3  # type: ignore[misc]
    assert view.tableau == ()
    assert len(view.reserve) == 8
    assert view.redeals_left == 2
