"""The shared game API (docs/architecture.md, "The game core") beyond the rules themselves."""

from __future__ import annotations

import pytest

from shared import (
    BadCard,
    IllegalMove,
    UnknownVariant,
    apply_move,
    deal_deck,
    foundation_count,
    is_over,
    is_won,
    new_game,
    public_view,
)


def test_new_game_takes_exactly_one_of_seed_or_deck() -> None:
    deck = deal_deck("swiss", 1)
    assert new_game("swiss", seed=1) == new_game("swiss", deck=deck)
    with pytest.raises(ValueError, match="exactly one"):
        new_game("swiss")
    with pytest.raises(ValueError, match="exactly one"):
        new_game("swiss", seed=1, deck=deck)


def test_new_game_from_a_lenient_deck() -> None:
    """RULES.md, Cards and codes: input codes are case-insensitive, 10 is T."""
    deck = deal_deck("quadrennial", 2)
    lenient = [c.replace("T", "10").lower() for c in deck]
    assert new_game("quadrennial", deck=lenient) == new_game("quadrennial", deck=deck)


def test_bad_inputs() -> None:
    with pytest.raises(UnknownVariant):
        new_game("klondike", seed=1)
    with pytest.raises(BadCard):
        new_game("swiss", deck=["AS"] * 52)


def test_foundation_count_on_states_and_views() -> None:
    state = new_game("quadrennial", deck=deal_deck("quadrennial", 42))
    assert foundation_count(state) == 0
    after = apply_move(state, "r7f")  # AD from r7 (docs/deals.md vector)
    assert foundation_count(after) == 1
    assert foundation_count(public_view(after)) == 1
    assert public_view(after).foundation_count == 1
    assert after.foundation_count == 1


def test_fresh_game_verdicts() -> None:
    state = new_game("swiss", seed=42)
    assert not is_won(state)
    assert not is_over(state)
    assert state.moves_made == 0
    assert state.resigned is False
    assert state.variant == "swiss"


def test_illegal_move_has_the_wire_code() -> None:
    with pytest.raises(IllegalMove) as info:
        apply_move(new_game("swiss", seed=42), "wf")
    assert info.value.code == "illegal_move"
    assert info.value.reason == "the waste is empty"
