"""RULES.md, "Swiss", searched best first, in two passes (iterative widening).

First a streamliner: the same best-first search under a fifth of the budget, but narrowed to
moves that usually help (a card that can go to its foundation goes there, as the only move
tried; no foundation card comes back). It proves nothing when it fails (the narrowing may cut a
win), but a line it finds is a line of the game. Then the complete search with the rest of the
budget: every legal move less the safe prunings (PILE_SYMMETRY, DEAD_CARDS), so "unwinnable"
means every position it generated was expanded or proved lost by shared.solver.bounds.

Positions are plain tuples and their moves are generated here, not through legal_moves and
apply_move (a test checks they agree): the search spends most of its time here, and a
GameState per position costs twice as much.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable

from shared.cards import FULL_DECK, IS_RED, RANK_OF, SUITS
from shared.solver.bounds import buried, has_dead_card
from shared.solver.verdict import Pruning, Solution, Status
from shared.state import GameState

# Swiss.score's weights: of those tried on Swiss seeds 1..60 at 5,000 nodes (foundation cards
# 5-8, breaks 2-5, waste 0.5-2, and the cover of the next foundation cards), none won more than
# one deal more than these.
W_FOUND, W_BREAK, W_WASTE = 5.0, 3.0, 1.0
STREAMLINER_SHARE = 10  # the streamliner's budget: max_nodes // STREAMLINER_SHARE

# Move ranks (children's first element): the order ties are broken in, and what the
# streamliner keeps (below SHUFFLE).
FOUNDATION, UNCOVER, WASTE_DOWN, DEAL, SHUFFLE, BACK_DOWN = range(6)


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
Child = tuple[int, str, Node]


class Swiss:
    """The search of one Swiss position. Move order, for ties: foundation moves, moves that
    uncover a card or empty a pile, waste to tableau, deal, shuffles between piles, foundation
    cards back to the tableau."""

    def __init__(self, root: GameState, prunings: frozenset[Pruning]) -> None:
        self.root = root
        self.stock: tuple[str, ...] = tuple(c for c in root.stock if c is not None)
        self.symmetry = Pruning.PILE_SYMMETRY in prunings
        self.dead_cards = Pruning.DEAD_CARDS in prunings

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

    def dead(self, node: Node) -> bool:
        """DEAD_CARDS at the root: some card provably never leaves (shared.solver.bounds)."""
        if not self.dead_cards:
            return False
        tab, stock, waste, fnd = node[0], node[1], node[2], node[3]
        counts = (len(fnd[0]), len(fnd[1]), len(fnd[2]), len(fnd[3]))
        return has_dead_card(tab, waste, self.stock[:stock], counts)

    @staticmethod
    def score(node: Node) -> float:
        """How far from a win a position looks (lower is expanded first): foundation cards
        gained, cards buried under a card that does not take them, the waste's depth."""
        return -W_FOUND * node[4] + W_BREAK * node[5] + W_WASTE * len(node[2])

    def search(self, max_nodes: int, *, streamline: bool = True) -> Solution:
        """The streamliner (when asked for), then the complete search with what is left."""
        if self.root.resigned:
            return Solution(Status.UNWINNABLE, (), 0, max_nodes)
        root = self.node(self.root)
        if self.dead(root):
            return Solution(Status.UNWINNABLE, (), 0, max_nodes)
        used = 0
        if streamline:
            line, used, _ = self.best_first(root, max_nodes // STREAMLINER_SHARE, narrow=True)
            if line is not None:
                return Solution(Status.WON, line, used, max_nodes)
        line, nodes, done = self.best_first(root, max_nodes - used, narrow=False)
        if line is not None:
            return Solution(Status.WON, line, used + nodes, max_nodes)
        status = Status.UNWINNABLE if done else Status.UNKNOWN
        return Solution(status, (), used + nodes, max_nodes)

    def best_first(
        self, root: Node, max_nodes: int, *, narrow: bool
    ) -> tuple[tuple[str, ...] | None, int, bool]:
        """The winning line found (or None), the nodes expanded, and whether every position
        generated was expanded. The lowest-scoring position generated is expanded next; among
        equals, the children of the latest expansion, later moves in move order first (which
        won more deals)."""
        seen: set[Hashable] = {self.key(root)}
        # Per node: the node, the node it came from and the move that led here.
        tree: list[tuple[Node, int, str]] = [(root, -1, "")]
        frontier: list[tuple[float, int, int, int]] = [(0.0, 0, 0, 0)]
        nodes = 0
        children = self.narrow_children if narrow else self.children
        dead = self.dead_cards
        while frontier:
            index = heapq.heappop(frontier)[3]
            if nodes >= max_nodes:
                return None, nodes, False
            nodes += 1
            for order, (rank, move, child) in enumerate(children(tree[index][0])):
                if child[4] == 52:
                    line = [move]
                    while index > 0:
                        line.append(tree[index][2])
                        index = tree[index][1]
                    return tuple(reversed(line)), nodes, True
                key = self.key(child)
                if key in seen:
                    continue
                seen.add(key)
                # A deal is what buries a card for good: DEAD_CARDS's one-card case after it.
                if rank == DEAL and dead and buried(child[2]):
                    continue
                heapq.heappush(frontier, (self.score(child), -nodes, -order, len(tree)))
                tree.append((child, index, move))
        return None, nodes, True

    def narrow_children(self, node: Node) -> list[Child]:
        """The streamliner's moves: a foundation move alone if there is one, else every move
        but a foundation card back down."""
        out = self.children(node)
        if out and out[0][0] == FOUNDATION:
            return out[:1]
        return [c for c in out if c[0] != BACK_DOWN]

    def children(self, node: Node) -> list[Child]:
        """Every legal move (less PILE_SYMMETRY's duplicates) with its rank in move order and
        the position it leads to, sorted by rank."""
        tab, stock, waste, fnd, found, breaks = node
        out: list[Child] = []
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
            out.append((DEAL, "d", (tab, stock - 1, (*waste, self.stock[stock - 1]), fnd, found,
                                 breaks)))  # fmt: skip
        if waste:
            card, rest = waste[-1], waste[:-1]
            if card in wanted:
                out.append((FOUNDATION, "wf", (tab, stock, rest, build(card), found + 1, breaks)))
            for j in targets:
                if card in takes[j]:
                    piles = _put(tab, j, (*tab[j], card))
                    out.append((WASTE_DOWN, _WT[j], (piles, stock, rest, fnd, found, breaks)))
        for s in range(4):
            if fnd[s]:
                card = fnd[s][-1]
                back = _put(fnd, s, fnd[s][:-1])
                for j in targets:
                    if card in takes[j]:
                        piles = _put(tab, j, (*tab[j], card))
                        out.append(
                            (BACK_DOWN, _FT[s][j], (piles, stock, waste, back, found - 1, breaks))
                        )
        for i in range(9):
            pile = tab[i]
            if not pile:
                continue
            top = pile[-1]
            if top in wanted:
                lost = 1 if len(pile) > 1 and top not in _TAKES[pile[-2]] else 0
                piles = _put(tab, i, pile[:-1])
                out.append((FOUNDATION, _TF[i], (piles, stock, waste, build(top), found + 1,
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
                    rank = UNCOVER if uncovers else SHUFFLE
                    out.append((rank, name, (piles, stock, waste, fnd, found, after)))
                if uncovers:
                    break
                k -= 1
        out.sort()
        return out
