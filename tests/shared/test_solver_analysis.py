"""A game analysed (shared/solver/analysis.py): every "won" verdict's line replays to a win
through the rules, a move that kept a won position won leads to a won position, "lost" agrees
with the solver, and what the budget does not settle is "unknown"."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import GameState, apply_move, legal_moves, new_game, solve
from shared.solver import Status
from shared.solver.analysis import (
    SOLVER_VERSION,
    GameAnalysis,
    Verdict,
    analyse,
    positions_of,
    winning_line,
)

# Budgets that settle most positions of these games in a few hundredths of a second.
BUDGET = {"quadrennial": 60_000, "swiss": 8_000}


def random_game(variant: str, seed: int, rng: random.Random, length: int) -> list[str]:
    """Random legal moves from the deal of `seed`, a card to its foundation taken more often
    than not when one can go (so games get somewhere, and are often lost from a won deal)."""
    state = new_game(variant, seed=seed)
    moves: list[str] = []
    while len(moves) < length:
        legal = sorted(legal_moves(state))
        if not legal:
            break
        up = [m for m in legal if m.endswith("f") and not m.startswith("f")]
        move = rng.choice(up) if up and rng.random() < 0.7 else rng.choice(legal)
        moves.append(move)
        state = apply_move(state, move)
    return moves


def wins(state: GameState, line: tuple[str, ...]) -> bool:
    for move in line:
        state = apply_move(state, move)
    return state.won


games = st.tuples(
    st.sampled_from(["quadrennial", "swiss"]),
    st.integers(1, 10_000),
    st.integers(0, 2**32),
    st.integers(0, 160),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_every_verdict_holds_through_the_rules(game: tuple[str, int, int, int]) -> None:
    variant, seed, draw, length = game
    moves = random_game(variant, seed, random.Random(draw), length)
    start = new_game(variant, seed=seed)
    analysis = analyse(start, moves, max_nodes=BUDGET[variant])
    positions = positions_of(start, moves)
    assert analysis.positions == len(positions)
    assert analysis.nodes <= analysis.max_nodes
    for k, state in enumerate(positions):
        line = winning_line(analysis, positions, k)
        if analysis.verdict(k) is Verdict.WON:
            assert line is not None, k
            assert wins(state, line), k
        else:
            assert line is None
    for review in analysis.reviews():
        if review.before is Verdict.WON and review.after is Verdict.WON:
            line = winning_line(analysis, positions, review.number)
            assert line is not None
            assert wins(positions[review.number], line)
        assert review.threw_away == (review.number == analysis.losing_move)
    if analysis.lost_from < analysis.positions:
        # A fresh search, twice the analysis's own: never a win where it said lost.
        first = positions[analysis.lost_from]
        assert solve(first, max_nodes=2 * BUDGET[variant]).status != Status.WON


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 10_000), st.integers(0, 2**32), st.integers(0, 160))
def test_a_quadrennial_deal_lost_or_won_from_the_start_says_so(
    seed: int, draw: int, length: int
) -> None:
    """The deal's verdict is the solver's verdict on it, wherever the solver settles it."""
    start = new_game("quadrennial", seed=seed)
    deal = solve(start, max_nodes=BUDGET["quadrennial"] // 4).status
    moves = random_game("quadrennial", seed, random.Random(draw), length)
    analysis = analyse(start, moves, max_nodes=BUDGET["quadrennial"])
    expected = {Status.WON: Verdict.WON, Status.UNWINNABLE: Verdict.LOST}.get(deal)
    if expected is not None:
        assert analysis.deal is expected


def test_deals_the_solver_proves_lost_are_lost_at_every_position() -> None:
    """Of the first 300 Quadrennial deals (docs/winnability.md: 7 % of 10,000 are lost), those
    the solver proves lost within 2,000 positions are analysed as lost throughout."""
    lost = [
        seed
        for seed in range(1, 301)
        if solve(new_game("quadrennial", seed=seed), max_nodes=2_000).status == Status.UNWINNABLE
    ]
    assert len(lost) >= 5
    for seed in lost:
        moves = random_game("quadrennial", seed, random.Random(seed), 80)
        analysis = analyse(new_game("quadrennial", seed=seed), moves, max_nodes=10_000)
        assert analysis.lost_from == 0
        assert {r.after for r in analysis.reviews()} <= {Verdict.LOST}
        assert analysis.losing_move is None
        assert analysis.searches <= 2  # the last position, then the first settled everything


def test_a_won_game_needs_no_search() -> None:
    seed = next(
        s for s in range(1, 50) if solve(new_game("quadrennial", seed=s), max_nodes=10_000).moves
    )
    start = new_game("quadrennial", seed=seed)
    line = solve(start, max_nodes=10_000).moves
    analysis = analyse(start, line, max_nodes=0)
    assert analysis.won_until == len(line)
    assert analysis.searches == 0
    assert analysis.deal is Verdict.WON
    assert analysis.losing_move is None
    assert analysis.version == SOLVER_VERSION


def test_the_move_that_lost_a_won_game_is_found() -> None:
    """A won Quadrennial deal, its winning line followed and then left for a move that loses:
    that move is the losing one, and the line from before it is the solver's, replayed."""
    for seed in range(1, 200):
        start = new_game("quadrennial", seed=seed)
        line = solve(start, max_nodes=20_000).moves
        for k in range(len(line) - 1, 0, -1):
            before = positions_of(start, line[:k])[-1]
            for move in sorted(legal_moves(before) - {line[k]}):
                after = apply_move(before, move)
                if solve(after, max_nodes=20_000).status == Status.UNWINNABLE:
                    moves = [*line[:k], move]
                    analysis = analyse(start, moves, max_nodes=100_000)
                    assert analysis.losing_move == k + 1
                    assert analysis.won_until == k
                    assert analysis.lost_from == k + 1
                    positions = positions_of(start, moves)
                    won_line = winning_line(analysis, positions, k)
                    assert won_line is not None
                    assert wins(before, won_line)
                    assert winning_line(analysis, positions, 0) is not None
                    return
    pytest.fail("no won deal with a losing move in seeds 1..199")


