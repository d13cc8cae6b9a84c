"""Swiss solitaire: RULES.md, "Swiss". Legal-move generation and one move's application."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shared.cards import FULL_DECK, IS_RED, RANK_OF, SUIT_INDEX, SUIT_NAMES, SUITS
from shared.errors import IllegalMove
from shared.foundation import build_on
from shared.notation import Move
from shared.state import EMPTY_FOUNDATIONS, GameState, slot_setter

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
# _WANTED[s][k]: NEXT_ON_FOUNDATION[s][k], and "" (no card) for a complete foundation (k == 13).
_WANTED: tuple[tuple[str, ...], ...] = tuple((*seq, "") for seq in NEXT_ON_FOUNDATION)


def legal_moves(st: GameState) -> set[str]:
    """Every legal move in canonical notation (none once the game is won or resigned).

    Each pile's top names the cards it takes (ACCEPTS, two in most cases) and movable_cards
    says where each of those lies, if it may be moved at all: a few lookups a pile, where
    walking the runs took one a card (23 cards a position in random play), in the rules
    engine's hottest loop."""
    fnd = st.foundations
    f0, f1, f2, f3 = fnd
    h0, h1, h2, h3 = len(f0), len(f1), len(f2), len(f3)
    if st.resigned or h0 + h1 + h2 + h3 == 52:
        return set()
    moves: set[str] = set()
    add = moves.add
    if st.stock:
        add("d")
    tab = st.tableau
    origin = movable_cards(st).get
    # The four cards the foundations take next ("" for a complete one).
    w0, w1, w2, w3 = _WANTED
    for card in (w0[h0], w1[h1], w2[h2], w3[h3]):
        src = origin(card)
        if src is not None:
            if src == WASTE_TOP:
                add("wf")
            elif src < 9 and tab[src][-1] == card:
                add(_TF[src])
    accepts = _ACCEPTS_TUPLE
    for j, p in enumerate(tab):
        for card in accepts[p[-1]] if p else _ACE_TUPLE:
            src = origin(card)
            if src is not None and src != j:
                if src < 9:
                    pile = tab[src]
                    add(_TT[src][j][len(pile) - pile.index(card)])
                elif src == WASTE_TOP:
                    add(_WT[j])
                else:
                    add(_FT[src - FOUNDATION_TOP][j])
    return moves


def run_start(pile: tuple[str, ...]) -> int:
    """Where the pile's run begins (RULES.md, Swiss: the top card and the cards below it that
    each take the one above): the index of its bottom card, 0 for an empty pile."""
    k = len(pile) - 1
    while k > 0 and pile[k] in ACCEPTS[pile[k - 1]]:
        k -= 1
    return k if k > 0 else 0


def run_length(pile: tuple[str, ...]) -> int:
    """Cards in the pile's run; 0 for an empty pile."""
    return len(pile) - run_start(pile)


# Where a movable card lies, besides a pile's index (0..8) for a card of that pile's run.
WASTE_TOP = 9
FOUNDATION_TOP = 10  # + the suit's index


def movable_cards(st: GameState) -> Mapping[str, int]:
    """Every card that may be moved, and from where: the cards of each pile's run (its index),
    the waste's top (WASTE_TOP) and each foundation's top (FOUNDATION_TOP + suit).

    Kept with the position once worked out (the position's own: read it, never change it);
    apply gives the next position an updated copy, since a move changes where only a few cards
    lie, so the positions of a game played from one another work it out once."""
    movable = st._movable
    if movable is None:
        movable = {}
        for i, pile in enumerate(st.tableau):
            k = len(pile) - 1
            if k >= 0:
                movable[pile[k]] = i
                while k > 0 and pile[k] in ACCEPTS[pile[k - 1]]:
                    k -= 1
                    movable[pile[k]] = i
        if st.waste:
            movable[st.waste[-1]] = WASTE_TOP
        for s, f in enumerate(st.foundations):
            if f:
                movable[f[-1]] = FOUNDATION_TOP + s
        _SET_MOVABLE(st, movable)
    return movable


def _add_run(movable: dict[str, int], pile: tuple[str, ...], i: int) -> None:
    """The cards of pile i's run are movable from it."""
    for card in pile[run_start(pile) :]:
        movable[card] = i


# Memoising a position's movable cards, derived from its fields (shared.state._Derived).
_SET_MOVABLE = slot_setter(GameState, "_movable")


def _describe(card: str | None) -> str:
    return "an empty pile" if card is None else card


def apply(
    st: GameState, m: Move, reveal: Callable[[], str | None] | None
) -> tuple[GameState, list[str]]:
    """The position after move m, and the cards it turned face up; IllegalMove if not allowed.

    A run from pile to pile (most moves of a game) tries the fast path first; anything it does
    not take goes through the checks that say why a move is refused."""
    src, si, dst, di, n = m
    if src == "t" and dst == "t" and not st.resigned:
        after = _run_between_piles(st, si, di, n)
        if after is not None:
            return after, []
    _check_live(st)
    if src == "d":
        return _deal(st, reveal)
    if src in _NOT_SWISS:
        raise IllegalMove(_NOT_SWISS[src])
    cards = _lift(st, src, si, n)
    if dst == "f":
        fnd = build_on(st.foundations, cards[0], NEXT_ON_FOUNDATION, "a Two")
    else:
        _check_lands(st.tableau[di], cards[0], di)
        fnd = st.foundations
    return _moved(st, m, cards, fnd), []


_NOT_SWISS = {
    "redeal": "Swiss has no redeal: the stock goes through once",
    "r": "Swiss has no reserve piles (r1..r8 are Quadrennial)",
}


