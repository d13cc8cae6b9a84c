"""Swiss solitaire: RULES.md, "Swiss". Legal-move generation and one move's application."""

from __future__ import annotations

from collections.abc import Callable

from shared.cards import FULL_DECK, IS_RED, RANK_OF, SUIT_NAMES, SUITS
from shared.errors import IllegalMove
from shared.foundation import build_on
from shared.notation import Move
from shared.state import EMPTY_FOUNDATIONS, GameState

PILE_SIZES = (1, 2, 3, 4, 5, 4, 3, 2, 1)
FOUNDATION_ORDER = "23456789TJQKA"
REDEALS = 0

# NEXT_ON_FOUNDATION[s][k]: the card a foundation of suit s holding k cards takes next.
NEXT_ON_FOUNDATION: tuple[tuple[str, ...], ...] = tuple(
    tuple(r + s for r in FOUNDATION_ORDER) for s in SUITS
)


def _may_go_on(b: str, a: str) -> bool:
    """RULES.md, Swiss, Tableau: b on a when colours differ and b is one rank below a
    cyclically (Ace on Two, King on Ace), or a is a King and b an Ace."""
    if IS_RED[a] == IS_RED[b]:
        return False
    ra, rb = RANK_OF[a], RANK_OF[b]
    return rb == (ra - 2) % 13 + 1 or (ra == 13 and rb == 1)


# ACCEPTS[a]: the cards that may be placed on a; ACCEPTS[None]: on an empty pile (the Aces).
ACCEPTS: dict[str | None, frozenset[str]] = {
    a: frozenset(b for b in FULL_DECK if _may_go_on(b, a)) for a in FULL_DECK
}
ACCEPTS[None] = frozenset(c for c in FULL_DECK if RANK_OF[c] == 1)

_TT = [
    [
        [""] + [f"t{i + 1}t{j + 1}"] + [f"t{i + 1}t{j + 1}x{n}" for n in range(2, 53)]
        for j in range(9)
    ]
    for i in range(9)
]
_WT = [f"wt{j + 1}" for j in range(9)]
_TF = [f"t{i + 1}f" for i in range(9)]
_FT = [[f"f{s.lower()}t{j + 1}" for j in range(9)] for s in SUITS]


def lay_out(deck: tuple[str, ...]) -> GameState:
    """RULES.md, "How a deck is laid out", Swiss: piles of 1 2 3 4 5 4 3 2 1, then the stock
    with deck[25] on top."""
    piles = []
    k = 0
    for size in PILE_SIZES:
        piles.append(tuple(deck[k : k + size]))
        k += size
    return GameState(
        "swiss", tuple(piles), (), tuple(reversed(deck[k:])), (), EMPTY_FOUNDATIONS, 0, 0
    )


# ACCEPTS as tuples, to loop over: what each top card takes, and what an empty pile takes.
_ACCEPTS_TUPLE: dict[str, tuple[str, ...]] = {a: tuple(ACCEPTS[a]) for a in FULL_DECK}
_ACE_TUPLE = tuple(ACCEPTS[None])
# _WANTED[s][k]: NEXT_ON_FOUNDATION[s][k], and None for a complete foundation (k == 13).
_WANTED: tuple[tuple[str | None, ...], ...] = tuple((*seq, None) for seq in NEXT_ON_FOUNDATION)


def legal_moves(st: GameState) -> set[str]:
    """Every legal move in canonical notation (none once the game is won or resigned).

    The piles each card may go to are indexed once per position (from the tops, through
    ACCEPTS), so each movable card is one lookup: a run is 23 cards on average in random play,
    and this loop is the rules engine's hottest."""
    fnd = st.foundations
    f0, f1, f2, f3 = fnd
    h0, h1, h2, h3 = len(f0), len(f1), len(f2), len(f3)
    if st.resigned or h0 + h1 + h2 + h3 == 52:
        return set()
    moves: set[str] = set()
    add = moves.add
    if st.stock:
        add("d")
    # The four cards the foundations take next (None for a complete one).
    w0, w1, w2, w3 = _WANTED
    wanted = {w0[h0], w1[h1], w2[h2], w3[h3]}
    waste_top = st.waste[-1] if st.waste else None
    if waste_top is not None and waste_top in wanted:
        add("wf")
    tab = st.tableau
    accepts = _ACCEPTS_TUPLE
    goes_to: dict[str, list[int]] = {}  # card -> the piles that take it
    empty: list[int] = []
    for j in range(9):
        p = tab[j]
        if p:
            a = p[-1]
            if a in wanted:
                add(_TF[j])
            for b in accepts[a]:
                if b in goes_to:
                    goes_to[b].append(j)
                else:
                    goes_to[b] = [j]
        else:
            empty.append(j)
    if empty:
        for b in _ACE_TUPLE:
            if b in goes_to:
                goes_to[b].extend(empty)
            else:
                goes_to[b] = list(empty)
    if waste_top is not None and waste_top in goes_to:
        for j in goes_to[waste_top]:
            add(_WT[j])
    for s in range(4):
        pile = fnd[s]
        if pile and pile[-1] in goes_to:
            names = _FT[s]
            for j in goes_to[pile[-1]]:
                add(names[j])
    for i in range(9):
        p = tab[i]
        if not p:
            continue
        k = len(p) - 1
        n = 1
        while True:
            bottom = p[k]
            if bottom in goes_to:
                for j in goes_to[bottom]:
                    if j != i:
                        add(_TT[i][j][n])
            if k == 0 or bottom not in ACCEPTS[p[k - 1]]:
                break
            k -= 1
            n += 1
    return moves


