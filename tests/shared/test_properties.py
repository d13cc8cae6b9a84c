"""Properties over random decks and random legal play (hypothesis): cards are conserved, legal
moves are exactly the moves that apply, folds rebuild the live state, the public fold equals
the public view, deals are reproducible."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared import (
    FULL_DECK,
    GameState,
    IllegalMove,
    apply_move,
    deal_deck,
    fold,
    is_over,
    legal_moves,
    move_event,
    new_game,
    parse_move,
    public_event,
    public_fold,
    public_legal_moves,
    public_view,
    render_board,
    resign_event,
    start_event,
)

SETTINGS = settings(max_examples=30, deadline=None)

variants = st.sampled_from(["swiss", "quadrennial"])
decks = st.permutations(FULL_DECK)


def _cards(state: GameState) -> Counter[str]:
    cards: Counter[str] = Counter()
    for pile in state.tableau:
        cards.update(pile)
    cards.update(c for c in state.reserve if c is not None)
    cards.update(c for c in state.stock if c is not None)
    cards.update(state.waste)
    for f in state.foundations:
        cards.update(f)
    return cards


def _play(
    data: st.DataObject, variant: str, deck: list[str], max_moves: int
) -> tuple[list[GameState], list[dict[str, Any]]]:
    """Random legal play: the states passed through and the events recorded."""
    state = new_game(variant, deck=deck)
    states = [state]
    events = [start_event(variant, deck, at=0)]
    for i in range(max_moves):
        legal = sorted(legal_moves(state))
        if not legal:
            break
        move = legal[data.draw(st.integers(0, len(legal) - 1), label="move")]
        events.append(move_event(state, move, at=i + 1))
        state = apply_move(state, move)
        states.append(state)
    return states, events


def _candidates(state: GameState) -> set[str]:
    """Every well-formed move that could name something in this position (or nearly)."""
    longest = max((len(p) for p in state.tableau), default=0)
    moves = {"d", "redeal", "wf"}
    moves.update(f"r{i}f" for i in range(1, 9))
    moves.update(f"t{i}f" for i in range(1, 10))
    for j in range(1, 10):
        moves.add(f"wt{j}")
        moves.update(f"f{s}t{j}" for s in "cdhs")
        for i in range(1, 10):
            if i != j:
                moves.add(f"t{i}t{j}")
                moves.update(f"t{i}t{j}x{n}" for n in range(2, longest + 2))
    return moves


@SETTINGS
@given(variant=variants, deck=decks, data=st.data())
def test_cards_are_conserved(variant: str, deck: list[str], data: st.DataObject) -> None:
    """The 52 cards are all somewhere, once, after every move."""
    states, _ = _play(data, variant, deck, 150)
    for state in states:
        assert _cards(state) == Counter(FULL_DECK)


@settings(max_examples=20, deadline=None)
@given(variant=variants, deck=decks, data=st.data())
def test_legal_moves_are_exactly_those_that_apply(
    variant: str, deck: list[str], data: st.DataObject
) -> None:
    """Every move in legal_moves applies; every other candidate is refused with IllegalMove."""
    states, _ = _play(data, variant, deck, 40)
    for state in states:
        legal = legal_moves(state)
        for move in _candidates(state) | legal:
            if move in legal:
                after = apply_move(state, move)
                assert after.moves_made == state.moves_made + 1
            else:
                try:
                    apply_move(state, move)
                except IllegalMove:
                    continue
                raise AssertionError(f"{move} applied but is not in legal_moves")


@SETTINGS
@given(variant=variants, deck=decks, data=st.data())
def test_fold_rebuilds_every_state(variant: str, deck: list[str], data: st.DataObject) -> None:
    """Folding the recorded events (or any prefix) gives the live state exactly."""
    states, events = _play(data, variant, deck, 200)
    assert fold(events) == states[-1]
    k = data.draw(st.integers(1, len(events)), label="prefix")
    assert fold(events[:k]) == states[k - 1]


@SETTINGS
@given(variant=variants, deck=decks, data=st.data(), resigns=st.booleans())
def test_public_fold_equals_public_view(
    variant: str, deck: list[str], data: st.DataObject, resigns: bool
) -> None:
    """public_fold(map(public_event, events)) == public_view(fold(events)), for every prefix
    sampled, with the legal moves computable from the public view alone."""
    states, events = _play(data, variant, deck, 200)
    if resigns and not states[-1].won:
        events.append(resign_event(at=10_000))
    public = [public_event(e) for e in events]
    assert all("deck" not in e and "seed" not in e for e in public)
    assert public_fold(public) == public_view(fold(events))
    k = data.draw(st.integers(1, len(states)), label="prefix")
    view = public_fold(public[:k])
    assert view == public_view(states[k - 1])
    assert public_legal_moves(view) == legal_moves(states[k - 1])
    assert view.over == is_over(states[k - 1])


@SETTINGS
@given(variant=variants, deck=decks, data=st.data())
def test_canonical_moves_pass_the_friendly_parser(
    variant: str, deck: list[str], data: st.DataObject
) -> None:
    """Every legal canonical move typed as is resolves to itself; boards fit 80 columns."""
    states, _ = _play(data, variant, deck, 60)
    for state in states[:: max(1, len(states) // 8)]:
        view = public_view(state)
        for move in legal_moves(state):
            assert parse_move(move, state) == move
            assert parse_move(move.upper(), view) == move
        text = render_board(view, color=False)
        assert max(len(line) for line in text.splitlines()) <= 80


@settings(max_examples=50, deadline=None)
@given(variant=variants, seed=st.one_of(st.integers(), st.text(max_size=20)))
def test_deals_are_reproducible(variant: str, seed: int | str) -> None:
    """The same variant and seed give the same full deck; an int equals its decimal text."""
    deck = deal_deck(variant, seed)
    assert deal_deck(variant, seed) == deck
    assert sorted(deck) == sorted(FULL_DECK)
    if isinstance(seed, int):
        assert deal_deck(variant, str(seed)) == deck
    assert new_game(variant, seed=seed) == new_game(variant, deck=deck)
