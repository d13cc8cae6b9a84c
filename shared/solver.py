"""An exact solver for both variants: is this position winnable, and how?

`solve(state, max_nodes=N)` searches from `state` with a transposition table of canonical
position keys and a few prunings that never lose a win. It answers "won" with a winning line
(canonical moves that replay through `shared.apply_move`), "unwinnable" only once every
position reachable (less those a pruning proves redundant) has been searched, and "unknown"
when the budget of `max_nodes` expanded positions runs out first. Pure: no I/O, no clock; the
budget counts positions, not time, so an answer is the same on every machine.

Quadrennial is searched depth first, foundation plays before deals, so its first line is the
greedy player's and every later one differs by holding a card back. Swiss is searched best
first (`_Swiss.score`: foundation cards, cards lying on cards that do not take them, the
waste's depth): its tableau moves are reversible and a depth-first search spends any budget
shuffling piles at the end of the stock. Both are complete: "unwinnable" means every position
generated was expanded.

The prunings, each a `Pruning` so a test can turn it off and compare (RULES.md sections cited):

- `PILE_SYMMETRY` (Swiss). "Tableau": the nine piles follow one rule and an empty pile takes
  only an Ace, whichever pile it is; nothing in the rules tells t1 from t9. So two positions
  whose piles are a permutation of each other win or lose together: the key sorts the piles,
  only the first empty pile is tried as a destination, and a run that is a whole pile is never
  moved to an empty pile (the result is the same position with two piles swapped).
- `RESERVE_SYMMETRY` (Quadrennial). "Eight reserve piles ... nothing is ever built on them";
  a reserve card only ever goes to its foundation. The slots differ only in the order the
  standing refill rule fills empty ones, and whichever slots are empty, the cards that arrive
  are the same (the stock's top cards, one per empty slot). So the key holds the reserve as a
  sorted multiset.
- `WASTE_TO_FOUNDATION` (Quadrennial). "Cards move one at a time and only to the foundations"
  and "Foundation cards never move again": a playable waste top W is the only move tried. The
  waste is the only place W can leave from (after a redeal, the stock and a refill), and
  only onto its foundation; W on the foundation blocks nothing (the next card of its suit needs
  W there first), taking it off the waste uncovers the card below it, and playing it triggers no
  refill (a reserve pile is empty only while the stock is). So any line that wins from the
  position wins with W played first, that line's own play of W dropped, each later refill that
  would have taken W taking the following card instead (a card held on a reserve pile is
  playable whenever a waste or stock card would be). Every Quadrennial move gains a foundation
  card, deals or uses up a redeal, so play never returns to a position, and forcing a move that
  keeps a win, position by position, keeps every win.
- `FINAL_PASS` (Quadrennial). Once the stock is empty and no redeal is possible (none left, or
  nothing in the waste to turn over: "Redeal" needs a non-empty waste), no card ever arrives on
  a reserve pile again (the standing refill rule takes only from the stock) and the remaining
  moves are foundation plays, which never disable each other. So any playable reserve card is
  played at once, as the only move tried.
- `DEAD_WASTE` (Quadrennial). With no redeal left ("Two redeals are allowed, three passes in
  all"), a waste card leaves only as the waste's top, to its foundation, which "build[s] up by
  suit from an Ace". A card lying above a lower card of its own suit can then never leave, nor
  can the lower card: the position is lost, and is not searched further.
"""

from __future__ import annotations

import abc
import heapq
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from enum import Enum, StrEnum

from shared.cards import FULL_DECK, IS_RED, RANK_OF, SUIT_INDEX, SUITS
from shared.game import apply_move, legal_moves
from shared.state import GameState


class Status(StrEnum):
    """What the search established about a position."""

    WON = "won"  # a winning line was found: Solution.moves
    UNWINNABLE = "unwinnable"  # proved: nothing reachable is a win
    UNKNOWN = "unknown"  # the budget ran out first


class Pruning(Enum):
    """The safe prunings (see the module docstring for why each never loses a win)."""

    PILE_SYMMETRY = "pile_symmetry"
    RESERVE_SYMMETRY = "reserve_symmetry"
    WASTE_TO_FOUNDATION = "waste_to_foundation"
    FINAL_PASS = "final_pass"
    DEAD_WASTE = "dead_waste"


ALL_PRUNINGS: frozenset[Pruning] = frozenset(Pruning)
# _Swiss.score's weights: of those tried on Swiss seeds 1..60 at 5,000 nodes (foundation cards
# 5-8, breaks 2-5, waste 0.5-2, and the cover of the next foundation cards), none won more than
# one deal more than these.
W_FOUND, W_BREAK, W_WASTE = 5.0, 3.0, 1.0


