"""The schedule's format and the tournaments it announces."""

from __future__ import annotations

import pytest

from server.tournaments.domain.schedule import MINUTE_MS, Slot, due, parse_schedule, slot_id

HOUR = 60 * MINUTE_MS


def test_an_hourly_entry_gives_one_slot_per_variant() -> None:
    assert parse_schedule("hourly:30:swiss,quadrennial") == [
        Slot(HOUR, 30 * MINUTE_MS, "swiss", 180_000, "Hourly"),
        Slot(HOUR, 30 * MINUTE_MS, "quadrennial", 180_000, "Hourly"),
    ]
    (slot,) = parse_schedule(" 15:10:swiss:60 ; ")
    assert (slot.every_ms, slot.length_ms, slot.time_limit_ms, slot.label) == (
        15 * MINUTE_MS,
        10 * MINUTE_MS,
        60_000,
        "Every 15 min",
    )
    assert parse_schedule("") == []


@pytest.mark.parametrize(
    "text",
    [
        "hourly:30",
        "weekly:30:swiss",
        "hourly:90:swiss",
        "hourly:4:swiss",
        "3:3:swiss",
        "hourly:30:poker",
        "hourly:30:swiss:5",
        "hourly:x:swiss",
    ],
)
def test_bad_entries_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=text.split(":")[0][:3]):
        parse_schedule(text)


def test_the_next_start_is_announced_an_hour_ahead_with_the_same_id_everywhere() -> None:
    slots = parse_schedule("hourly:30:swiss;daily:60:quadrennial")
    now = 10 * 24 * HOUR + 5 * MINUTE_MS  # 00:05 on some day
    (hourly,) = due(slots, now)  # the daily one is 23 h 55 min away
    assert hourly.starts_at == 10 * 24 * HOUR + HOUR
    assert hourly.name == "Hourly Swiss"
    assert hourly.creator is None
    assert hourly.id == slot_id(slots[0], hourly.starts_at) == due(slots, now + 1)[0].id
    assert len(hourly.id) == 10
    late = due(slots, 11 * 24 * HOUR - 30 * MINUTE_MS)
    assert {t.variant for t in late} == {"swiss", "quadrennial"}