def _run_between_piles(st: GameState, si: int, di: int, n: int) -> GameState | None:
    """The fast path of a run of n cards from pile si to pile di: the position after it, or
    None when the move is refused (apply's checks then say why)."""
    tab = st.tableau
    pile = tab[si]
    size = len(pile)
    cut = size - n
    target = tab[di]
    if cut < 0 or pile[cut] not in ACCEPTS[target[-1] if target else None]:
        return None
    movable = st._movable
    if movable is not None:
        if movable.get(pile[cut]) != si:
            return None
    else:
        k = cut + 1
        while k < size and pile[k] in ACCEPTS[pile[k - 1]]:
            k += 1
        if k < size:
            return None
    new_tab = list(tab)
    new_tab[si] = rest = pile[:cut]
    new_tab[di] = target + (run := pile[cut:])
    if movable is not None:
        movable = movable.copy()
        if rest and movable.get(rest[-1]) != si:
            _add_run(movable, rest, si)  # the whole run left: rest's is movable
        for c in run:
            movable[c] = di
    return GameState(
        "swiss",
        tuple(new_tab),
        (),
        st.stock,
        st.waste,
        st.foundations,
        0,
        st.moves_made + 1,
        False,
        movable,
    )


def _check_live(st: GameState) -> None:
    """RULES.md, Swiss: no move once the player resigned or all 52 cards are up."""
    if st.resigned:
        raise IllegalMove("the game is over: the player resigned")
    if st.won:
        raise IllegalMove("the game is over: it is won")


def _deal(st: GameState, reveal: Callable[[], str | None] | None) -> tuple[GameState, list[str]]:
    """`d`: the stock's top card to the waste (one pass only), asking `reveal` when hidden."""
    if not st.stock:
        raise IllegalMove("the stock is empty, and Swiss allows one pass only")
    card = st.stock[-1]
    if card is None:
        card = reveal() if reveal is not None else None
        if card is None:
            raise IllegalMove("the dealt card is unknown")
    movable = st._movable
    if movable is not None:
        movable = movable.copy()
        if st.waste:
            del movable[st.waste[-1]]
        movable[card] = WASTE_TOP
    after = GameState(
        "swiss",
        st.tableau,
        (),
        st.stock[:-1],
        (*st.waste, card),
        st.foundations,
        0,
        st.moves_made + 1,
        False,
        movable,
    )
    return after, [card]


def _lift(st: GameState, src: str, si: int, n: int) -> tuple[str, ...]:
    """The cards a move takes from its source: a run of n from a pile, the waste's top or a
    foundation's top; IllegalMove when the source does not hold them."""
    if src == "t":
        pile = st.tableau[si]
        if len(pile) < n:
            where = "is empty" if not pile else f"holds {len(pile)} card(s)"
            raise IllegalMove(f"t{si + 1} {where}: cannot move {n} card(s) from it")
        for k in range(len(pile) - n + 1, len(pile)):
            if pile[k] not in ACCEPTS[pile[k - 1]]:
                raise IllegalMove(
                    f"the top {n} cards of t{si + 1} are not a run: "
                    f"{pile[k]} cannot lie on {pile[k - 1]}"
                )
        return pile[len(pile) - n :]
    if src == "w":
        if not st.waste:
            raise IllegalMove("the waste is empty")
        return (st.waste[-1],)
    if not st.foundations[si]:
        raise IllegalMove(f"the {SUIT_NAMES[si]} foundation is empty")
    return (st.foundations[si][-1],)


def _check_lands(target: tuple[str, ...], card: str, di: int) -> None:
    """IllegalMove unless `card` (a run's bottom) may go on pile di (RULES.md, Tableau)."""
    top = target[-1] if target else None
    if card not in ACCEPTS[top]:
        if top is None:
            why = "an empty pile takes only an Ace or a run headed by an Ace"
        else:
            why = "it needs the opposite colour and one rank lower (or an Ace on a King)"
        raise IllegalMove(f"{card} cannot go on {_describe(top)} on t{di + 1}: {why}")


def _moved(
    st: GameState, m: Move, cards: tuple[str, ...], fnd: tuple[tuple[str, ...], ...]
) -> GameState:
    """The position after a checked move of `cards` (lifted from m's source) to m's
    destination; `fnd` already holds them when they went to a foundation."""
    src, si, dst, di, n = m
    tab = st.tableau
    waste = st.waste
    new_tab = list(tab)
    movable = st._movable
    if movable is not None:
        movable = movable.copy()
    if src == "t":
        new_tab[si] = rest = tab[si][: len(tab[si]) - n]
        if movable is not None and rest and movable.get(rest[-1]) != si:
            _add_run(movable, rest, si)
    elif src == "w":
        waste = waste[:-1]
        if movable is not None and waste:
            movable[waste[-1]] = WASTE_TOP
    else:
        new_f = list(fnd)
        new_f[si] = fnd[si][:-1]
        fnd = tuple(new_f)
        if movable is not None and fnd[si]:
            movable[fnd[si][-1]] = FOUNDATION_TOP + si
    if dst == "t":
        new_tab[di] = tab[di] + cards
        if movable is not None:
            for c in cards:
                movable[c] = di
    elif movable is not None:
        s = SUIT_INDEX[cards[0]]
        if len(fnd[s]) > 1:
            del movable[fnd[s][-2]]
        movable[cards[0]] = FOUNDATION_TOP + s
    return GameState(
        "swiss", tuple(new_tab), (), st.stock, waste, fnd, 0, st.moves_made + 1, False, movable
    )
