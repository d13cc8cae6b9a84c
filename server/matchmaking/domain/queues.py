"""Matchmaking rules, pure: which queued players may race together, and the groups to form.

A queue is one (variant, players, rated) triple. Each waiting player accepts opponents within
``allowed_gap`` of their own rating, a range that widens the longer they wait (docs/ratings.md,
"Quick race"): a group is acceptable when its spread (highest rating minus lowest) is within
every member's range. Guests' queues are unrated: everyone has rating 0, any group will do.
The shell reads the queue, calls ``form_groups`` and claims each group atomically in the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.accounts.domain.ratings import VARIANTS
from shared.protocol import BadField

MIN_PLAYERS = 2
MAX_PLAYERS = 4
BASE_GAP = 100
"""A player who has just queued accepts opponents rated within ±100."""
GAP_STEP = 50
GAP_EVERY_MS = 5_000
"""... and 50 more every 5 seconds of waiting ..."""
MAX_GAP = 400
"""... up to ±400 (after 30 s) ..."""
ANYONE_AFTER_MS = 60_000
"""... and anyone in the queue after a minute, so nobody waits for ever in a thin queue."""
UNLIMITED = 1_000_000


@dataclass(frozen=True, slots=True)
class QueueKey:
    """Which queue: players of one variant, waiting for a race of ``players``, rated or not."""

    variant: str
    players: int
    rated: bool

    @property
    def name(self) -> str:
        """The store's name of the queue (one hash tag on a Cluster: docs/storage.md)."""
        return f"mm:{self.variant}:{self.players}:{'rated' if self.rated else 'guests'}"


@dataclass(frozen=True, slots=True)
class Waiting:
    """A queued player: who, their rating (0 in a guests' queue), when they queued, and the
    account they are logged in as (None for a guest)."""

    member: str
    rating: int
    joined_ms: int
    account: str | None = None


def queue_key(variant: object, players: object, *, rated: bool) -> QueueKey:
    """The queue a `quick` request asks for; BadField for an unknown variant or size."""
    if variant not in VARIANTS:
        raise BadField(f"field 'variant' is one of {', '.join(VARIANTS)}", field="variant")
    if not isinstance(players, int) or isinstance(players, bool):
        raise BadField("field 'players' is an integer", field="players")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise BadField(f"field 'players' is from {MIN_PLAYERS} to {MAX_PLAYERS}", field="players")
    assert isinstance(variant, str)
    return QueueKey(variant, players, rated)


def allowed_gap(waited_ms: int) -> int:
    """How far (±) from their own rating a player accepts opponents after ``waited_ms``."""
    if waited_ms >= ANYONE_AFTER_MS:
        return UNLIMITED
    steps = max(0, waited_ms) // GAP_EVERY_MS
    return min(BASE_GAP + GAP_STEP * steps, MAX_GAP)


def acceptable(group: Sequence[Waiting], now_ms: int) -> bool:
    """Whether every member accepts every other: the spread is within each member's range, and
    no account is in it twice (one account queued from two connections must not race, and be
    rated, against itself)."""
    if not group:
        return False
    accounts = [w.account for w in group if w.account is not None]
    if len(set(accounts)) < len(accounts):
        return False
    ratings = [w.rating for w in group]
    spread = max(ratings) - min(ratings)
    return all(spread <= allowed_gap(now_ms - w.joined_ms) for w in group)


def _nearness(w: Waiting, anchor: Waiting) -> tuple[int, int, str]:
    return (abs(w.rating - anchor.rating), w.joined_ms, w.member)


def form_groups(waiting: Sequence[Waiting], players: int, now_ms: int) -> list[tuple[str, ...]]:
    """Disjoint acceptable groups of ``players``, the longest-waiting served first: each in turn
    is grouped with the closest-rated others who keep the group acceptable.

    The candidates are walked outward from the anchor in rating order, nearest first, and the
    walk stops past the anchor's own range: O(n times those within range), not a sort per anchor (a
    queue of 1,000 took seconds a pass, bench.matchmaking)."""
    order = sorted(waiting, key=lambda w: (w.joined_ms, w.member))
    by_rating = sorted(waiting, key=lambda w: (w.rating, w.joined_ms, w.member))
    position = {w.member: i for i, w in enumerate(by_rating)}
    taken: set[str] = set()
    groups: list[tuple[str, ...]] = []
    for anchor in order:
        if anchor.member in taken:
            continue
        reach = allowed_gap(now_ms - anchor.joined_ms)
        group = [anchor]
        low, high = position[anchor.member] - 1, position[anchor.member] + 1
        while len(group) < players:
            while low >= 0 and by_rating[low].member in taken:
                low -= 1
            while high < len(by_rating) and by_rating[high].member in taken:
                high += 1
            below = by_rating[low] if low >= 0 else None
            above = by_rating[high] if high < len(by_rating) else None
            if below is None and above is None:
                break
            if above is None or (
                below is not None and _nearness(below, anchor) <= _nearness(above, anchor)
            ):
                assert below is not None
                candidate, low = below, low - 1
            else:
                candidate, high = above, high + 1
            if abs(candidate.rating - anchor.rating) > reach:
                break
            if acceptable([*group, candidate], now_ms):
                group.append(candidate)
        if len(group) == players:
            groups.append(tuple(w.member for w in group))
            taken.update(w.member for w in group)
    return groups


def range_text(waited_ms: int) -> str:
    """The range a waiting player is shown: ``±150``, or ``any`` once it is unlimited."""
    gap = allowed_gap(waited_ms)
    return "any" if gap >= UNLIMITED else f"±{gap}"