def run_length(pile: tuple[str, ...]) -> int:
    """Cards in the pile's run (RULES.md, Swiss: the top card and the cards below it that
    each take the one above); 0 for an empty pile."""
    n = 1 if pile else 0
    k = len(pile) - 1
    while k > 0 and pile[k] in ACCEPTS[pile[k - 1]]:
        k -= 1
        n += 1
    return n


def _describe(card: str | None) -> str:
    return "an empty pile" if card is None else card


def apply(
    st: GameState, m: Move, reveal: Callable[[], str | None] | None
) -> tuple[GameState, list[str]]:
    """The position after move m, and the cards it turned face up; IllegalMove if not allowed."""
    fnd = st.foundations
    tab = st.tableau
    src, si, dst, di, n = m
    if src == "t" and dst == "t" and not st.resigned:
        # Most moves of a game: a run from pile to pile. Only the success path is here (the
        # same conditions as below); anything refused goes on to say why.
        pile = tab[si]
        size = len(pile)
        target = tab[di]
        if size >= n and pile[size - n] in ACCEPTS[target[-1] if target else None]:
            k = size - n + 1
            while k < size and pile[k] in ACCEPTS[pile[k - 1]]:
                k += 1
            if k >= size:
                new_tab = list(tab)
                new_tab[si] = pile[: size - n]
                new_tab[di] = target + pile[size - n :]
                return (
                    GameState(
                        "swiss", tuple(new_tab), (), st.stock, st.waste, fnd, 0, st.moves_made + 1
                    ),
                    [],
                )
    if st.resigned:
        raise IllegalMove("the game is over: the player resigned")
    if len(fnd[0]) + len(fnd[1]) + len(fnd[2]) + len(fnd[3]) == 52:
        raise IllegalMove("the game is over: it is won")
    if src == "d":
        if not st.stock:
            raise IllegalMove("the stock is empty, and Swiss allows one pass only")
        card = st.stock[-1]
        if card is None:
            card = reveal() if reveal is not None else None
            if card is None:
                raise IllegalMove("the dealt card is unknown")
        return (
            GameState(
                "swiss", tab, (), st.stock[:-1], (*st.waste, card), fnd, 0, st.moves_made + 1
            ),
            [card],
        )
    if src == "redeal":
        raise IllegalMove("Swiss has no redeal: the stock goes through once")
    if src == "r":
        raise IllegalMove("Swiss has no reserve piles (r1..r8 are Quadrennial)")
    waste = st.waste
    if src == "t":
        pile = tab[si]
        if len(pile) < n:
            where = "is empty" if not pile else f"holds {len(pile)} card(s)"
            raise IllegalMove(f"t{si + 1} {where}: cannot move {n} card(s) from it")
        for k in range(len(pile) - n + 1, len(pile)):
            if pile[k] not in ACCEPTS[pile[k - 1]]:
                raise IllegalMove(
                    f"the top {n} cards of t{si + 1} are not a run: "
                    f"{pile[k]} cannot lie on {pile[k - 1]}"
                )
        cards = pile[len(pile) - n :]
    elif src == "w":
        if not waste:
            raise IllegalMove("the waste is empty")
        cards = (waste[-1],)
    else:  # "f"
        if not fnd[si]:
            raise IllegalMove(f"the {SUIT_NAMES[si]} foundation is empty")
        cards = (fnd[si][-1],)
    if dst == "f":
        card = cards[0]
        fnd = build_on(fnd, card, NEXT_ON_FOUNDATION, "a Two")
    else:
        target = tab[di]
        top = target[-1] if target else None
        if cards[0] not in ACCEPTS[top]:
            if top is None:
                why = "an empty pile takes only an Ace or a run headed by an Ace"
            else:
                why = "it needs the opposite colour and one rank lower (or an Ace on a King)"
            raise IllegalMove(f"{cards[0]} cannot go on {_describe(top)} on t{di + 1}: {why}")
    new_tab = list(tab)
    if src == "t":
        new_tab[si] = tab[si][: len(tab[si]) - n]
    elif src == "w":
        waste = waste[:-1]
    else:
        new_f = list(fnd)
        new_f[si] = fnd[si][:-1]
        fnd = tuple(new_f)
    if dst == "t":
        new_tab[di] = tab[di] + cards
    return (
        GameState("swiss", tuple(new_tab), (), st.stock, waste, fnd, 0, st.moves_made + 1),
        [],
    )
