"""A game's analysis as an event: written once per game (again only by a rebuild), in a stream
of its own in the room's hash tag, so a Redis Cluster keeps it in the room's slot and the
archiver moves it with the room."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from server.kernel.schema import Schema
from shared.solver.analysis import GameAnalysis

ANALYSIS_EVENT_VERSION = 1


def analysis_stream(room: str, player: str) -> str:
    """The stream of one racer's game's analysis, beside its game stream."""
    return f"{{{room}}}:analysis:{player}"


@dataclass(frozen=True, slots=True)
class GameAnalysed:
    """The analysis of ``player``'s game in ``room`` (shared.solver.analysis.GameAnalysis):
    positions up to ``won_until`` won, from ``lost_from`` lost, unknown between; ``line`` wins
    from position ``won_until``. ``solver_version`` and ``max_nodes`` say what produced it."""

    TYPE: ClassVar[str] = "game_analysed"
    at: int
    room: str
    player: str
    variant: str
    solver_version: int
    max_nodes: int
    moves: tuple[str, ...]
    won_until: int
    lost_from: int
    line: tuple[str, ...]
    nodes: int
    searches: int

    @classmethod
    def of(
        cls, analysis: GameAnalysis, *, at: int, room: str, player: str, variant: str
    ) -> GameAnalysed:
        return cls(
            at=at,
            room=room,
            player=player,
            variant=variant,
            solver_version=analysis.version,
            max_nodes=analysis.max_nodes,
            moves=analysis.moves,
            won_until=analysis.won_until,
            lost_from=analysis.lost_from,
            line=analysis.line,
            nodes=analysis.nodes,
            searches=analysis.searches,
        )

    def analysis(self) -> GameAnalysis:
        """The pure analysis back (ValueError if its boundaries are inconsistent)."""
        return GameAnalysis(
            self.moves,
            self.won_until,
            self.lost_from,
            self.line,
            self.nodes,
            self.searches,
            self.max_nodes,
            self.solver_version,
        )


SCHEMA: Schema[GameAnalysed] = Schema(
    "analysis", ANALYSIS_EVENT_VERSION, (GameAnalysed,), sequences=("moves", "line")
)


def encode(event: GameAnalysed) -> dict[str, Any]:
    return SCHEMA.encode(event)


def decode(data: dict[str, Any]) -> GameAnalysed:
    return SCHEMA.decode(data)
