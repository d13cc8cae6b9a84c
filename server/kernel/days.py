"""UTC days: when one starts and ends, and when a daily attempt's day (its room's tag,
``<variant>:<YYYY-MM-DD>``) is over. Pure: the time is an argument."""

from __future__ import annotations

import datetime as dt

DAY_MS = 86_400_000


def day_of(now_ms: int) -> dt.date:
    """The UTC day ``now_ms`` (milliseconds since the epoch) falls in."""
    return dt.datetime.fromtimestamp(now_ms / 1000, tz=dt.UTC).date()


def day_start_ms(day: dt.date) -> int:
    """When ``day`` begins (00:00 UTC), in milliseconds since the epoch."""
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp() * 1000)


def day_end_ms(day: dt.date) -> int:
    """When ``day`` ends and its seed is revealed: the next day's start."""
    return day_start_ms(day) + DAY_MS


def tag_end_ms(tag: str) -> int:
    """When the day a room's daily tag names is over."""
    return day_end_ms(dt.date.fromisoformat(tag.split(":", 1)[1]))
