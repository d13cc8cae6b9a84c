"""The engine's fast paths against their references, on arbitrary positions (strategies.py) and
on positions of random play: they must give the same answers exactly, or the rules changed."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import (
    IllegalMove,
    PublicView,
    apply_move,
    apply_move_revealing,
    deal_deck,
    fold,
    is_over,
    legal_moves,
    move_event,
    new_game,
    public_event,
    public_fold,
    public_fold_event,
    public_view,
    resign_event,
    start_event,
)
from shared.cards import FULL_DECK
from shared.state import GameState
from shared.swiss import movable_cards
from tests.shared.reference import swiss_legal_moves
from tests.shared.strategies import known_positions, positions, swiss_positions

SETTINGS = settings(max_examples=300, deadline=None)


def _candidates(state: GameState) -> set[str]:
    """Every well-formed move that could name something in any position of either variant."""
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
@given(state=swiss_positions())
def test_swiss_legal_moves_equal_the_reference(state: GameState) -> None:
    """RULES.md, Swiss: the indexed generation finds exactly what trying every pile finds."""
    assert legal_moves(state) == swiss_legal_moves(state)


@settings(max_examples=100, deadline=None)
@given(state=known_positions)
def test_legal_moves_are_exactly_those_that_apply_anywhere(state: GameState) -> None:
    """In any position, every legal move applies and every other candidate is refused."""
    legal = legal_moves(state)
    for move in _candidates(state) | legal:
        if move in legal:
            assert apply_move(state, move).moves_made == state.moves_made + 1
        else:
            try:
                apply_move(state, move)
            except IllegalMove:
                continue
            raise AssertionError(f"{move} applied but is not in legal_moves")


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**6), max_size=300))
def test_swiss_legal_moves_equal_the_reference_in_play(seed: int, picks: list[int]) -> None:
    """The same along random games from seeded deals, where the stock runs out."""
    state = new_game("swiss", seed=seed)
    for pick in picks:
        legal = legal_moves(state)
        assert legal == swiss_legal_moves(state)
        if not legal:
            break
        state = apply_move(state, sorted(legal)[pick % len(legal)])


def test_strategies_hold_every_card_once() -> None:
    """The position strategies are valid: 52 cards, each once (a hidden stock counts as many)."""

    @settings(max_examples=50, deadline=None)
    @given(state=positions)
    def check(state: GameState) -> None:
        cards = [c for p in state.tableau for c in p] + [c for c in state.reserve if c]
        cards += list(state.waste) + [c for f in state.foundations for c in f]
        hidden = [c for c in state.stock if c is None]
        cards += [c for c in state.stock if c is not None]
        assert len(set(cards)) == len(cards)
        assert set(cards) <= set(FULL_DECK)
        assert len(cards) + len(hidden) == 52

    check()


@SETTINGS
@given(state=positions)
def test_is_over_skips_move_generation_only_while_the_stock_has_cards(state: GameState) -> None:
    """is_over generates no moves while dealing is legal; it must agree with the full list."""
    assert is_over(state) == (state.resigned or state.won or not legal_moves(state))


def test_game_state_keeps_the_frozen_dataclass_contract() -> None:
    """GameState's own __init__ (faster than the generated one) sets every field, keeps the
    default, and the value stays frozen, comparable, hashable and replaceable."""
    state = new_game("swiss", seed=7)
    args = [getattr(state, f.name) for f in dataclasses.fields(GameState)]
    by_position = GameState(*args[:-1])
    by_name = GameState(**{f.name: getattr(state, f.name) for f in dataclasses.fields(GameState)})
    assert by_position == by_name == state
    assert hash(by_position) == hash(state)
    assert by_position.resigned is False
    assert dataclasses.replace(state, resigned=True).resigned is True
    assert repr(by_name) == repr(state)
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.moves_made = 3  # type: ignore[misc]
    assert not hasattr(state, "__dict__")
    assert pickle.loads(pickle.dumps(state)) == state


@settings(max_examples=30, deadline=None)
@given(
    variant=st.sampled_from(["swiss", "quadrennial"]),
    seed=st.integers(0, 10**6),
    picks=st.lists(st.integers(0, 10**6), max_size=250),
    resigns=st.booleans(),
)
def test_public_fold_equals_folding_event_by_event(
    variant: str, seed: int, picks: list[int], resigns: bool
) -> None:
    """public_fold folds hidden states and builds one view at the end; public_fold_event
    builds a view per event: every prefix gives the same view either way."""
    state = new_game(variant, seed=seed)
    events = [start_event(variant, deal_deck(variant, seed), at=0)]
    for i, pick in enumerate(picks):
        legal = sorted(legal_moves(state))
        if not legal:
            break
        move = legal[pick % len(legal)]
        events.append(move_event(state, move, at=i + 1))
        state = apply_move(state, move)
    if resigns and not state.won:
        events.append(resign_event(at=10**6))
    public = [public_event(e) for e in events]
    view = None
    for k, event in enumerate(public, start=1):
        view = public_fold_event(view, event)
        assert public_fold(public[:k]) == view
    assert view == public_view(fold(events))


def test_public_view_keeps_the_frozen_dataclass_contract() -> None:
    """PublicView's own __init__ sets every field, by position or by name, and stays frozen."""
    view = public_view(new_game("quadrennial", seed=3))
    values = {f.name: getattr(view, f.name) for f in dataclasses.fields(PublicView)}
    assert PublicView(**values) == PublicView(*values.values()) == view
    assert hash(PublicView(**values)) == hash(view)
    assert dataclasses.replace(view, over=True).over is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.won = True  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(view)) == view


