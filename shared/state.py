"""The game state: one frozen value per position, built of tuples so a move copies little."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _Derived:
    """Room for what the rules engine derives from a position and keeps with it, so the next
    position can update it instead of recomputing it. Not a field: equality, hashing, repr,
    pickling and replace see only the fields, and a rebuilt position starts without it."""

    __slots__ = ("_movable",)

    # Swiss: every card that may be moved, and from where (shared.swiss.movable_cards); None
    # when not worked out yet. Set only by shared.swiss, from the fields, and never changed
    # once set: the next position gets its own copy.
    _movable: dict[str, int] | None


@dataclass(frozen=True, slots=True, init=False)
class GameState(_Derived):
    """A position of either variant. Piles are tuples bottom to top; foundations in suit
    order C D H S. A stock entry is None only in a position rebuilt from public information,
    where the stock order is unknown and each dealt card comes from an event's "revealed".
    """

    variant: str
    tableau: tuple[tuple[str, ...], ...]  # Swiss t1..t9; () for Quadrennial
    reserve: tuple[str | None, ...]  # Quadrennial r1..r8; () for Swiss
    stock: tuple[str | None, ...]  # bottom to top: the next card dealt is stock[-1]
    waste: tuple[str, ...]
    foundations: tuple[tuple[str, ...], ...]
    redeals_left: int
    moves_made: int
    resigned: bool = False

    def __init__(
        self,
        variant: str,
        tableau: tuple[tuple[str, ...], ...],
        reserve: tuple[str | None, ...],
        stock: tuple[str | None, ...],
        waste: tuple[str, ...],
        foundations: tuple[tuple[str, ...], ...],
        redeals_left: int,
        moves_made: int,
        resigned: bool = False,
        _movable: dict[str, int] | None = None,
    ) -> None:
        # The generated frozen __init__ looks each field up by name through object.__setattr__
        # (1 µs a state); the slots' own setters do the same in half that, once per move.
        # _movable is the rules engine's only (see _Derived); anyone else leaves it out.
        _SET_VARIANT(self, variant)
        _SET_TABLEAU(self, tableau)
        _SET_RESERVE(self, reserve)
        _SET_STOCK(self, stock)
        _SET_WASTE(self, waste)
        _SET_FOUNDATIONS(self, foundations)
        _SET_REDEALS_LEFT(self, redeals_left)
        _SET_MOVES_MADE(self, moves_made)
        _SET_RESIGNED(self, resigned)
        _SET_MOVABLE(self, _movable)

    def __setstate__(self, state: list[Any]) -> None:
        # The dataclass's own, for unpickling and copying, which would leave _movable unset.
        for f, value in zip(dataclasses.fields(self), state, strict=True):
            object.__setattr__(self, f.name, value)
        _SET_MOVABLE(self, None)

    @property
    def foundation_count(self) -> int:
        """Cards on the foundations."""
        f = self.foundations
        return len(f[0]) + len(f[1]) + len(f[2]) + len(f[3])

    @property
    def won(self) -> bool:
        """All 52 cards on the foundations."""
        return self.foundation_count == 52


def slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The __set__ of a slots class's field: it writes the slot directly, past the frozen
    dataclass's __setattr__, for the class's own __init__ only."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


_SET_VARIANT = slot_setter(GameState, "variant")
_SET_TABLEAU = slot_setter(GameState, "tableau")
_SET_RESERVE = slot_setter(GameState, "reserve")
_SET_STOCK = slot_setter(GameState, "stock")
_SET_WASTE = slot_setter(GameState, "waste")
_SET_FOUNDATIONS = slot_setter(GameState, "foundations")
_SET_REDEALS_LEFT = slot_setter(GameState, "redeals_left")
_SET_MOVES_MADE = slot_setter(GameState, "moves_made")
_SET_RESIGNED = slot_setter(GameState, "resigned")
_SET_MOVABLE = slot_setter(_Derived, "_movable")

EMPTY_FOUNDATIONS: tuple[tuple[str, ...], ...] = ((), (), (), ())
