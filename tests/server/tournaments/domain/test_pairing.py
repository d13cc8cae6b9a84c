"""Pairing by adjacent rank, avoiding the last opponents, the wait and the last stretch."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournaments.domain.pairing import (
    CROWD_PER_SEAT,
    Candidate,
    last_stretch_ms,
    pair,
    round_due,
    wait_ms,
)

WAIT = 2_000


def c(account: str, rank: int, since: int = 0, last: str = "") -> Candidate:
    return Candidate(account, rank, since, frozenset(last.split()) if last else frozenset())


@pytest.mark.parametrize(
    ("limit", "wait", "stretch"),
    [
        (10_000, 2_000, 10_000),
        (30_000, 2_000, 30_000),
        (180_000, 12_000, 120_000),
        (600_000, 20_000, 120_000),
        (1_800_000, 20_000, 120_000),
    ],
)
def test_the_constants_scale_with_the_race_time_limit(limit: int, wait: int, stretch: int) -> None:
    assert wait_ms(limit) == wait
    assert last_stretch_ms(limit) == stretch


@pytest.mark.parametrize(
    ("waiting", "size", "now", "due"),
    [
        ([], 2, 10_000, False),
        ([c("a", 1)], 2, 10_000, False),  # one alone never races
        ([c("a", 1), c("b", 2, since=9_000)], 2, 10_000, False),  # b just came
        ([c("a", 1), c("b", 2)], 2, 10_000, True),  # two waited enough
        ([c("a", 1), c("b", 2), c("c", 3)], 4, 3_000, False),  # short of a race, not 2x waited
        ([c("a", 1), c("b", 2), c("c", 3)], 4, 4_000, True),  # all waited twice: a smaller race
        ([c(str(i), i, since=9_999) for i in range(2 * CROWD_PER_SEAT)], 2, 10_000, True),  # crowd
    ],
)
def test_when_a_round_is_due(waiting: list[Candidate], size: int, now: int, due: bool) -> None:
    assert round_due(waiting, size, now, WAIT) is due


@pytest.mark.parametrize(
    ("waiting", "size", "now", "groups"),
    [
        # adjacent ranks, best first
        ([c("d", 4), c("a", 1), c("c", 3), c("b", 2)], 2, 0, [("a", "b"), ("c", "d")]),
        # odd count: the last ranked waits
        ([c("a", 1), c("b", 2), c("c", 3)], 2, 0, [("a", "b")]),
        # b raced a last time and others wait: a takes c, b takes d
        (
            [c("a", 1, last="b"), c("b", 2, last="a"), c("c", 3), c("d", 4)],
            2,
            0,
            [("a", "c"), ("b", "d")],
        ),
        # nobody else: a rematch rather than no race
        ([c("a", 1, last="b"), c("b", 2, last="a")], 2, 0, [("a", "b")]),
        # races of three by rank
        ([c(x, i) for i, x in enumerate("abcdefg", 1)], 3, 0, [("a", "b", "c"), ("d", "e", "f")]),
        # leftovers who waited twice the wait race together
        (
            [c(x, i) for i, x in enumerate("abcdef", 1)],
            4,
            2 * WAIT,
            [("a", "b", "c", "d"), ("e", "f")],
        ),
    ],
)
def test_pairing(
    waiting: list[Candidate], size: int, now: int, groups: list[tuple[str, ...]]
) -> None:
    assert pair(waiting, size, now, WAIT) == groups


@settings(deadline=None)
@given(
    st.integers(2, 4),
    st.lists(st.integers(1, 50), unique=True, max_size=30),
    st.integers(0, 10_000),
)
def test_everyone_is_in_at_most_one_race_of_the_right_size(
    size: int, ranks: list[int], now: int
) -> None:
    waiting = [c(f"p{r}", r, since=r * 100, last=f"p{r + 1}") for r in ranks]
    groups = pair(waiting, size, now, WAIT)
    placed = [a for g in groups for a in g]
    assert len(placed) == len(set(placed))
    assert all(2 <= len(g) <= size for g in groups)
    assert sum(len(g) == size for g in groups) == len(ranks) // size
    assert len(ranks) - len(placed) < size
