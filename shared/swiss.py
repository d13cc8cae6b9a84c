"""Swiss solitaire: RULES.md, "Swiss". Legal-move generation and one move's application."""

from __future__ import annotations

from collections.abc import Callable, Iterator

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


# ON[b]: the cards b may be placed on, the inverse of ACCEPTS (an Ace also goes on an empty
# pile, which legal_moves handles apart): two cards, or four for an Ace (the Twos and Kings).
ON: dict[str, tuple[str, ...]] = {
    b: tuple(a for a in FULL_DECK if b in ACCEPTS[a]) for b in FULL_DECK
}
_ACES = ACCEPTS[None]


def legal_moves(st: GameState) -> set[str]:
    """Every legal move in canonical notation (none once the game is won or resigned)."""
    return set(_generate(st))


def has_legal_move(st: GameState) -> bool:
    """Whether any move is legal: the first one generated, without the rest (is_over)."""
    for _ in _generate(st):
        return True
    return False


def _generate(st: GameState) -> Iterator[str]:
    """Each legal move once, the cheapest checks first so has_legal_move stops early.

    Each movable card looks up the few piles whose top card takes it (ON and the tops' index)
    instead of testing every pile: the rules engine's hottest loop."""
    fnd = st.foundations
    f0, f1, f2, f3 = fnd
    h0, h1, h2, h3 = len(f0), len(f1), len(f2), len(f3)
    if st.resigned or h0 + h1 + h2 + h3 == 52:
        return
    tab = st.tableau
    top_at: dict[str, int] = {}
    empty: list[int] = []
    for j in range(9):
        p = tab[j]
        if p:
            top_at[p[-1]] = j
        else:
            empty.append(j)
    if st.stock:
        yield "d"
    waste_top = st.waste[-1] if st.waste else None
    # The four cards the foundations take next, from the waste or a tableau pile's top.
    nxt = NEXT_ON_FOUNDATION
    for s, h in ((0, h0), (1, h1), (2, h2), (3, h3)):
        if h < 13:
            c = nxt[s][h]
            if c == waste_top:
                yield "wf"
            elif c in top_at:
                yield _TF[top_at[c]]
    if waste_top is not None:
        for a in ON[waste_top]:
            if a in top_at:
                yield _WT[top_at[a]]
        if empty and waste_top in _ACES:
            yield from [_WT[j] for j in empty]
    for s in range(4):
        pile = fnd[s]
        if pile:
            c = pile[-1]
            names = _FT[s]
            for a in ON[c]:
                if a in top_at:
                    yield names[top_at[a]]
            if empty and c in _ACES:
                yield from [names[j] for j in empty]
    for i in range(9):
        p = tab[i]
        if not p:
            continue
        names_i = _TT[i]
        k = len(p) - 1
        n = 1
        while True:
            bottom = p[k]
            for a in ON[bottom]:
                j = top_at.get(a)
                if j is not None and j != i:
                    yield names_i[j][n]
            if empty and bottom in _ACES:
                yield from [names_i[j][n] for j in empty]
            if k == 0 or bottom not in ACCEPTS[p[k - 1]]:
                break
            k -= 1
            n += 1


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
    if st.resigned:
        raise IllegalMove("the game is over: the player resigned")
    fnd = st.foundations
    if len(fnd[0]) + len(fnd[1]) + len(fnd[2]) + len(fnd[3]) == 52:
        raise IllegalMove("the game is over: it is won")
    src = m.src
    tab = st.tableau
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
    dst, di, n = m.dst, m.di, m.n
    waste = st.waste
    if src == "t":
        pile = tab[m.si]
        if len(pile) < n:
            where = "is empty" if not pile else f"holds {len(pile)} card(s)"
            raise IllegalMove(f"t{m.si + 1} {where}: cannot move {n} card(s) from it")
        for k in range(len(pile) - n + 1, len(pile)):
            if pile[k] not in ACCEPTS[pile[k - 1]]:
                raise IllegalMove(
                    f"the top {n} cards of t{m.si + 1} are not a run: "
                    f"{pile[k]} cannot lie on {pile[k - 1]}"
                )
        cards = pile[len(pile) - n :]
    elif src == "w":
        if not waste:
            raise IllegalMove("the waste is empty")
        cards = (waste[-1],)
    else:  # "f"
        if not fnd[m.si]:
            raise IllegalMove(f"the {SUIT_NAMES[m.si]} foundation is empty")
        cards = (fnd[m.si][-1],)
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
        new_tab[m.si] = tab[m.si][: len(tab[m.si]) - n]
    elif src == "w":
        waste = waste[:-1]
    else:
        new_f = list(fnd)
        new_f[m.si] = fnd[m.si][:-1]
        fnd = tuple(new_f)
    if dst == "t":
        new_tab[di] = tab[di] + cards
    return (
        GameState("swiss", tuple(new_tab), (), st.stock, waste, fnd, 0, st.moves_made + 1),
        [],
    )
