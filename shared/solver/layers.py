"""The shape of a Swiss position space: irreversible layers of reversible components.

RULES.md, Swiss, gives every move one of two kinds:

- *irreversible*: a deal (the stock only shrinks: "One pass only"), a waste card played (a card
  never returns to the waste), or a move that takes a card off a *break*: a card lying on a card
  that does not take it, or a non-Ace card at the bottom of a pile ("An empty tableau pile may
  be filled only by an Ace"). Cards are only ever placed where the tableau rule accepts them, so
  a break, once undone, never forms again, and the number of breaks never grows.
- *reversible*: everything else, a run lifted from a card that takes it (it can go straight
  back), a card sent up from such a place or from an empty pile's bottom (an Ace) and taken
  down again ("The top card of a foundation may go back"), or a foundation card taken down and
  sent back up.

So `layer(node)` = (stock left, waste length, breaks) is constant along reversible moves and
falls at every irreversible one, and `2 * stock + waste + breaks` falls by at least one: the
position graph is a DAG of *components*, each the set of positions one layer's reversible
moves connect. `census` enumerates a position's components exhaustively (up to a budget), to
measure how large the space a complete search must cover is; docs/winnability.md has the
figures.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from shared.solver.swiss import _TAKES, Node, Swiss, Tableau
from shared.solver.verdict import ALL_PRUNINGS
from shared.state import GameState

Layer = tuple[int, int, int]


def breaks(tab: Tableau) -> int:
    """Cards lying on a card that does not take them, plus non-Ace cards at a pile's bottom:
    RULES.md, Swiss, Tableau, neither is ever formed by a move."""
    lying = sum(1 for p in tab for k in range(1, len(p)) if p[k] not in _TAKES[p[k - 1]])
    return lying + sum(1 for p in tab if p and p[0][0] != "A")


def layer(node: Node) -> Layer:
    """Stock left, waste length and breaks: constant along reversible moves, falling (in
    2 * stock + waste + breaks) at every other move."""
    return (node[1], len(node[2]), breaks(node[0]))


def potential(node: Node) -> int:
    """2 * stock + waste + breaks: an upper bound on the irreversible moves still possible."""
    stock, waste, brk = layer(node)
    return 2 * stock + waste + brk


@dataclass(frozen=True, slots=True)
class Census:
    """What an exhaustive enumeration of a position's components found."""

    positions: int  # canonical positions enumerated (PILE_SYMMETRY's keys)
    components: int  # reversible components they fall into
    largest: int  # positions in the largest component
    won: bool  # a won position was reached (the enumeration stops there)
    complete: bool  # every reachable position was enumerated, and none is won
    stock_waste: int  # distinct (stock left, waste) pairs among the components


def census(state: GameState, max_positions: int) -> Census:
    """Enumerate the Swiss positions reachable from `state`, component by component (depth
    first over the components' exits), until all are seen, a win is reached, or
    `max_positions` have been enumerated."""
    search = Swiss(state, ALL_PRUNINGS)
    seen: set[Hashable] = set()
    todo: list[Node] = [search.node(state)]
    sizes: list[int] = []
    pairs: set[tuple[int, tuple[str, ...]]] = set()
    total = 0
    while todo:
        entry = todo.pop()
        if search.key(entry) in seen:
            continue
        if total >= max_positions:
            todo.append(entry)
            break
        size, exits, won = _component(search, entry, seen, max_positions - total)
        sizes.append(size)
        total += size
        pairs.add((entry[1], entry[2]))
        if won:
            return Census(total, len(sizes), max(sizes), True, False, len(pairs))
        if exits is None:  # the budget ran out inside this component
            return Census(total, len(sizes), max(sizes), False, False, len(pairs))
        todo.extend(exits)
    return Census(total, len(sizes), max(sizes, default=0), False, not todo, len(pairs))


def _component(
    search: Swiss, entry: Node, seen: set[Hashable], budget: int
) -> tuple[int, list[Node] | None, bool]:
    """The positions of entry's component (added to `seen`), its exits not seen yet (None
    when the component has more than `budget` positions: it is cut there), and whether a
    move from it wins."""
    level = layer(entry)
    seen.add(search.key(entry))
    members = [entry]
    exits: list[Node] = []
    if budget <= 1:
        return 1, None, False
    for node in members:  # grows as the component is found
        for _, _, child in search.children(node):
            if child[4] == 52:
                return len(members), exits, True
            key = search.key(child)
            if key in seen:
                continue
            if layer(child) == level:
                seen.add(key)
                members.append(child)
                if len(members) >= budget:
                    return len(members), None, False
            else:
                exits.append(child)
    return len(members), exits, False
