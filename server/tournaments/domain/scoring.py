"""A tournament race's points, pure (docs/tournaments.md, "Scoring").

Placement points: 2 for first, 1 for second in a race of 3 or 4, else 0. A streak: after two
first places in a row, a first place counts double, until a race is not won. Berserk: a racer
who halved their own clock earns +1 for a first place made in at least ``BERSERK_MIN_MOVES``
moves (the bonus is not doubled). Performance, the tie-break, is lichess's: the opponents' mean
rating, +400 for a win and -400 for a last place, between them in proportion.
"""

from __future__ import annotations

from dataclasses import dataclass

BERSERK_MIN_MOVES = 20
STREAK_AFTER = 2  # first places in a row before the next ones count double
PERFORMANCE_SWING = 400


@dataclass(frozen=True, slots=True)
class Points:
    """What one race earned a racer, and their run of first places after it."""

    points: int
    doubled: bool
    run: int


def placement_points(place: int, of: int) -> int:
    """2 for first; 1 for second when 3 or 4 raced; otherwise nothing."""
    if place == 1:
        return 2
    if place == 2 and of >= 3:
        return 1
    return 0


def race_points(
    place: int,
    of: int,
    run: int,
    *,
    moves: int,
    berserk: bool,
    streaks: bool,
) -> Points:
    """The points of finishing ``place`` of ``of`` with ``run`` first places in a row before.

    A race of one (the others never sat down) earns nothing: there was nobody to beat."""
    if of < 2:
        return Points(0, False, run)
    won = place == 1
    base = placement_points(place, of)
    doubled = streaks and won and run >= STREAK_AFTER
    bonus = 1 if won and berserk and moves >= BERSERK_MIN_MOVES else 0
    return Points(base * (2 if doubled else 1) + bonus, doubled, run + 1 if won else 0)


def on_fire(run: int, *, streaks: bool) -> bool:
    """Whether the next first place counts double."""
    return streaks and run >= STREAK_AFTER


def race_performance(place: int, of: int, opponents_mean: float) -> float:
    """One race's performance: the opponents' mean rating, +400 for first, -400 for last."""
    if of < 2:
        return opponents_mean
    share = (of - 2 * place + 1) / (of - 1)  # +1 first ... -1 last
    return opponents_mean + PERFORMANCE_SWING * share