def test_detours_are_cut_from_the_line() -> None:
    """A Swiss game that moves a card there and back, then on along a winning line: the line
    from the deal skips the detour, since the position it came back to is the same."""
    for seed in range(1, 100):
        start = new_game("swiss", seed=seed)
        there_back = _there_and_back(start)
        if there_back is None:
            continue
        solution = solve(start, max_nodes=5_000)
        if solution.status != Status.WON:
            continue
        moves = [*there_back, *solution.moves[:3]]
        analysis = GameAnalysis(
            tuple(moves), len(moves), len(moves) + 1, solution.moves[3:], 0, 0, 0
        )
        positions = positions_of(start, moves)
        assert positions[-1].won or analysis.line
        line = winning_line(analysis, positions, 0)
        assert line == solution.moves
        assert wins(start, line)
        assert winning_line(analysis, positions, 1) == (there_back[1], *solution.moves)
        return
    pytest.fail("no won Swiss deal with a move that can be undone")


def _there_and_back(start: GameState) -> list[str] | None:
    """Two moves that lead back to `start` (a card moved to a pile and back), if any."""
    for move in sorted(legal_moves(start)):
        after = apply_move(start, move)
        for back in sorted(legal_moves(after)):
            again = apply_move(after, back)
            if (again.tableau, again.waste, again.foundations, again.stock) == (
                start.tableau,
                start.waste,
                start.foundations,
                start.stock,
            ):
                return [move, back]
    return None


def test_the_budget_leaves_unknown_never_a_guess() -> None:
    """With no budget nothing is settled but a won end: every other position is unknown."""
    start = new_game("swiss", seed=3)
    moves = random_game("swiss", 3, random.Random(3), 60)
    analysis = analyse(start, moves, max_nodes=0)
    assert analysis.searches == 0
    assert {r.after for r in analysis.reviews()} == {Verdict.UNKNOWN}
    assert analysis.deal is Verdict.UNKNOWN
    assert analysis.settled == 0


def test_an_analysis_keeps_won_before_lost() -> None:
    with pytest.raises(ValueError, match="before"):
        GameAnalysis(("d",), 1, 1, (), 0, 0, 0)
    with pytest.raises(ValueError, match="max_nodes"):
        analyse(new_game("swiss", seed=1), [], max_nodes=-1)
