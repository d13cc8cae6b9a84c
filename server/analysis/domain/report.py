"""What a reader of an analysis is sent: the `analysis` message (docs/protocol.md), pure."""

from __future__ import annotations

from typing import Any

from server.analysis.domain.events import GameAnalysed
from shared import protocol as p


def analysis_message(event: GameAnalysed, *, name: str) -> dict[str, Any]:
    """Every move with the verdicts before and after it, the move that lost a won game (if
    one did) and the line that wins from the last won position."""
    analysis = event.analysis()
    return {
        "type": p.GAME_ANALYSIS,
        "room": event.room,
        "player": event.player,
        "name": name,
        "variant": event.variant,
        "solver_version": event.solver_version,
        "max_nodes": event.max_nodes,
        "nodes": event.nodes,
        "deal": analysis.deal.value,
        "losing_move": analysis.losing_move,
        "won_until": event.won_until,
        "lost_from": event.lost_from,
        "line": list(event.line),
        "moves": [
            {
                "move": review.move,
                "before": review.before.value,
                "after": review.after.value,
                "lost": review.threw_away,
            }
            for review in analysis.reviews()
        ],
    }
