"""Quadrennial solitaire: RULES.md, "Quadrennial". Legal-move generation and one move's
application, with the standing refill rule applied after every action."""

from __future__ import annotations

from collections.abc import Callable

from shared.cards import SUIT_INDEX, SUITS
from shared.errors import IllegalMove
from shared.foundation import build_on
from shared.notation import Move
from shared.state import EMPTY_FOUNDATIONS, GameState

RESERVE_PILES = 8
FOUNDATION_ORDER = "A23456789TJQK"
REDEALS = 2

NEXT_ON_FOUNDATION: tuple[tuple[str, ...], ...] = tuple(
    tuple(r + s for r in FOUNDATION_ORDER) for s in SUITS
)
_RF = [f"r{i + 1}f" for i in range(RESERVE_PILES)]


def lay_out(deck: tuple[str, ...]) -> GameState:
    """RULES.md, "How a deck is laid out", Quadrennial: deck[0..7] to r1..r8, the rest is
    the stock with deck[8] on top."""
    return GameState(
        "quadrennial",
        (),
        tuple(deck[:RESERVE_PILES]),
        tuple(reversed(deck[RESERVE_PILES:])),
        (),
        EMPTY_FOUNDATIONS,
        REDEALS,
        0,
    )


def _fits(card: str | None, fnd: tuple[tuple[str, ...], ...]) -> bool:
    if card is None:
        return False
    s = SUIT_INDEX[card]
    f = fnd[s]
    return len(f) < 13 and NEXT_ON_FOUNDATION[s][len(f)] == card


def legal_moves(st: GameState) -> set[str]:
    """Every legal move in canonical notation (none once the game is won or resigned)."""
    if st.resigned:
        return set()
    fnd = st.foundations
    moves: set[str] = set()
    for i, card in enumerate(st.reserve):
        if _fits(card, fnd):
            moves.add(_RF[i])
    if st.waste and _fits(st.waste[-1], fnd):
        moves.add("wf")
    if st.stock:
        moves.add("d")
    elif st.waste and st.redeals_left > 0:
        moves.add("redeal")
    return moves


def _draw(stock: tuple[str | None, ...], reveal: Callable[[], str | None] | None) -> str:
    card = stock[-1]
    if card is None:
        card = reveal() if reveal is not None else None
        if card is None:
            raise IllegalMove("the dealt card is unknown")
    return card


def _refill(
    reserve: tuple[str | None, ...],
    stock: tuple[str | None, ...],
    reveal: Callable[[], str | None] | None,
    revealed: list[str],
) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    """RULES.md, Quadrennial, standing refill rule: empty reserve piles, r1..r8 in order,
    each take the stock's top card while the stock has cards."""
    if None not in reserve or not stock:
        return reserve, stock
    piles = list(reserve)
    for i in range(RESERVE_PILES):
        if piles[i] is None and stock:
            card = _draw(stock, reveal)
            stock = stock[:-1]
            piles[i] = card
            revealed.append(card)
    return tuple(piles), stock


def apply(
    st: GameState, m: Move, reveal: Callable[[], str | None] | None
) -> tuple[GameState, list[str]]:
    """The position after move m, and the cards it turned face up; IllegalMove if not allowed."""
    if st.resigned:
        raise IllegalMove("the game is over: the player resigned")
    src, si, dst, _, _ = m
    fnd = st.foundations
    reserve, stock, waste = st.reserve, st.stock, st.waste
    redeals = st.redeals_left
    revealed: list[str] = []
    if src == "d":
        if not stock:
            more = "redeal" if waste and redeals else "no redeal is left"
            raise IllegalMove(f"the stock is empty ({more})")
        card = stock[-1]
        if card is None:
            card = reveal() if reveal is not None else None
            if card is None:
                raise IllegalMove("the dealt card is unknown")
        stock = stock[:-1]
        waste = (*waste, card)
        revealed.append(card)
    elif src == "redeal":
        if stock:
            raise IllegalMove("redeal only when the stock is empty")
        if not waste:
            raise IllegalMove("nothing to redeal: the waste is empty")
        if not redeals:
            raise IllegalMove("no redeal left: Quadrennial allows two (three passes in all)")
        # Turned over without shuffling: the first card dealt comes out first again. A public
        # fold (reveal given) knows only the count: dealt cards come from the events.
        stock = tuple(reversed(waste)) if reveal is None else (None,) * len(waste)
        waste = ()
        redeals -= 1
    elif src == "t" or src == "f":
        what = "tableau piles" if src == "t" else "moves off the foundations"
        raise IllegalMove(f"Quadrennial has no {what}: cards go from r1..r8 or w to f")
    else:
        if dst != "f":
            raise IllegalMove("in Quadrennial cards go only to the foundations")
        if src == "w":
            if not waste:
                raise IllegalMove("the waste is empty")
            card = waste[-1]
        else:
            held = reserve[si]
            if held is None:
                raise IllegalMove(f"r{si + 1} is empty")
            card = held
        fnd = build_on(fnd, card, NEXT_ON_FOUNDATION, "an Ace")
        if src == "w":
            waste = waste[:-1]
        else:
            piles = list(reserve)
            piles[si] = None
            reserve = tuple(piles)
    if stock and None in reserve:
        reserve, stock = _refill(reserve, stock, reveal, revealed)
    return (
        GameState("quadrennial", (), reserve, stock, waste, fnd, redeals, st.moves_made + 1),
        revealed,
    )
