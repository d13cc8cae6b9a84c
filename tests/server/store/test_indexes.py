"""The indexes contract (``Indexes``) on every backend: members with a score and a value,
ranged by score."""

from __future__ import annotations

import asyncio

import pytest

from server.store import IndexEntry, Indexes
from tests.server.store.conftest import Backend


async def test_put_get_range_remove(indexes: Indexes) -> None:
    assert await indexes.index_range("due") == []
    assert await indexes.index_get("due", "r1") is None
    await indexes.index_put("due", "r1", 300, b"x")
    await indexes.index_put("due", "r2", 100)
    await indexes.index_put("due", "r3", 200, b"\x00\xff")
    assert await indexes.index_get("due", "r1") == IndexEntry("r1", 300, b"x")
    assert await indexes.index_range("due") == [
        IndexEntry("r2", 100, b""),
        IndexEntry("r3", 200, b"\x00\xff"),
        IndexEntry("r1", 300, b"x"),
    ]
    assert [e.member for e in await indexes.index_range("due", max_score=200)] == ["r2", "r3"]
    await indexes.index_put("due", "r1", 50, b"y")  # a put replaces score and value
    assert (await indexes.index_range("due"))[0] == IndexEntry("r1", 50, b"y")
    await indexes.index_remove("due", "r2")
    await indexes.index_remove("due", "never")
    assert [e.member for e in await indexes.index_range("due")] == ["r1", "r3"]
    assert await indexes.index_range("other") == []


async def test_many_members_spread_and_come_back_sorted(indexes: Indexes) -> None:
    for n in range(200):
        await indexes.index_put("rooms", f"room{n}", 1000 - n, str(n).encode())
    entries = await indexes.index_range("rooms")
    assert len(entries) == 200
    assert [e.score for e in entries] == sorted(e.score for e in entries)
    assert entries[0] == IndexEntry("room199", 801, b"199")


async def test_count_follows_puts_and_removes(indexes: Indexes) -> None:
    assert await indexes.index_count("live") == 0
    for n in range(40):
        await indexes.index_put("live", f"room{n}", n)
    await indexes.index_put("live", "room3", 99)  # a second put of a member is not a second member
    await indexes.index_put("other", "room1", 1)
    assert await indexes.index_count("live") == 40
    for n in range(10):
        await indexes.index_remove("live", f"room{n}")
    assert await indexes.index_count("live") == 30
    assert await indexes.index_count("other") == 1
    with pytest.raises(ValueError, match="index"):
        await indexes.index_count("a{b")


@pytest.mark.parametrize(("index", "member"), [("", "m"), ("a{b", "m"), ("ok", ""), ("ok", 3)])
async def test_bad_names_are_value_errors(indexes: Indexes, index: str, member: object) -> None:
    with pytest.raises(ValueError, match="index"):
        await indexes.index_put(index, member, 1)  # type: ignore[arg-type]


async def test_a_claim_is_won_once_until_it_runs_out(indexes: Indexes) -> None:
    assert await indexes.index_claim("claims", "r1", 1000, b"p1", expired_at=500) is True
    assert await indexes.index_get("claims", "r1") == IndexEntry("r1", 1000, b"p1")
    # Another process, while the lease runs: refused, and the lease is untouched.
    assert await indexes.index_claim("claims", "r1", 1600, b"p2", expired_at=999) is False
    assert await indexes.index_get("claims", "r1") == IndexEntry("r1", 1000, b"p1")
    # Once it ran out (its holder crashed), the next claim takes it over.
    assert await indexes.index_claim("claims", "r1", 2000, b"p2", expired_at=1000) is True
    assert await indexes.index_get("claims", "r1") == IndexEntry("r1", 2000, b"p2")
    # Released (removed), it is free at once.
    await indexes.index_remove("claims", "r1")
    assert await indexes.index_claim("claims", "r1", 3000, b"p3", expired_at=0) is True


async def test_many_claims_at_once_have_one_winner(backend: Backend) -> None:
    """Claims from several store objects (processes) at once: exactly one wins."""
    stores = [backend.store, *(backend.twin() for _ in range(3))]
    try:
        won = await asyncio.gather(
            *(
                s.index_claim("claims", "room", 5000, str(n).encode(), expired_at=100)
                for n, s in enumerate(stores)
                for _ in range(3)
            )
        )
        assert sum(won) == 1
    finally:
        for twin in stores[1:]:
            if twin is not backend.store:
                await twin.aclose()
