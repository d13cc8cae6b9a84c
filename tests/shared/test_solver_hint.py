"""Hints that always help (shared/solver/hint.py): a legal move in every live position, the
solver's own when it proves a line, and good_move's, labelled heuristic, otherwise."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shared
from shared import apply_move, is_over, legal_moves, new_game, solve
from shared.solver import Hint, Solution, Status, good_move, hint
from tests.shared.positions import swiss

HINT_NODES = 100  # small: the property walks whole games, a hint per position
MAX_MOVES = 150  # random Swiss play can shuffle runs for ever: then the walk stops here


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(["swiss", "quadrennial"]), seed=st.integers(1, 10**9))
def test_hint_is_a_legal_move_in_every_live_position_of_a_random_game(
    variant: str, seed: int
) -> None:
    """RULES.md, both variants: a game is over when won, resigned or out of legal moves;
    before that, every position gets a move, and it is legal."""
    rng = random.Random(seed)
    state = new_game(variant, seed=seed)
    while not is_over(state) and state.moves_made < MAX_MOVES:
        answer = hint(state, max_nodes=HINT_NODES)
        legal = legal_moves(state)
        assert answer.move in legal, (state, answer)
        assert answer.heuristic == (answer.solution.status != Status.WON)
        state = apply_move(state, rng.choice(sorted(legal)))
    if is_over(state):
        assert hint(state, max_nodes=HINT_NODES).move is None


def test_a_proved_line_gives_its_first_move() -> None:
    state = new_game("quadrennial", seed=1)
    answer = hint(state, max_nodes=50_000)
    solution = solve(state, max_nodes=50_000)
    assert answer == Hint(solution.next_move, solution)
    assert not answer.heuristic


def test_no_line_within_the_budget_gives_the_heuristic_move() -> None:
    """Swiss seed 3 is not solved in 50 nodes: the hint is good_move's, and says so."""
    state = new_game("swiss", seed=3)
    answer = hint(state, max_nodes=50)
    assert answer.solution.status == Status.UNKNOWN
    assert answer.move == good_move(state)
    assert answer.heuristic


def test_a_lost_position_still_gets_a_move() -> None:
    """RULES.md, Swiss: the Three of spades waits for a Two that lies under it in the waste;
    the Ace of hearts on top can still go to an empty pile, so a move is legal."""
    waste = [c for c in shared.FULL_DECK if c not in ("3S", "AH")] + ["3S", "AH"]
    state = swiss(waste=waste)
    answer = hint(state, max_nodes=100)
    assert answer.solution == Solution(Status.UNWINNABLE, (), 0, 100)
    assert answer.move == "wt1"
    assert answer.heuristic


def test_good_move_prefers_a_foundation_card() -> None:
    """RULES.md, Swiss, Foundations: a Two starts a foundation; the heuristic plays it first."""
    state = swiss([["KH", "2S"], ["9D"]], stock=["5C"])
    assert good_move(state) == "t1f"
    won = swiss(found={s: 13 for s in "CDHS"})
    assert good_move(won) is None
