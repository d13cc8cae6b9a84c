"""Progress and ranking: the one progress rule and DESIGN.md's order; the commitment."""

from __future__ import annotations

import hashlib

from server.race.domain.progress import Entrant, PlayerStatus, Progress, ranking
from shared.protocol import commitment


def test_a_game_is_done_once_won_over_resigned_or_timed_out() -> None:
    done = {status for status in PlayerStatus if status.done}
    assert done == {
        PlayerStatus.WON,
        PlayerStatus.OVER,
        PlayerStatus.RESIGNED,
        PlayerStatus.TIMED_OUT,
    }


def test_progress_tracks_when_the_foundation_count_changed() -> None:
    playing = PlayerStatus.PLAYING
    p = Progress.started(100)
    p = p.after(at=110, status=playing, foundation=0, moved=True)
    assert (p.moves, p.foundation, p.reached_at) == (1, 0, 100)
    p = p.after(at=120, status=playing, foundation=1, moved=True)
    assert (p.moves, p.foundation, p.reached_at, p.finished_at) == (2, 1, 120, None)
    p = p.after(at=130, status=PlayerStatus.OVER, foundation=1, moved=True)
    p = p.after(at=140, status=PlayerStatus.RESIGNED, foundation=1, moved=False)
    assert p.status is PlayerStatus.RESIGNED
    assert (p.moves, p.reached_at, p.finished_at) == (3, 120, 130)  # done since it was over
    assert p.status.done


def entrant(name: str, order: int, **progress: object) -> Entrant:
    return Entrant(name, name, order, Progress(**progress))  # type: ignore[arg-type]


def test_ranking_winners_by_time_then_cards_then_when_reached() -> None:
    entrants = [
        entrant("slow_winner", 0, status=PlayerStatus.WON, foundation=52, finished_at=500),
        entrant("many_cards", 1, status=PlayerStatus.PLAYING, foundation=30, reached_at=50),
        entrant("fast_winner", 2, status=PlayerStatus.WON, foundation=52, finished_at=400),
        entrant("late_same", 3, status=PlayerStatus.RESIGNED, foundation=10, reached_at=90),
        entrant("early_same", 4, status=PlayerStatus.OVER, foundation=10, reached_at=80),
        entrant("tie_second", 6, status=PlayerStatus.WAITING, foundation=0, reached_at=None),
        entrant("tie_first", 5, status=PlayerStatus.WAITING, foundation=0, reached_at=None),
    ]
    ranked = ranking(entrants)
    assert [r["player"] for r in ranked] == [
        "fast_winner",
        "slow_winner",
        "many_cards",
        "early_same",
        "late_same",
        "tie_first",
        "tie_second",
    ]
    assert [r["place"] for r in ranked] == list(range(1, 8))
    assert ranked[0]["status"] == "won"


def test_commitment_is_sha256_of_seed_colon_salt() -> None:
    assert commitment("42", "ab") == hashlib.sha256(b"42:ab").hexdigest()
