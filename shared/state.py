"""The game state: one frozen value per position, built of tuples so a move copies little."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GameState:
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

    @property
    def foundation_count(self) -> int:
        """Cards on the foundations."""
        f = self.foundations
        return len(f[0]) + len(f[1]) + len(f[2]) + len(f[3])

    @property
    def won(self) -> bool:
        """All 52 cards on the foundations."""
        return self.foundation_count == 52


EMPTY_FOUNDATIONS: tuple[tuple[str, ...], ...] = ((), (), (), ())
