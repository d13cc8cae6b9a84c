"""What a search establishes: the three verdicts, the answer with its line, and the prunings
a test may turn off (each argued from RULES.md where it is applied)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum


class Status(StrEnum):
    """What the search established about a position."""

    WON = "won"  # a winning line was found: Solution.moves
    UNWINNABLE = "unwinnable"  # proved: nothing reachable is a win
    UNKNOWN = "unknown"  # the budget ran out first


class Pruning(Enum):
    """The safe prunings (see shared/solver/__init__.py for why each never loses a win)."""

    PILE_SYMMETRY = "pile_symmetry"
    DEAD_CARDS = "dead_cards"
    RESERVE_SYMMETRY = "reserve_symmetry"
    WASTE_TO_FOUNDATION = "waste_to_foundation"
    FINAL_PASS = "final_pass"
    DEAD_WASTE = "dead_waste"


ALL_PRUNINGS: frozenset[Pruning] = frozenset(Pruning)


@dataclass(frozen=True, slots=True)
class Solution:
    """The solver's answer: status, the winning line when won, and the positions searched."""

    status: Status
    moves: tuple[str, ...]  # canonical moves from the position to a win; () unless won
    nodes: int  # positions expanded (their moves generated)
    max_nodes: int  # the budget it ran under

    @property
    def next_move(self) -> str | None:
        """The first move of the winning line: a hint. None unless won with moves left."""
        return self.moves[0] if self.moves else None