@dataclass(frozen=True, slots=True)
class Solution:
    """The solver's answer: status, the winning line when won, and the positions searched."""

    status: Status
    moves: tuple[str, ...]  # canonical moves from the position to a win; () unless won
    nodes: int  # positions expanded (their moves generated)
    max_nodes: int  # the budget it ran under

    @property
    def next_move(self) -> str | None:
        """The first move of the winning line: a hint. None unless won with moves left."""
        return self.moves[0] if self.moves else None


def solve(
    state: GameState, *, max_nodes: int, prunings: frozenset[Pruning] = ALL_PRUNINGS
) -> Solution:
    """Search `state` for a win, expanding at most `max_nodes` positions.

    `prunings` exists so tests can compare the search with a pruning off; callers keep the
    default. Raises ValueError for a negative budget or a position whose stock is unknown (a
    public view's), since the answer would depend on cards the solver cannot see.
    """
    if max_nodes < 0:
        raise ValueError(f"max_nodes must be >= 0, not {max_nodes}")
    if None in state.stock or None in state.waste:
        raise ValueError("the solver needs the whole position: this stock is face down")
    if state.won:
        return Solution(Status.WON, (), 0, max_nodes)
    if state.variant == "swiss":
        return _Swiss(state, prunings).search(max_nodes)
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


def _may_go_on(b: str, a: str) -> bool:
    """RULES.md, Swiss, Tableau: b on a when colours differ and b is one rank below a
    cyclically, or a is a King and b an Ace."""
    ra, rb = RANK_OF[a], RANK_OF[b]
    return IS_RED[a] != IS_RED[b] and (rb == (ra - 2) % 13 + 1 or (ra == 13 and rb == 1))


# _TAKES[a]: the cards that may be placed on a; _TAKES[None]: on an empty pile (the Aces).
_TAKES: dict[str | None, frozenset[str]] = {
    a: frozenset(b for b in FULL_DECK if _may_go_on(b, a)) for a in FULL_DECK
}
_TAKES[None] = frozenset(c for c in FULL_DECK if RANK_OF[c] == 1)
# _SWISS_NEXT[s][k]: the card a Swiss foundation of suit s holding k cards takes ("" when full).
_SWISS_NEXT = tuple((*tuple(r + s for r in "23456789TJQKA"), "") for s in SUITS)
_TT = [[[f"t{i + 1}t{j + 1}"] + [f"t{i + 1}t{j + 1}x{n}" for n in range(2, 53)] for j in range(9)]
       for i in range(9)]  # fmt: skip
_WT = [f"wt{j + 1}" for j in range(9)]
_TF = [f"t{i + 1}f" for i in range(9)]
_FT = [[f"f{s.lower()}t{j + 1}" for j in range(9)] for s in SUITS]

Tableau = tuple[tuple[str, ...], ...]


def _put(piles: Tableau, j: int, pile: tuple[str, ...]) -> Tableau:
    return (*piles[:j], pile, *piles[j + 1 :])


# A Swiss position inside the search: tableau, cards left in the stock (the root's stock cut
# to that length, since Swiss deals from one pass only), waste, foundations, the number of
# foundation cards, and the number of tableau cards lying on a card that does not take them.
Node = tuple[Tableau, int, tuple[str, ...], Tableau, int, int]


