"""Builders of hand-made positions for example tests: only the piles a rule needs."""

from __future__ import annotations

from collections.abc import Sequence

from shared.state import GameState

SUIT_ORDER = "CDHS"
SWISS_ORDER = "23456789TJQKA"
QUAD_ORDER = "A23456789TJQK"


def foundations(order: str, counts: dict[str, int]) -> tuple[tuple[str, ...], ...]:
    """Foundations holding counts[suit] cards each, built in the variant's order."""
    return tuple(tuple(r + s for r in order[: counts.get(s, 0)]) for s in SUIT_ORDER)


def swiss(
    tableau: Sequence[Sequence[str]] = (),
    *,
    stock: Sequence[str] = (),
    waste: Sequence[str] = (),
    found: dict[str, int] | None = None,
) -> GameState:
    """A Swiss position; `tableau` lists up to nine piles bottom to top, `stock` top last."""
    piles = [tuple(p) for p in tableau] + [()] * (9 - len(tableau))
    return GameState(
        "swiss",
        tuple(piles),
        (),
        tuple(stock),
        tuple(waste),
        foundations(SWISS_ORDER, found or {}),
        0,
        0,
    )


def quad(
    reserve: Sequence[str | None],
    *,
    stock: Sequence[str] = (),
    waste: Sequence[str] = (),
    found: dict[str, int] | None = None,
    redeals_left: int = 2,
) -> GameState:
    """A Quadrennial position; `stock` lists cards bottom to top (the next one dealt last)."""
    return GameState(
        "quadrennial",
        (),
        tuple(reserve),
        tuple(stock),
        tuple(waste),
        foundations(QUAD_ORDER, found or {}),
        redeals_left,
        0,
    )
