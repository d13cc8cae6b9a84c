"""Hypothesis strategies for arbitrary positions, not only those random play reaches: long runs,
empty piles, complete foundations, a hidden stock. The cards are always the 52, once each."""

from __future__ import annotations

from hypothesis import strategies as st

from shared import quadrennial, swiss
from shared.cards import FULL_DECK
from shared.state import GameState


def _foundations(
    draw: st.DrawFn, order: tuple[tuple[str, ...], ...]
) -> tuple[tuple[str, ...], ...]:
    heights = draw(st.lists(st.integers(0, 13), min_size=4, max_size=4))
    return tuple(order[s][:h] for s, h in enumerate(heights))


def _rest(draw: st.DrawFn, fnd: tuple[tuple[str, ...], ...]) -> list[str]:
    placed = {c for f in fnd for c in f}
    return list(draw(st.permutations([c for c in FULL_DECK if c not in placed])))


def _stock(draw: st.DrawFn, cards: list[str], hidden: bool) -> tuple[str | None, ...]:
    """The stock, its order sometimes hidden (None) as in a position rebuilt from public data."""
    if hidden and draw(st.integers(0, 3)) == 0:
        return (None,) * len(cards)
    return tuple(cards)


@st.composite
def swiss_positions(draw: st.DrawFn, hidden: bool = True) -> GameState:
    """A Swiss position whose piles are often built as runs (RULES.md, Swiss, Tableau)."""
    fnd = _foundations(draw, swiss.NEXT_ON_FOUNDATION)
    left = _rest(draw, fnd)
    piles: list[tuple[str, ...]] = []
    for _ in range(9):
        size = draw(st.integers(0, 14))
        pile: list[str] = []
        while left and len(pile) < size:
            fits = [c for c in left if pile and c in swiss.ACCEPTS[pile[-1]]]
            chain = bool(fits) and draw(st.integers(0, 3)) > 0
            card = fits[0] if chain else left[0]
            left.remove(card)
            pile.append(card)
        piles.append(tuple(pile))
    cut = draw(st.integers(0, len(left)))
    return GameState(
        "swiss",
        tuple(piles),
        (),
        _stock(draw, left[cut:], hidden),
        tuple(left[:cut]),
        fnd,
        0,
        draw(st.integers(0, 500)),
        draw(st.integers(0, 9)) == 0,
    )


@st.composite
def quadrennial_positions(draw: st.DrawFn, hidden: bool = True) -> GameState:
    """A Quadrennial position: any redeals left; reserve piles empty only once the stock is
    (RULES.md, Quadrennial, the standing refill rule)."""
    fnd = _foundations(draw, quadrennial.NEXT_ON_FOUNDATION)
    left = _rest(draw, fnd)
    cut = draw(st.integers(0, len(left)))
    stock_size = len(left) - cut
    reserve: list[str | None] = []
    for _ in range(8):
        keep = stock_size > 0 or draw(st.integers(0, 3)) > 0
        reserve.append(left.pop(0) if left and keep else None)
    cut = min(cut, len(left))
    return GameState(
        "quadrennial",
        (),
        tuple(reserve),
        _stock(draw, left[cut:], hidden),
        tuple(left[:cut]),
        fnd,
        draw(st.integers(0, 2)),
        draw(st.integers(0, 500)),
        draw(st.integers(0, 9)) == 0,
    )


positions = st.one_of(swiss_positions(), quadrennial_positions())
known_positions = st.one_of(swiss_positions(hidden=False), quadrennial_positions(hidden=False))
