"""The daily challenge's rules, pure: the UTC day of a time, the day's committed deal, who may
attempt it, the standings and the streaks (docs/ratings.md, "Daily challenge").

One deal per variant per UTC day: its secret seed is drawn when the day is first opened and
committed to (SHA-256 with a salt, as race rooms are, ``shared.protocol.commitment``); it is
revealed once the day is over, so anyone can recompute the deal and check the commitment. Each
account has one attempt a day, claimed as version 0 of the attempt's own stream (atomic on any
store, any process). Time and randomness are arguments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from server.daily.domain.attempts import Outcome
from server.kernel.days import DAY_MS as DAY_MS
from server.kernel.days import day_end_ms as day_end_ms
from server.kernel.days import day_of as day_of
from server.kernel.days import day_start_ms as day_start_ms
from server.kernel.days import tag_end_ms as tag_end_ms
from server.kernel.schema import Schema
from shared.protocol import BadField, commitment

DAILY_EVENT_VERSION = 1


@dataclass(frozen=True, slots=True)
class DailyEvent:
    TYPE: ClassVar[str]
    at: int


@dataclass(frozen=True, slots=True)
class DayOpened(DailyEvent):
    """A variant's day, first asked for: its secret seed and salt (kept on the server) and the
    commitment everyone is shown; version 1 of the day's stream, so one per day."""

    TYPE: ClassVar[str] = "day_opened"
    variant: str
    day: str
    seed: str
    salt: str
    commitment: str


@dataclass(frozen=True, slots=True)
class AttemptClaimed(DailyEvent):
    """An account's one attempt at a day: version 1 of its attempt stream, so a second one,
    from any process, finds the stream taken."""

    TYPE: ClassVar[str] = "attempt_claimed"
    account: str
    name: str
    # Drawn per claim: two claims of one account in the same millisecond differ, so the store
    # cannot take the second for a retry of the first (an append of identical events is one).
    claim: str


@dataclass(frozen=True, slots=True)
class AttemptRoom(DailyEvent):
    """The solo room the attempt is played in."""

    TYPE: ClassVar[str] = "attempt_room"
    room: str


SCHEMA: Schema[DailyEvent] = Schema(
    "daily", DAILY_EVENT_VERSION, (DayOpened, AttemptClaimed, AttemptRoom)
)
encode = SCHEMA.encode
decode = SCHEMA.decode


def parse_day(text: object) -> dt.date:
    """A ``YYYY-MM-DD`` date from a request; BadField otherwise."""
    if not isinstance(text, str):
        raise BadField("field 'date' is a YYYY-MM-DD string", field="date")
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise BadField("field 'date' is a YYYY-MM-DD date", field="date") from None


def daily_stream(variant: str, day: dt.date) -> str:
    """The stream of one variant's day: its opening (commitment) and its reveal."""
    return f"daily:{variant}:{day.isoformat()}"


def attempt_stream(variant: str, day: dt.date, account: str) -> str:
    """One account's attempt at a day: claimed by appending at version 0."""
    return f"daily:{variant}:{day.isoformat()}:{account}"


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """A day's deal as committed: the secret seed stays on the server until ``revealed``."""

    variant: str
    day: dt.date
    seed: str
    salt: str
    commitment: str

    def revealed(self, now_ms: int) -> bool:
        """Whether the day is over, so its seed and every attempt may be shown."""
        return now_ms >= day_end_ms(self.day)


def open_deal(variant: str, day: dt.date, seed: str, salt: str) -> DailyDeal:
    """The day's deal from a freshly drawn secret ``seed`` and ``salt``, with its commitment."""
    return DailyDeal(variant, day, seed, salt, commitment(seed, salt))


def decide_open(variant: str, day: dt.date, *, seed: str, salt: str, now: int) -> DayOpened:
    deal = open_deal(variant, day, seed, salt)
    return DayOpened(now, variant, day.isoformat(), seed, salt, deal.commitment)


def deal_of(opened: DayOpened) -> DailyDeal:
    return DailyDeal(
        opened.variant,
        dt.date.fromisoformat(opened.day),
        opened.seed,
        opened.salt,
        opened.commitment,
    )


def daily_tag(variant: str, day: dt.date) -> str:
    """What a daily attempt's room is marked with (``RoomCreated.daily``)."""
    return f"{variant}:{day.isoformat()}"


def attempts_index(variant: str, day: dt.date) -> str:
    """The index of a day's attempts: account -> its room."""
    return f"daily-attempts.{variant}.{day.isoformat()}"


def history_index(account: str) -> str:
    """An account's daily attempts, any variant: "<day>:<variant>" -> its room (for streaks)."""
    return f"daily-history.{account}"


@dataclass(frozen=True, slots=True)
class Streaks:
    """Days in a row (ending today or yesterday) an account played, and won, a daily."""

    played: int
    won: int


def _run_back(days: set[dt.date], today: dt.date) -> int:
    """Consecutive days in ``days`` ending today, or yesterday if today is not (yet) in it."""
    day = today if today in days else today - dt.timedelta(days=1)
    count = 0
    while day in days:
        count += 1
        day -= dt.timedelta(days=1)
    return count


def streaks(history: Sequence[tuple[dt.date, Outcome]], today: dt.date) -> Streaks:
    """An account's streaks from the days it attempted (any variant) and how each went; a day
    with a win counts as won; a day still being played breaks neither, a lost one breaks the
    winning streak."""
    played = {day for day, _ in history}
    won = {day for day, outcome in history if outcome is Outcome.WON}
    lost_today = today in played and today not in won and (today, Outcome.PLAYING) not in history
    return Streaks(_run_back(played, today), 0 if lost_today else _run_back(won, today))
