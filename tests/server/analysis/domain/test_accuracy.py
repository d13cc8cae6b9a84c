"""Accuracy from analyses (server/analysis/domain/accuracy.py): a move from a won position
counts when the analysis settled where it led; kept when that is won too."""

from __future__ import annotations

from server.analysis.domain.accuracy import GameScore, accuracy
from server.analysis.domain.events import GameAnalysed
from shared.solver.analysis import GameAnalysis


def analysed(moves: int, won_until: int, lost_from: int, variant: str = "swiss") -> GameAnalysed:
    analysis = GameAnalysis(("d",) * moves, won_until, lost_from, (), 0, 0, 0)
    return GameAnalysed.of(analysis, at=1, room="r", player="p", variant=variant)


def test_a_game_lost_from_a_won_position() -> None:
    """Won up to position 4, lost from 5: four moves kept it, the fifth threw it away."""
    assert GameScore.of(analysed(9, 4, 5)) == GameScore("swiss", 4, 5, True)


def test_a_game_won_to_the_end_kept_every_move() -> None:
    assert GameScore.of(analysed(7, 7, 8)) == GameScore("swiss", 7, 7, False)


def test_unsettled_moves_count_neither_way() -> None:
    """Won up to 3, unknown from 4 on: three moves kept it; the one into the unknown is not
    judged, nor any after it; a deal lost from the start judges nothing."""
    assert GameScore.of(analysed(9, 3, 10)) == GameScore("swiss", 3, 3, False)
    assert GameScore.of(analysed(9, -1, 0)) == GameScore("swiss", 0, 0, False)


def test_accuracy_per_variant_over_the_games_with_a_judged_move() -> None:
    scores = [
        GameScore.of(analysed(9, 4, 5)),
        GameScore.of(analysed(7, 7, 8)),
        GameScore.of(analysed(9, -1, 0)),
        GameScore.of(analysed(5, 2, 3, variant="quadrennial")),
    ]
    assert accuracy(scores) == [
        {"variant": "quadrennial", "games": 1, "moves": 3, "kept": 2, "lost_won": 1,
         "share": 0.6667},
        {"variant": "swiss", "games": 2, "moves": 12, "kept": 11, "lost_won": 1,
         "share": 0.9167},
    ]  # fmt: skip
    assert [GameScore.read(s.wire()) for s in scores] == scores
