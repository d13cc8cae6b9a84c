"""A tournament race's points, streaks, berserk and performance, by tables of cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournaments.domain.scoring import (
    Points,
    on_fire,
    placement_points,
    race_performance,
    race_points,
)


@pytest.mark.parametrize(
    ("place", "of", "points"),
    [
        (1, 2, 2),
        (2, 2, 0),
        (1, 3, 2),
        (2, 3, 1),
        (3, 3, 0),
        (1, 4, 2),
        (2, 4, 1),
        (3, 4, 0),
        (4, 4, 0),
    ],
)
def test_placement_points(place: int, of: int, points: int) -> None:
    assert placement_points(place, of) == points


@pytest.mark.parametrize(
    ("place", "of", "run", "moves", "berserk", "streaks", "expected"),
    [
        (1, 2, 0, 30, False, True, Points(2, False, 1)),  # a first win
        (1, 2, 1, 30, False, True, Points(2, False, 2)),  # the second in a row: not yet doubled
        (1, 2, 2, 30, False, True, Points(4, True, 3)),  # the third: on fire, doubled
        (1, 2, 5, 30, False, True, Points(4, True, 6)),
        (2, 2, 3, 30, False, True, Points(0, False, 0)),  # not won: the streak ends
        (2, 3, 3, 30, False, True, Points(1, False, 0)),  # a second place is not doubled
        (1, 2, 2, 30, False, False, Points(2, False, 3)),  # streaks off: never doubled
        (1, 2, 0, 20, True, True, Points(3, False, 1)),  # berserk win with 20 moves: +1
        (1, 2, 0, 19, True, True, Points(2, False, 1)),  # too few moves: no bonus
        (1, 2, 2, 25, True, True, Points(5, True, 3)),  # doubled, the bonus is not
        (2, 2, 0, 40, True, True, Points(0, False, 0)),  # berserk and lost: nothing
        (1, 1, 4, 40, True, True, Points(0, False, 4)),  # alone in the race: nothing, run kept
    ],
)
def test_race_points(
    place: int, of: int, run: int, moves: int, berserk: bool, streaks: bool, expected: Points
) -> None:
    assert race_points(place, of, run, moves=moves, berserk=berserk, streaks=streaks) == expected


def test_fire_after_two_wins_in_a_row() -> None:
    assert [on_fire(run, streaks=True) for run in range(4)] == [False, False, True, True]
    assert not on_fire(5, streaks=False)


@pytest.mark.parametrize(
    ("place", "of", "performance"),
    [(1, 2, 1900), (2, 2, 1100), (1, 3, 1900), (2, 3, 1500), (3, 3, 1100), (2, 4, 1500 + 400 / 3)],
)
def test_performance_is_the_opponents_mean_plus_or_minus_400(
    place: int, of: int, performance: float
) -> None:
    assert race_performance(place, of, 1500) == pytest.approx(performance)


@settings(deadline=None)
@given(
    st.integers(2, 4).flatmap(lambda of: st.tuples(st.integers(1, of), st.just(of))),
    st.integers(0, 10),
    st.integers(0, 200),
    st.booleans(),
    st.booleans(),
)
def test_points_are_bounded_and_only_a_win_keeps_the_run(
    place_of: tuple[int, int], run: int, moves: int, berserk: bool, streaks: bool
) -> None:
    place, of = place_of
    got = race_points(place, of, run, moves=moves, berserk=berserk, streaks=streaks)
    assert 0 <= got.points <= 5
    assert got.run == (run + 1 if place == 1 else 0)
    assert got.points >= placement_points(place, of)