def _afresh(state: GameState) -> GameState:
    """The same position built again from its fields: nothing derived is kept with it."""
    return GameState(*(getattr(state, f.name) for f in dataclasses.fields(GameState)))


def _outcome(state: GameState, move: str) -> tuple[GameState, list[str]] | str:
    """What applying the move gives: the next position and the cards it turned up, or why not."""
    try:
        return apply_move_revealing(state, move)
    except IllegalMove as exc:
        return exc.reason


@SETTINGS
@given(state=swiss_positions(hidden=False))
def test_swiss_movable_cards_kept_and_updated_equal_those_worked_out_afresh(
    state: GameState,
) -> None:
    """RULES.md, Swiss: legal_moves keeps the position's movable cards and apply hands the next
    position an updated copy; that copy must be what working them out afresh gives, and every
    move, legal or not, must have the same outcome with them as without them."""
    legal = legal_moves(state)
    movable_cards(state)  # kept by legal_moves too, unless the game is over
    for move in sorted(_candidates(state) | legal):
        outcome = _outcome(state, move)
        assert outcome == _outcome(_afresh(state), move)
        assert isinstance(outcome, str) != (move in legal)
        if not isinstance(outcome, str):
            after = outcome[0]
            assert after._movable is not None
            assert after._movable == movable_cards(_afresh(after))
            assert legal_moves(after) == swiss_legal_moves(after)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**6), max_size=300))
def test_swiss_movable_cards_stay_exact_along_random_games(seed: int, picks: list[int]) -> None:
    """Along random games from seeded deals every position's movable cards come from the one
    before; they must stay what each position's own piles give."""
    state = new_game("swiss", seed=seed)
    for pick in picks:
        legal = sorted(legal_moves(state))
        if not legal:
            break
        assert state._movable == movable_cards(_afresh(state))
        state = apply_move(state, legal[pick % len(legal)])


def test_movable_cards_are_no_part_of_the_value() -> None:
    """The movable cards kept with a position are derived: equality, hashing and repr ignore
    them, and a copy, an unpickled or a replaced position starts without them."""
    state = new_game("swiss", seed=11)
    legal_moves(state)
    assert state._movable is not None
    plain = _afresh(state)
    assert plain._movable is None
    assert plain == state
    assert hash(plain) == hash(state)
    assert repr(plain) == repr(state)
    for other in (
        pickle.loads(pickle.dumps(state)),
        copy.copy(state),
        copy.deepcopy(state),
        dataclasses.replace(state, moves_made=1),
    ):
        assert other._movable is None
        assert legal_moves(other) == legal_moves(state)
