"""What a race's end says of each racer for the tournament: who abandoned, who timed out."""

from __future__ import annotations

import pytest

from server.accounts.domain.ratings import Change
from server.tournaments.services.scorer import abandoned, with_ratings


@pytest.mark.parametrize(
    ("status", "moves", "berserk", "expected"),
    [
        ("resigned", 0, False, True),  # the grace ran out: nobody was there
        ("resigned", 3, False, False),
        ("timed_out", 0, True, True),  # a berserk clock ran out with no move made
        ("timed_out", 0, False, False),  # the race's time limit leaves nobody out
        ("timed_out", 5, True, False),
        ("won", 0, False, False),
    ],
)
def test_only_a_racer_who_never_moved_and_was_ended_by_the_server_abandoned(
    status: str, moves: int, berserk: bool, expected: bool
) -> None:
    assert abandoned({"status": status, "moves": moves}, berserk=berserk) is expected


def test_each_result_carries_the_rating_the_race_left_the_racer_at() -> None:
    results = [{"account": "ann", "place": 1}, {"account": "bob", "place": 2}]
    changes = [Change("ann", "Ann", 1, 1500, 1569, False)]
    assert with_ratings(results, changes) == [
        {"account": "ann", "place": 1, "rating": 1569},
        {"account": "bob", "place": 2},  # not rated (a guest seat, say): nothing to tell
    ]
    assert with_ratings(results, None) == results  # an unrated race
