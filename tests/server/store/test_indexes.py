"""The indexes contract (``Indexes``) on every backend: members with a score and a value,
ranged by score."""

from __future__ import annotations

import pytest

from server.store import IndexEntry, Indexes


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
