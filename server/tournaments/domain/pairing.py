"""Pairing a tournament's waiting players, pure (docs/tournaments.md, "Pairing").

Waiting players (present, free, joined) are taken in rank order (score, then the tie-break,
then rating) and grouped into races of the race size by adjacent rank. A group avoids the
opponents of its members' previous race when another waiting player near in rank can take the
place. A round runs once ``race_size`` of them have waited ``wait_ms`` (lichess's arena: two
players who waited enough), or at once when many wait. The constants scale with the race's
time limit, as lichess scales its wait with the clock; none is paired in the last stretch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_WAIT_MS = 2_000
MAX_WAIT_MS = 20_000
WAIT_SHARE = 15  # the wait is the race's time limit / 15, within the bounds above
CROWD_PER_SEAT = 20  # so many waiting per seat of a race pair at once, whatever they waited
MAX_LAST_STRETCH_MS = 120_000
LOOKAHEAD = 2  # how many ranks further than the race size a group may reach for a new opponent


@dataclass(frozen=True, slots=True)
class Candidate:
    """A waiting player: rank in the standings (1 = first), since when they wait, and who
    they raced last."""

    account: str
    rank: int
    since: int
    last_opponents: frozenset[str] = frozenset()


def wait_ms(time_limit_ms: int) -> int:
    """How long a round waits for more players: a fifteenth of a race, 2 s to 20 s."""
    return max(MIN_WAIT_MS, min(MAX_WAIT_MS, time_limit_ms // WAIT_SHARE))


def last_stretch_ms(time_limit_ms: int) -> int:
    """No race is paired when less than one race's time limit (at most 2 minutes) is left."""
    return min(time_limit_ms, MAX_LAST_STRETCH_MS)


def round_due(waiting: Sequence[Candidate], race_size: int, now: int, wait: int) -> bool:
    """Whether a pairing round runs now: enough waited long enough, or a crowd waits."""
    if len(waiting) < 2:
        return False
    if len(waiting) >= CROWD_PER_SEAT * race_size:
        return True
    if sum(1 for c in waiting if now - c.since >= wait) >= race_size:
        return True
    # Fewer than a race's worth in all: once all waited twice as long, a smaller race.
    return len(waiting) < race_size and _all_waited(waiting, now, wait)


def _all_waited(waiting: Sequence[Candidate], now: int, wait: int) -> bool:
    return all(now - c.since >= 2 * wait for c in waiting)


def pair(
    waiting: Sequence[Candidate], race_size: int, now: int, wait: int
) -> list[tuple[str, ...]]:
    """The races of one round, best ranked first. Left over (fewer than a race) wait on, unless
    every one of them waited twice the wait: then they race together if two or more."""
    rest = sorted(waiting, key=lambda c: (c.rank, c.account))
    groups: list[tuple[str, ...]] = []
    while len(rest) >= race_size:
        group = [rest.pop(0)]
        while len(group) < race_size:
            reach = rest[: race_size - len(group) + LOOKAHEAD]
            fresh = [c for c in reach if not _met(c, group)]
            chosen = fresh[0] if fresh else rest[0]
            rest.remove(chosen)
            group.append(chosen)
        groups.append(tuple(c.account for c in group))
    if len(rest) >= 2 and _all_waited(rest, now, wait):
        groups.append(tuple(c.account for c in rest))
    return groups


def _met(candidate: Candidate, group: Sequence[Candidate]) -> bool:
    """Whether ``candidate`` raced anyone of ``group`` in their previous race."""
    return any(
        candidate.account in other.last_opponents or other.account in candidate.last_opponents
        for other in group
    )