class _Swiss:
    """RULES.md, "Swiss", searched best first. Positions are plain tuples and their moves are
    generated here, not through legal_moves and apply_move (a test checks they agree): the
    search spends most of its time here, and a GameState per position costs twice as much.
    Move order, for ties: foundation moves, moves that uncover a card or empty a pile, waste
    to tableau, deal, shuffles between piles, foundation cards back to the tableau."""

    def __init__(self, root: GameState, prunings: frozenset[Pruning]) -> None:
        self.root = root
        self.stock: tuple[str, ...] = tuple(c for c in root.stock if c is not None)
        self.symmetry = Pruning.PILE_SYMMETRY in prunings

    def node(self, st: GameState) -> Node:
        """The search's form of a position of this search's deal."""
        breaks = sum(
            1 for p in st.tableau for k in range(1, len(p)) if p[k] not in _TAKES[p[k - 1]]
        )
        fnd = st.foundations
        return (st.tableau, len(st.stock), st.waste, fnd, st.foundation_count, breaks)

    def state(self, node: Node, moves_made: int = 0) -> GameState:
        """The GameState of a node (for tests: the search itself never builds one)."""
        tab, stock, waste, fnd, _, _ = node
        return GameState("swiss", tab, (), self.stock[:stock], waste, fnd, 0, moves_made)

    def key(self, node: Node) -> Hashable:
        tab, stock, waste, f = node[0], node[1], node[2], node[3]
        if self.symmetry:
            tab = tuple(sorted(tab))
        return (tab, stock, waste, len(f[0]), len(f[1]), len(f[2]), len(f[3]))

    @staticmethod
    def score(node: Node) -> float:
        """How far from a win a position looks (lower is expanded first): foundation cards
        gained, cards buried under a card that does not take them, the waste's depth."""
        return -W_FOUND * node[4] + W_BREAK * node[5] + W_WASTE * len(node[2])

    def search(self, max_nodes: int) -> Solution:
        """The lowest-scoring position generated is expanded next; among equals, the children
        of the latest expansion, later moves in move order first (which won more deals)."""
        if self.root.resigned:
            return Solution(Status.UNWINNABLE, (), 0, max_nodes)
        root = self.node(self.root)
        seen: set[Hashable] = {self.key(root)}
        # Per node: the node, the node it came from and the move that led here.
        tree: list[tuple[Node, int, str]] = [(root, -1, "")]
        frontier: list[tuple[float, int, int, int]] = [(0.0, 0, 0, 0)]
        nodes = 0
        while frontier:
            index = heapq.heappop(frontier)[3]
            if nodes >= max_nodes:
                return Solution(Status.UNKNOWN, (), nodes, max_nodes)
            nodes += 1
            for order, (_, move, child) in enumerate(self.children(tree[index][0])):
                if child[4] == 52:
                    line = [move]
                    while index > 0:
                        line.append(tree[index][2])
                        index = tree[index][1]
                    return Solution(Status.WON, tuple(reversed(line)), nodes, max_nodes)
                key = self.key(child)
                if key in seen:
                    continue
                seen.add(key)
                heapq.heappush(frontier, (self.score(child), -nodes, -order, len(tree)))
                tree.append((child, index, move))
        return Solution(Status.UNWINNABLE, (), nodes, max_nodes)

    def children(self, node: Node) -> list[tuple[int, str, Node]]:
        """Every legal move (less PILE_SYMMETRY's duplicates) with its rank in move order and
        the position it leads to, sorted by rank."""
        tab, stock, waste, fnd, found, breaks = node
        out: list[tuple[int, str, Node]] = []
        takes = [_TAKES[p[-1] if p else None] for p in tab]
        wanted = {_SWISS_NEXT[s][len(fnd[s])]: s for s in range(4)}
        empty = [j for j in range(9) if not tab[j]]
        # Destinations a card may go to: with PILE_SYMMETRY, one empty pile stands for all.
        skip = set(empty[1:]) if self.symmetry else set()
        targets = [j for j in range(9) if j not in skip]

        def build(card: str) -> Tableau:
            s = wanted[card]
            return _put(fnd, s, (*fnd[s], card))

        if stock:
            out.append((3, "d", (tab, stock - 1, (*waste, self.stock[stock - 1]), fnd, found,
                                 breaks)))  # fmt: skip
        if waste:
            card, rest = waste[-1], waste[:-1]
            if card in wanted:
                out.append((0, "wf", (tab, stock, rest, build(card), found + 1, breaks)))
            for j in targets:
                if card in takes[j]:
                    piles = _put(tab, j, (*tab[j], card))
                    out.append((2, _WT[j], (piles, stock, rest, fnd, found, breaks)))
        for s in range(4):
            if fnd[s]:
                card = fnd[s][-1]
                back = _put(fnd, s, fnd[s][:-1])
                for j in targets:
                    if card in takes[j]:
                        piles = _put(tab, j, (*tab[j], card))
                        out.append((5, _FT[s][j], (piles, stock, waste, back, found - 1, breaks)))
        for i in range(9):
            pile = tab[i]
            if not pile:
                continue
            top = pile[-1]
            if top in wanted:
                lost = 1 if len(pile) > 1 and top not in _TAKES[pile[-2]] else 0
                piles = _put(tab, i, pile[:-1])
                out.append((0, _TF[i], (piles, stock, waste, build(top), found + 1,
                                        breaks - lost)))  # fmt: skip
            k = len(pile) - 1
            while True:
                bottom = pile[k]
                whole = k == 0
                uncovers = whole or bottom not in _TAKES[pile[k - 1]]
                after = breaks - (0 if whole or not uncovers else 1)
                for j in targets:
                    if j == i or bottom not in takes[j]:
                        continue
                    if whole and not tab[j] and self.symmetry:
                        continue  # a whole pile to an empty one: the piles swapped
                    piles = _put(_put(tab, i, pile[:k]), j, tab[j] + pile[k:])
                    name = _TT[i][j][len(pile) - k - 1]
                    out.append((1 if uncovers else 4, name, (piles, stock, waste, fnd, found,
                                                             after)))  # fmt: skip
                if uncovers:
                    break
                k -= 1
        out.sort()
        return out


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
