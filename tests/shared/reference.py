"""Reference implementations the engine's fast paths are checked against (tests only).

`swiss_legal_moves` is the engine's Swiss move generation as it was before it was made fast: a
literal reading of RULES.md, Swiss, that tries every movable card on every pile.
"""

from __future__ import annotations

from shared.cards import SUIT_INDEX
from shared.state import GameState
from shared.swiss import ACCEPTS, NEXT_ON_FOUNDATION


def _fits_foundation(card: str, foundations: tuple[tuple[str, ...], ...]) -> bool:
    f = foundations[SUIT_INDEX[card]]
    return len(f) < 13 and NEXT_ON_FOUNDATION[SUIT_INDEX[card]][len(f)] == card


def swiss_legal_moves(st: GameState) -> set[str]:
    """Every legal Swiss move, each card tried against each of the nine piles."""
    fnd = st.foundations
    if st.resigned or sum(len(f) for f in fnd) == 52:
        return set()
    moves: set[str] = set()
    tab = st.tableau
    accepts = [ACCEPTS[p[-1] if p else None] for p in tab]
    if st.stock:
        moves.add("d")
    if st.waste:
        c = st.waste[-1]
        if _fits_foundation(c, fnd):
            moves.add("wf")
        moves.update(f"wt{j + 1}" for j in range(9) if c in accepts[j])
    for s in range(4):
        if fnd[s]:
            c = fnd[s][-1]
            moves.update(f"f{'cdhs'[s]}t{j + 1}" for j in range(9) if c in accepts[j])
    for i in range(9):
        p = tab[i]
        if not p:
            continue
        if _fits_foundation(p[-1], fnd):
            moves.add(f"t{i + 1}f")
        k = len(p) - 1
        n = 1
        while True:
            bottom = p[k]
            for j in range(9):
                if j != i and bottom in accepts[j]:
                    moves.add(f"t{i + 1}t{j + 1}" + (f"x{n}" if n > 1 else ""))
            if k == 0 or bottom not in ACCEPTS[p[k - 1]]:
                break
            k -= 1
            n += 1
    return moves
