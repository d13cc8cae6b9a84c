"""The game API both variants share: new games, legal moves, applying a move, the verdicts.

Dispatches on the variant; moves cross this boundary as canonical strings (RULES.md, "Move
notation") and are parsed once, cached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Protocol

from shared import quadrennial, swiss
from shared.cards import validate_deck
from shared.deal import deal_deck
from shared.errors import IllegalMove
from shared.notation import parse_canonical, parse_str
from shared.state import GameState
from shared.variants import SWISS, check_variant

_LEGAL = {"swiss": swiss.legal_moves, "quadrennial": quadrennial.legal_moves}
_APPLY = {"swiss": swiss.apply, "quadrennial": quadrennial.apply}


def lay_out(variant: str, deck: Iterable[str]) -> GameState:
    """The starting position of a deck (RULES.md, "How a deck is laid out")."""
    check_variant(variant)
    cards = validate_deck(deck)
    return swiss.lay_out(cards) if variant == SWISS else quadrennial.lay_out(cards)


def new_game(
    variant: str, *, seed: int | str | None = None, deck: Iterable[str] | None = None
) -> GameState:
    """A new game from a seed or from an explicit deck (exactly one of the two)."""
    check_variant(variant)
    if seed is not None and deck is None:
        return lay_out(variant, deal_deck(variant, seed))
    if deck is not None and seed is None:
        return lay_out(variant, deck)
    raise ValueError("new_game takes exactly one of seed= or deck=")


def legal_moves(state: GameState) -> set[str]:
    """Every legal move in canonical notation, nothing else; empty once the game is over."""
    return _LEGAL[state.variant](state)


def apply_move(state: GameState, move: str) -> GameState:
    """The state after the move; `state` is unchanged. IllegalMove says why when refused."""
    m = parse_str(move) if type(move) is str else parse_canonical(move)
    return _APPLY[state.variant](state, m, None)[0]


def apply_move_revealing(
    state: GameState, move: str, reveal: Callable[[], str | None] | None = None
) -> tuple[GameState, list[str]]:
    """The state after the move and the cards it turned face up, in order.

    `reveal` supplies dealt cards when the stock order is unknown (public folds)."""
    m = parse_str(move) if type(move) is str else parse_canonical(move)
    return _APPLY[state.variant](state, m, reveal)


def is_won(state: GameState) -> bool:
    """All 52 cards are on the foundations."""
    return state.won


def is_over(state: GameState) -> bool:
    """Won, resigned, or no legal move left.

    Dealing from a non-empty stock is always legal (RULES.md, both variants), so while the stock
    has cards no move list is generated: servers call this after every folded event.
    """
    if state.resigned or state.won:
        return True
    return not state.stock and not _LEGAL[state.variant](state)


class HasFoundations(Protocol):
    """A GameState or a PublicView: anything showing the four foundations."""

    @property
    def foundations(self) -> tuple[tuple[str, ...], ...]: ...


def foundation_count(state: HasFoundations) -> int:
    """Cards on the foundations, for a GameState or a PublicView."""
    return sum(len(f) for f in state.foundations)


def resign(state: GameState) -> GameState:
    """The state after the player resigns: no legal moves, over, not won."""
    if state.resigned:
        raise IllegalMove("the player has already resigned")
    if state.won:
        raise IllegalMove("the game is won: nothing to resign")
    return replace(state, resigned=True)
