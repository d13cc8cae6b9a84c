"""An exact solver for both variants: is this position winnable, and how?

`solve(state, max_nodes=N)` searches from `state` with a transposition table of canonical
position keys and a few prunings that never lose a win. It answers "won" with a winning line
(canonical moves that replay through `shared.apply_move`), "unwinnable" only once every
position reachable (less those a pruning proves redundant) has been searched, and "unknown"
when the budget of `max_nodes` expanded positions runs out first. Pure: no I/O, no clock; the
budget counts positions, not time, so an answer is the same on every machine.

Quadrennial is searched depth first (shared/solver/quadrennial.py), foundation plays before
deals, so its first line is the greedy player's and every later one differs by holding a card
back. Swiss is searched best first (shared/solver/swiss.py: foundation cards, cards lying on
cards that do not take them, the waste's depth): its tableau moves are reversible and a
depth-first search spends any budget shuffling piles at the end of the stock. A streamliner
(narrowed moves, a fifth of the budget) goes first and may only find wins; the complete search
follows. "unwinnable" means every position the complete search generated was expanded or
proved lost by a bound.

shared/solver/layers.py describes the shape of the Swiss space the search runs in (irreversible
layers of reversible components) and counts it (`census`), for docs/winnability.md.

`hint(state, max_nodes=N)` (shared/solver/hint.py) answers a move in any live position: the
solver's next move when it finds a line, otherwise the heuristic's, labelled as such.

The prunings, each a `Pruning` so a test can turn it off and compare (RULES.md sections cited):

- `PILE_SYMMETRY` (Swiss). "Tableau": the nine piles follow one rule and an empty pile takes
  only an Ace, whichever pile it is; nothing in the rules tells t1 from t9. So two positions
  whose piles are a permutation of each other win or lose together: the key sorts the piles,
  only the first empty pile is tried as a destination, and a run that is a whole pile is never
  moved to an empty pile (the result is the same position with two piles swapped).
- `DEAD_CARDS` (Swiss). A card leaves its pile or the waste only from the top, to its
  foundation once the card before it is there, or onto a card that takes it (RULES.md, Swiss,
  Tableau and Foundations): shared/solver/bounds.py computes the least set of cards closed under
  those necessary conditions; a card outside it can never reach its foundation, so the
  position is lost and not searched further (checked at the root and after every deal).
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

from shared.solver.hint import Hint, good_move, hint
from shared.solver.search import solve
from shared.solver.verdict import ALL_PRUNINGS, Pruning, Solution, Status

__all__ = [
    "ALL_PRUNINGS",
    "Hint",
    "Pruning",
    "Solution",
    "Status",
    "good_move",
    "hint",
    "solve",
]
