"""The matchmaking rules: the widening range, acceptable groups, and the groups formed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.matchmaking.domain import queues as mm
from server.matchmaking.domain.queues import Waiting
from shared.protocol import BadField


def test_the_range_widens_with_waiting_as_documented() -> None:
    assert mm.allowed_gap(0) == 100
    assert mm.allowed_gap(4_999) == 100
    assert mm.allowed_gap(5_000) == 150
    assert mm.allowed_gap(12_000) == 200
    assert mm.allowed_gap(30_000) == 400
    assert mm.allowed_gap(59_999) == 400
    assert mm.allowed_gap(60_000) == mm.UNLIMITED
    assert mm.range_text(5_000) == "±150"
    assert mm.range_text(61_000) == "any"


@given(st.integers(0, 200_000), st.integers(0, 200_000))
def test_the_range_never_narrows(a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert mm.allowed_gap(low) <= mm.allowed_gap(high)


def test_two_close_players_are_paired_at_once() -> None:
    waiting = [Waiting("a", 1500, 0), Waiting("b", 1580, 10)]
    assert mm.form_groups(waiting, 2, 20) == [("a", "b")]


def test_far_apart_players_wait_until_their_ranges_meet() -> None:
    waiting = [Waiting("a", 1500, 0), Waiting("b", 1700, 0)]
    assert mm.form_groups(waiting, 2, 1_000) == []
    assert mm.form_groups(waiting, 2, 10_000) == [("a", "b")]


def test_the_newcomer_range_limits_the_group_too() -> None:
    """Both must accept: a player who has just queued is not given a far opponent."""
    waiting = [Waiting("old", 1500, 0), Waiting("new", 1800, 39_000)]
    assert mm.form_groups(waiting, 2, 40_000) == []
    assert mm.form_groups(waiting, 2, 58_999) == []  # new: ±250 until 20 s
    assert mm.form_groups(waiting, 2, 59_000) == [("old", "new")]


def test_the_longest_waiting_is_served_first_with_the_closest() -> None:
    waiting = [
        Waiting("x", 1500, 100),
        Waiting("y", 1520, 200),
        Waiting("first", 1510, 0),
        Waiting("z", 1900, 0),
    ]
    assert mm.form_groups(waiting, 2, 300) == [("first", "x")]  # as close as y, and waiting longer


def test_groups_of_four() -> None:
    waiting = [Waiting(f"p{i}", 1500 + 10 * i, i) for i in range(9)]
    groups = mm.form_groups(waiting, 4, 100)
    assert len(groups) == 2
    assert all(len(g) == 4 for g in groups)


def test_guests_all_rated_zero_form_in_order_of_arrival() -> None:
    waiting = [Waiting(f"g{i}", 0, i) for i in range(5)]
    assert mm.form_groups(waiting, 2, 10) == [("g0", "g1"), ("g2", "g3")]


def test_queue_key_checks_the_request() -> None:
    assert mm.queue_key("swiss", 3, rated=True).name == "mm:swiss:3:rated"
    assert mm.queue_key("quadrennial", 2, rated=False).name == "mm:quadrennial:2:guests"
    for variant, players in (("poker", 2), ("swiss", 1), ("swiss", 5), ("swiss", True)):
        with pytest.raises(BadField):
            mm.queue_key(variant, players, rated=True)


players = st.lists(
    st.builds(
        Waiting,
        st.text("abcdefgh", min_size=1, max_size=3),
        st.integers(800, 2400),
        st.integers(0, 90_000),
    ),
    max_size=30,
    unique_by=lambda w: w.member,
)


@given(players, st.integers(2, 4), st.integers(0, 30_000))
def test_formed_groups_are_disjoint_full_and_acceptable(
    waiting: list[Waiting], size: int, later: int
) -> None:
    now = max((w.joined_ms for w in waiting), default=0) + later
    groups = mm.form_groups(waiting, size, now)
    seen = [m for g in groups for m in g]
    assert len(seen) == len(set(seen))
    by_member = {w.member: w for w in waiting}
    for group in groups:
        assert len(group) == size
        members = [by_member[m] for m in group]
        spread = max(w.rating for w in members) - min(w.rating for w in members)
        assert all(spread <= mm.allowed_gap(now - w.joined_ms) for w in members)


def test_one_account_queued_twice_never_races_against_itself() -> None:
    """Two connections of one account in a rated queue: each may be matched, never together
    (a race against yourself would rate you against yourself)."""
    waiting = [Waiting("s1", 1500, 0, "acct-a"), Waiting("s2", 1500, 0, "acct-a")]
    assert mm.form_groups(waiting, 2, 120_000) == []
    waiting.append(Waiting("s3", 1520, 5, "acct-b"))
    groups = mm.form_groups(waiting, 2, 120_000)
    assert groups == [("s1", "s3")]


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=1200, max_value=1800),
            st.integers(min_value=0, max_value=70_000),
            st.sampled_from(["a", "b", "c", None]),
        ),
        max_size=30,
    ),
    st.integers(min_value=2, max_value=4),
)
def test_no_group_holds_an_account_twice(
    rows: list[tuple[int, int, str | None]], players: int
) -> None:
    waiting = [Waiting(f"s{i}", r, j, a) for i, (r, j, a) in enumerate(rows)]
    account = {w.member: w.account for w in waiting}
    for group in mm.form_groups(waiting, players, 80_000):
        accounts = [account[m] for m in group if account[m] is not None]
        assert len(accounts) == len(set(accounts))
