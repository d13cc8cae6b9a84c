"""The pure race rules: the lifecycle transition table, progress, ranking and the commitment."""

from __future__ import annotations

import hashlib
import itertools

import pytest

from server.errors import WrongStatus
from server.race import (
    TRANSITIONS,
    Entrant,
    PlayerStatus,
    Progress,
    RoomStatus,
    Trigger,
    can,
    next_status,
    ranking,
)
from shared.protocol import commitment


def test_the_happy_path_of_a_room() -> None:
    status = RoomStatus.LOBBY
    for trigger in (Trigger.START, Trigger.GO, Trigger.ALL_DONE):
        status = next_status(status, trigger)
    assert status is RoomStatus.FINISHED


def test_every_pair_outside_the_table_is_refused() -> None:
    for status, trigger in itertools.product(RoomStatus, Trigger):
        if (status, trigger) in TRANSITIONS:
            assert can(status, trigger)
            continue
        assert not can(status, trigger)
        with pytest.raises(WrongStatus) as info:
            next_status(status, trigger)
        assert info.value.code == "wrong_status"


def test_finished_is_terminal_and_time_up_also_finishes() -> None:
    assert not any(status is RoomStatus.FINISHED for status, _ in TRANSITIONS)
    assert next_status(RoomStatus.RACING, Trigger.TIME_UP) is RoomStatus.FINISHED
    assert next_status(RoomStatus.COUNTDOWN, Trigger.EMPTIED) is RoomStatus.LOBBY


def test_a_game_is_done_once_won_over_or_resigned() -> None:
    done = {status for status in PlayerStatus if status.done}
    assert done == {PlayerStatus.WON, PlayerStatus.OVER, PlayerStatus.RESIGNED}


def test_progress_tracks_when_the_foundation_count_changed() -> None:
    p = Progress(status=PlayerStatus.PLAYING, reached_at=100)
    p = p.after(at=110, foundation=0, moved=True, won=False, over=False, resigned=False)
    assert (p.moves, p.foundation, p.reached_at) == (1, 0, 100)
    p = p.after(at=120, foundation=1, moved=True, won=False, over=False, resigned=False)
    assert (p.moves, p.foundation, p.reached_at, p.finished_at) == (2, 1, 120, None)
    p = p.after(at=130, foundation=1, moved=False, won=False, over=True, resigned=True)
    assert p.status is PlayerStatus.RESIGNED
    assert (p.moves, p.reached_at, p.finished_at) == (2, 120, 130)
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
