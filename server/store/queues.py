"""The queues capability: small sets of waiting members (a member, an integer score, a short
value) from which a group is taken all at once or not at all. Matchmaking's queues live here:
a process reads a queue, decides the groups (pure rules), and ``queue_take`` claims each group
atomically, so a member is never taken twice and never after leaving (docs/storage.md)."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import NamedTuple

MAX_TAKE = 16
"""Most members one take claims (a race has at most four)."""


class QueueEntry(NamedTuple):
    """One waiting member with its score (e.g. a rating) and a small value."""

    member: str
    score: int
    value: bytes


class Queues(abc.ABC):
    """Named queues, each created on first use; every operation on one queue is atomic."""

    @abc.abstractmethod
    async def queue_join(self, queue: str, member: str, score: int, value: bytes = b"") -> bool:
        """Add ``member``; False (and nothing changed) if it is already there."""

    @abc.abstractmethod
    async def queue_take(self, queue: str, members: Sequence[str]) -> bool:
        """Remove every one of ``members`` if all are there, else none: True if taken."""

    @abc.abstractmethod
    async def queue_leave(self, queue: str, member: str) -> bool:
        """Remove ``member``; False if it was not there (taken, or never queued)."""

    @abc.abstractmethod
    async def queue_entries(self, queue: str) -> list[QueueEntry]:
        """Every member waiting, by score then member."""


def check_queue(queue: object, members: Sequence[object]) -> None:
    if not isinstance(queue, str) or not queue or "{" in queue or "}" in queue:
        raise ValueError(f"a queue name is a non-empty str without braces, not {queue!r}")
    if not members or len(members) > MAX_TAKE:
        raise ValueError(f"a take names 1 to {MAX_TAKE} members")
    for member in members:
        if not isinstance(member, str) or not member:
            raise ValueError(f"a queue member is a non-empty str, not {member!r}")
    if len(set(members)) != len(members):
        raise ValueError("a take names each member once")
