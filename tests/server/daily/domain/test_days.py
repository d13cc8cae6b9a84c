"""The daily challenge's rules: days, the commitment, the standings' order and the streaks."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.daily.domain import attempts
from server.daily.domain import days as daily
from server.daily.domain.attempts import Attempt, Outcome
from shared.protocol import BadField, commitment_ok


def test_days_are_utc() -> None:
    start = daily.day_start_ms(dt.date(2026, 12, 2))
    assert daily.day_of(start) == dt.date(2026, 12, 2)
    assert daily.day_of(start - 1) == dt.date(2026, 12, 1)
    assert daily.day_end_ms(dt.date(2026, 12, 2)) == start + daily.DAY_MS
    assert daily.parse_day("2026-12-02") == dt.date(2026, 12, 2)
    for bad in ("2026-13-01", 20261202, "yesterday"):
        with pytest.raises(BadField):
            daily.parse_day(bad)


@given(st.integers(0, 4_000_000_000_000))
def test_a_time_lies_within_its_day(now: int) -> None:
    day = daily.day_of(now)
    assert daily.day_start_ms(day) <= now < daily.day_end_ms(day)


def test_the_commitment_verifies_against_the_revealed_seed_only_after_the_day() -> None:
    deal = daily.open_deal("swiss", dt.date(2026, 12, 2), "s3cret", "pepper")
    assert commitment_ok(deal.seed, deal.salt, deal.commitment)
    assert not commitment_ok("other", deal.salt, deal.commitment)
    end = daily.day_end_ms(deal.day)
    assert not deal.revealed(end - 1)
    assert deal.revealed(end)


def _a(name: str, outcome: Outcome, elapsed: int, found: int = 0, reached: int = 0) -> Attempt:
    return Attempt(name, name.title(), outcome, elapsed, found, reached, room=f"R{name}")


def test_standings_wins_by_time_then_cards_then_when_reached() -> None:
    rows = attempts.ranked(
        [
            _a("slowwin", Outcome.WON, 300_000, 52, 300_000),
            _a("many", Outcome.OVER, 600_000, 40, 500_000),
            _a("fastwin", Outcome.WON, 200_000, 52, 200_000),
            _a("manyearly", Outcome.RESIGNED, 100_000, 40, 90_000),
            _a("few", Outcome.PLAYING, 10_000, 3, 9_000),
        ]
    )
    assert [a.account for a in rows] == ["fastwin", "slowwin", "manyearly", "many", "few"]


def test_the_room_is_on_a_standings_row_only_once_the_day_is_over() -> None:
    attempt = _a("ann", Outcome.WON, 1000, 52, 1000)
    assert "room" not in attempts.standing_row(attempt, 1, revealed=False)
    assert attempts.standing_row(attempt, 1, revealed=True)["room"] == "Rann"


def test_streaks_count_days_in_a_row_ending_today_or_yesterday() -> None:
    d = dt.date(2026, 12, 10)
    day = dt.timedelta(days=1)
    history = [
        (d - 4 * day, Outcome.WON),
        (d - 3 * day, Outcome.OVER),
        (d - 2 * day, Outcome.WON),
        (d - 1 * day, Outcome.WON),
    ]
    assert daily.streaks(history, d) == daily.Streaks(played=4, won=2)
    assert daily.streaks([*history, (d, Outcome.RESIGNED)], d) == daily.Streaks(5, 0)
    assert daily.streaks(history, d + 2 * day) == daily.Streaks(0, 0)
    assert daily.streaks([], d) == daily.Streaks(0, 0)
