"""Scheduled tournaments, pure: ``--tournament-schedule`` read, and the tournaments due.

The format (docs/tournaments.md, "Schedule"): entries separated by ``;``, each
``EVERY:LENGTH:VARIANTS[:RACE]``: ``EVERY`` is ``hourly``, ``daily`` or a number of minutes;
``LENGTH`` the tournament's length in minutes; ``VARIANTS`` one or more of ``swiss`` and
``quadrennial`` joined by ``,`` (one tournament each); ``RACE`` the races' time limit in
seconds (default 180). ``hourly:30:swiss,quadrennial`` is a 30-minute tournament of each variant
at the start of every hour (UTC). Each is announced ``AHEAD_MS`` before its start at an id
drawn from the slot, so every process announcing it names the same stream: one creation wins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from server.tournaments.domain.events import TournamentCreated
from shared.protocol import VARIANTS

MINUTE_MS = 60_000
AHEAD_MS = 60 * MINUTE_MS  # announced an hour before (or one period, if shorter)
DEFAULT_RACE_MS = 180_000
_EVERY = {"hourly": 60, "daily": 24 * 60}
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"


@dataclass(frozen=True, slots=True)
class Slot:
    """One entry of the schedule, for one variant."""

    every_ms: int
    length_ms: int
    variant: str
    time_limit_ms: int
    label: str  # "Hourly", "Daily", "Every 15 min"


def parse_schedule(text: str) -> list[Slot]:
    """The slots of a schedule; ValueError naming what is wrong."""
    slots = []
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        parts = entry.split(":")
        if len(parts) not in (3, 4):
            raise ValueError(f"{entry!r} is not EVERY:LENGTH:VARIANTS[:RACE]")
        every, length, variants = parts[0].strip().lower(), parts[1], parts[2]
        try:
            minutes = _EVERY[every] if every in _EVERY else int(every)
            length_ms = int(length) * MINUTE_MS
            race_ms = int(parts[3]) * 1000 if len(parts) == 4 else DEFAULT_RACE_MS
        except ValueError:
            raise ValueError(f"{entry!r}: EVERY, LENGTH and RACE are whole numbers") from None
        if minutes < 5 or not 5 * MINUTE_MS <= length_ms <= minutes * MINUTE_MS:
            raise ValueError(f"{entry!r}: every 5 minutes at least, lasting 5 minutes to EVERY")
        if not 10_000 <= race_ms <= length_ms:
            raise ValueError(f"{entry!r}: RACE is 10 s at least and within the length")
        label = every.capitalize() if every in _EVERY else f"Every {minutes} min"
        for variant in (v.strip().lower() for v in variants.split(",")):
            if variant not in VARIANTS:
                raise ValueError(f"{entry!r}: {variant!r} is not a variant")
            slots.append(Slot(minutes * MINUTE_MS, length_ms, variant, race_ms, label))
    return slots


def slot_id(slot: Slot, starts_at: int) -> str:
    """The tournament id of ``slot`` at ``starts_at``: the same on every process."""
    key = f"{slot.every_ms}:{slot.length_ms}:{slot.variant}:{slot.time_limit_ms}:{starts_at}"
    digest = hashlib.sha256(key.encode()).digest()
    return "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest[:10])


def due(slots: Iterable[Slot], now: int) -> list[TournamentCreated]:
    """The scheduled tournaments to announce at ``now``: each slot's next start, if it is
    within ``AHEAD_MS`` (or one period) from now."""
    out = []
    for slot in slots:
        starts_at = -(-now // slot.every_ms) * slot.every_ms  # the next boundary, UTC
        if starts_at - now > min(AHEAD_MS, slot.every_ms):
            continue
        out.append(
            TournamentCreated(
                at=now,
                id=slot_id(slot, starts_at),
                name=f"{slot.label} {slot.variant.capitalize()}",
                variant=slot.variant,
                starts_at=starts_at,
                length_ms=slot.length_ms,
                time_limit_ms=slot.time_limit_ms,
                race_size=2,
                rated=True,
                berserk=True,
                streaks=True,
                creator=None,
                creator_name=None,
            )
        )
    return out
