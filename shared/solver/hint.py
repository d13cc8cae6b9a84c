"""Hints that always help: in any live position a move, the solver's when it proves a line.

`hint` runs the solver under a budget; when it finds no winning line (the budget ran out, or
the position is proved lost) the move comes from `good_move`, a heuristic the player is told
about ("no winning line proved; a good move: t3t9"), so a hint never comes back empty while a
move is legal.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.game import legal_moves
from shared.solver.search import solve
from shared.solver.swiss import Swiss
from shared.solver.verdict import Solution, Status
from shared.state import GameState

# Quadrennial's heuristic order: the waste's card up, then a reserve card up, then deal, then
# redeal (the solver's own first line is the greedy player's in this order).
_QUAD_ORDER = {"wf": 0, "d": 2, "redeal": 3}


@dataclass(frozen=True, slots=True)
class Hint:
    """A hint: the move to suggest and the solver's answer it comes from."""

    move: str | None  # None only when no move is legal (the game is over)
    solution: Solution

    @property
    def heuristic(self) -> bool:
        """True when the move is good_move's, not the first move of a proved winning line."""
        return self.move is not None and self.solution.next_move != self.move


def good_move(state: GameState) -> str | None:
    """A legal move by a fixed heuristic, None when there is none. Swiss: the solver's move
    order (a card to its foundation, a move that uncovers a card or empties a pile, the waste
    onto a pile, deal, a run moved between piles, a foundation card back down), and within a
    kind the move whose position the best-first search scores best (most foundation cards,
    fewest buried cards, shallowest waste). Quadrennial: the waste's card up, a reserve card
    up, deal, redeal."""
    legal = legal_moves(state)
    if not legal:
        return None
    if state.variant == "swiss":
        search = Swiss(state, frozenset())
        ranked = [
            (rank, search.score(child), move)
            for rank, move, child in search.children(search.node(state))
        ]
        return min(ranked)[2]
    return min(legal, key=lambda move: (_QUAD_ORDER.get(move, 1), move))


def hint(state: GameState, *, max_nodes: int) -> Hint:
    """The solver's next move within `max_nodes`, or good_move's when it proves no line."""
    solution = solve(state, max_nodes=max_nodes)
    if solution.status == Status.WON and solution.next_move is not None:
        return Hint(solution.next_move, solution)
    return Hint(good_move(state), solution)
