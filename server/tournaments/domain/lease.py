"""A lease: which process does a piece of work (pairing a tournament) for now, pure.

A lease stream holds claims ``{"holder", "until"}``; a claim is appended at the stream's
version, so of two processes claiming at once one wins. The holder renews its claim before half
of it has run out; when it dies nobody renews, and once ``until`` has passed anyone may claim.
Correctness never rests on it (every decision is appended at its expected version): the lease
only keeps the work from being done twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def decide_claim(
    last: Mapping[str, Any] | None, me: str, now: int, lease_ms: int
) -> dict[str, Any] | None:
    """The claim ``me`` should append now, or None: another holds an unexpired lease, or my
    own has more than half of it left."""
    claim = {"holder": me, "until": now + lease_ms}
    if last is None or ran_out(last, now):
        return claim
    if last["holder"] == me and int(last["until"]) - now < lease_ms // 2:
        return claim
    return None


def ran_out(last: Mapping[str, Any] | None, now: int) -> bool:
    """Whether the last claim gives the lease to nobody now (there is none, or it expired)."""
    return last is None or int(last["until"]) <= now


def holds(last: Mapping[str, Any] | None, me: str, now: int) -> bool:
    """Whether ``me`` holds the lease the last claim gives."""
    return last is not None and last["holder"] == me and int(last["until"]) > now
