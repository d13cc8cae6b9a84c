"""RULES.md, "Quadrennial", searched depth first: foundation plays before deals, so the first
line tried is the greedy player's and every later one differs by holding a card back. Every
Quadrennial move gains a foundation card, deals or uses up a redeal, so play never returns to a
position; the prunings (WASTE_TO_FOUNDATION, FINAL_PASS, DEAD_WASTE, RESERVE_SYMMETRY) are
argued in shared/solver/__init__.py."""

from __future__ import annotations

import abc
from collections.abc import Hashable, Iterator

from shared.cards import RANK_OF, SUIT_INDEX
from shared.game import apply_move, legal_moves
from shared.solver.verdict import Pruning, Solution, Status
from shared.state import GameState


def solve_quadrennial(state: GameState, max_nodes: int, prunings: frozenset[Pruning]) -> Solution:
    """The depth-first search of a Quadrennial position (not won, stock known)."""
    rules = _Quadrennial(prunings)
    if rules.dead(state):
        return Solution(Status.UNWINNABLE, (), 0, max_nodes)
    return _depth_first(state, rules, max_nodes)


def _depth_first(root: GameState, rules: _Rules, max_nodes: int) -> Solution:
    """Depth first with every position generated remembered, so none is expanded twice."""
    seen: set[Hashable] = {rules.key(root)}
    if max_nodes == 0:
        return Solution(Status.UNKNOWN, (), 0, max_nodes)
    nodes = 1
    path: list[str] = []
    stack: list[Iterator[tuple[str, GameState]]] = [rules.children(root)]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            if path:
                path.pop()
            continue
        move, child = step
        if child.won:
            return Solution(Status.WON, (*path, move), nodes, max_nodes)
        key = rules.key(child)
        if key in seen:
            continue
        seen.add(key)
        if rules.dead(child):
            continue
        if nodes >= max_nodes:
            return Solution(Status.UNKNOWN, (), nodes, max_nodes)
        nodes += 1
        path.append(move)
        stack.append(rules.children(child))
    return Solution(Status.UNWINNABLE, (), nodes, max_nodes)


class _Rules(abc.ABC):
    """What the depth-first search needs of a variant: a canonical key, the moves of a
    position with the position each leads to (most promising first), and a dead-end test."""

    def __init__(self, prunings: frozenset[Pruning]) -> None:
        self.prunings = prunings

    @abc.abstractmethod
    def key(self, st: GameState) -> Hashable:
        """Equal for positions the search need not tell apart (symmetries folded in)."""

    @abc.abstractmethod
    def children(self, st: GameState) -> Iterator[tuple[str, GameState]]:
        """Each move with the position it leads to, most promising first."""

    def dead(self, st: GameState) -> bool:
        return False


class _Quadrennial(_Rules):
    """RULES.md, "Quadrennial": foundation plays first (waste, then reserve), then deal, then
    redeal; forced plays and dead wastes as the prunings allow."""

    def key(self, st: GameState) -> Hashable:
        reserve: tuple[str, ...] = tuple(c or "" for c in st.reserve)
        if Pruning.RESERVE_SYMMETRY in self.prunings:
            reserve = tuple(sorted(reserve))
        f = st.foundations
        return (
            reserve,
            st.stock,
            st.waste,
            st.redeals_left,
            len(f[0]),
            len(f[1]),
            len(f[2]),
            len(f[3]),
        )

    def children(self, st: GameState) -> Iterator[tuple[str, GameState]]:
        for move in self.moves(st):
            yield move, apply_move(st, move)

    def moves(self, st: GameState) -> list[str]:
        legal = legal_moves(st)
        if "wf" in legal and Pruning.WASTE_TO_FOUNDATION in self.prunings:
            return ["wf"]
        plays = sorted(mv for mv in legal if mv.endswith("f"))
        final = not st.stock and (st.redeals_left == 0 or not st.waste)
        if plays and final and Pruning.FINAL_PASS in self.prunings:
            return plays[:1]
        rest = [mv for mv in ("d", "redeal") if mv in legal]
        return plays + rest

    def dead(self, st: GameState) -> bool:
        if st.redeals_left or Pruning.DEAD_WASTE not in self.prunings:
            return False
        lowest = [14, 14, 14, 14]
        for card in st.waste:
            s, r = SUIT_INDEX[card], RANK_OF[card]
            if r > lowest[s]:
                return True
            lowest[s] = r
        return False
