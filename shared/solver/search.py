"""`solve`: the one entry to both variants' searches."""

from __future__ import annotations

from shared.solver.quadrennial import solve_quadrennial
from shared.solver.swiss import Swiss
from shared.solver.verdict import ALL_PRUNINGS, Pruning, Solution, Status
from shared.state import GameState


def solve(
    state: GameState,
    *,
    max_nodes: int,
    prunings: frozenset[Pruning] = ALL_PRUNINGS,
    streamline: bool = True,
) -> Solution:
    """Search `state` for a win, expanding at most `max_nodes` positions.

    `prunings` and `streamline` exist so tests can compare the search with a pruning or the
    Swiss streamliner off; callers keep the defaults. Raises ValueError for a negative budget
    or a position whose stock is unknown (a public view's), since the answer would depend on
    cards the solver cannot see.
    """
    if max_nodes < 0:
        raise ValueError(f"max_nodes must be >= 0, not {max_nodes}")
    if None in state.stock or None in state.waste:
        raise ValueError("the solver needs the whole position: this stock is face down")
    if state.won:
        return Solution(Status.WON, (), 0, max_nodes)
    if state.variant == "swiss":
        return Swiss(state, prunings).search(max_nodes, streamline=streamline)
    return solve_quadrennial(state, max_nodes, prunings)
