"""A player's accuracy, from the analyses of their recent games: the share of their moves from
a won position that kept it won (on settled positions: a move whose result the analysis did
not settle counts neither way), and the deals they lost from a won position. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from server.analysis.domain.events import GameAnalysed

RECENT_GAMES = 50  # analysed games per account a profile's accuracy is taken over


def accuracy_index(account: str) -> str:
    """The index of an account's analysed games: ``<room>:<player>`` -> when the game may be
    shown (its analysis is deck information, held back as the game is), value its score."""
    return f"analysed.{account}"


@dataclass(frozen=True, slots=True)
class GameScore:
    """What one analysed game adds to its player's accuracy."""

    variant: str
    kept: int  # moves from a won position to a won one
    judged: int  # moves from a won position to a settled one
    lost_won: bool  # the game threw a won position away

    @classmethod
    def of(cls, event: GameAnalysed) -> GameScore:
        # Positions up to won_until are won: the moves out of them before it kept the win,
        # the one out of it (if the next position is lost) threw it away.
        analysis = event.analysis()
        kept = max(analysis.won_until, 0)
        lost = analysis.losing_move is not None
        return cls(event.variant, kept, kept + int(lost), lost)

    def wire(self) -> dict[str, Any]:
        return {"variant": self.variant, "kept": self.kept, "judged": self.judged,
                "lost_won": self.lost_won}  # fmt: skip

    @classmethod
    def read(cls, data: dict[str, Any]) -> GameScore:
        return cls(str(data["variant"]), int(data["kept"]), int(data["judged"]),
                   bool(data["lost_won"]))  # fmt: skip


def accuracy(scores: Iterable[GameScore]) -> list[dict[str, Any]]:
    """Per variant (those with a judged move): games, moves judged, moves that kept a won
    position won, their share, and the deals lost from a won position."""
    rows: dict[str, dict[str, Any]] = {}
    for score in scores:
        if not score.judged:
            continue
        row = rows.setdefault(
            score.variant,
            {"variant": score.variant, "games": 0, "moves": 0, "kept": 0, "lost_won": 0},
        )
        row["games"] += 1
        row["moves"] += score.judged
        row["kept"] += score.kept
        row["lost_won"] += score.lost_won
    for row in rows.values():
        row["share"] = round(row["kept"] / row["moves"], 4)
    return [rows[v] for v in sorted(rows)]
