"""The indexes capability: small sorted indexes (a member with an integer score and a short
value) for what must be found without reading every stream: the room directory, due timers,
seats, heartbeats. Hints written by the commands; the streams are the truth."""

from __future__ import annotations

import abc
from typing import NamedTuple


class IndexEntry(NamedTuple):
    """One member of an index with its score (an integer, e.g. a time) and a small value."""

    member: str
    score: int
    value: bytes


class Indexes(abc.ABC):
    """Named indexes, each created on first use."""

    @abc.abstractmethod
    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        """Set ``member``'s score and value in ``index`` (created on first use)."""

    @abc.abstractmethod
    async def index_remove(self, index: str, member: str) -> None:
        """Remove ``member`` from ``index``; nothing if it is not there."""

    @abc.abstractmethod
    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        """``member`` of ``index``, or None."""

    @abc.abstractmethod
    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        """Members with a score <= ``max_score`` (all when None), by score then member."""

    @abc.abstractmethod
    async def index_claim(
        self, index: str, member: str, score: int, value: bytes = b"", *, expired_at: int
    ) -> bool:
        """Put ``member`` with ``score`` and ``value`` if it is absent or its score is at most
        ``expired_at``, atomically; True if put. A lease: the score is when it runs out, so
        one of many processes claiming at once wins, and a lease its holder left (a crash)
        is taken over once it ran out."""

    @abc.abstractmethod
    async def index_count(self, index: str) -> int:
        """How many members ``index`` holds, without reading them."""


def check_index(index: object, member: object) -> None:
    if not isinstance(index, str) or not index or "{" in index or "}" in index:
        raise ValueError(f"an index name is a non-empty str without braces, not {index!r}")
    if not isinstance(member, str) or not member:
        raise ValueError(f"an index member is a non-empty str, not {member!r}")
