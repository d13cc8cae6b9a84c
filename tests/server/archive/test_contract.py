"""The archive's contract, the same on SQLite and PostgreSQL: a record written once under its
room id, read back exactly, listed newest first; a corrupt record fails alone."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.archive import Archive, ArchivedRoom
from server.archive.record import PackedRoom
from shared.errors import CorruptRecord


def room(room_id: str, finished_at: int = 1_000, moves: int = 3) -> ArchivedRoom:
    started = {"type": "game_started", "at": 10, "seed": "ab", "cards": ["AS", "2H"]}
    moved = [{"type": "moved", "at": 11 + i, "move": f"w f{i}", "cid": i} for i in range(moves)]
    return ArchivedRoom(
        room_id=room_id,
        finished_at=finished_at,
        summary={"id": room_id, "status": "finished", "finished_at": finished_at, "names": ["a"]},
        room_events=[{"type": "room_created", "at": 1, "variant": "swiss", "deck": None}],
        game_events={
            f"{{{room_id}}}:game:p1": [started, *moved],
            f"{{{room_id}}}:game:p2": [started, {"type": "resigned", "at": 12}],
        },
    )


async def test_a_record_is_read_back_exactly(archive: Archive) -> None:
    assert await archive.get("r1") is None
    assert not await archive.has("r1")
    assert await archive.put(room("r1"), now_ms=5)
    assert await archive.get("r1") == room("r1")
    assert await archive.has("r1")
    assert await archive.count() == 1
    assert await archive.size_bytes() > 0


async def test_archiving_again_writes_nothing(archive: Archive) -> None:
    assert await archive.put(room("r1"), now_ms=5)
    assert not await archive.put(room("r1"), now_ms=6)
    shorter = room("r1", moves=1)  # a writer that read the room before: the record stays
    assert not await archive.put(shorter, now_ms=6)
    assert await archive.get("r1") == room("r1")
    assert await archive.count() == 1


async def test_a_longer_record_of_a_room_replaces_it(archive: Archive) -> None:
    """A finished room's streams may still grow (a rematch offered): the latest read wins."""
    assert await archive.put(room("r1"), now_ms=5)
    assert await archive.put(room("r1", moves=9), now_ms=6)
    assert await archive.get("r1") == room("r1", moves=9)
    assert await archive.count() == 1


async def test_a_record_keeps_its_games_analyses(archive: Archive) -> None:
    """The analyses are kept with the room: read back exactly, and a record that gained one
    (the analysis came after the archive) replaces the record without."""
    assert await archive.put(room("r1"), now_ms=5)
    analysis = {"type": "game_analysed", "v": 1, "at": 20, "won_until": 3, "line": ["wf"]}
    analysed = replace(room("r1"), analyses={"{r1}:analysis:p1": [analysis]})
    assert await archive.put(analysed, now_ms=6)
    assert await archive.get("r1") == analysed
    assert not await archive.put(room("r1"), now_ms=7)  # the one without it never comes back
    assert await archive.get("r1") == analysed


async def test_racing_writers_write_once(archive: Archive) -> None:
    wrote = await asyncio.gather(*(archive.put(room("r1"), now_ms=i) for i in range(8)))
    assert sorted(wrote) == [False] * 7 + [True]
    assert await archive.count() == 1


async def test_recent_lists_newest_first(archive: Archive) -> None:
    for i in range(5):
        await archive.put(room(f"r{i}", finished_at=100 * i), now_ms=0)
    recent = await archive.recent(limit=3)
    assert [s["id"] for s in recent] == ["r4", "r3", "r2"]
    older = await archive.recent(limit=10, before_ms=200)
    assert [s["id"] for s in older] == ["r1", "r0"]


async def test_a_corrupt_record_fails_alone(archive: Archive) -> None:
    await archive.put(room("good"), now_ms=0)
    await archive.insert(PackedRoom("bad", 5, b"\x80", b"not msgpack \xc1"), 0)
    with pytest.raises(CorruptRecord) as caught:
        await archive.get("bad")
    assert caught.value.code == "corrupt_record"
    assert caught.value.room == "bad"
    assert await archive.get("good") == room("good")


async def test_ping(archive: Archive) -> None:
    assert await archive.ping()


events = st.dictionaries(
    st.sampled_from(["type", "at", "move", "cid", "cards", "x"]),
    st.one_of(
        st.integers(-(2**40), 2**40),
        st.text(max_size=8),
        st.none(),
        st.binary(max_size=4),
        st.lists(st.text(max_size=3), max_size=4),
    ),
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    room_events=st.lists(events, min_size=1, max_size=5),
    game_events=st.dictionaries(st.text(min_size=1, max_size=10), st.lists(events, max_size=8)),
)
async def test_any_events_round_trip(
    archive: Archive, room_events: list[dict[str, Any]], game_events: dict[str, Any]
) -> None:
    room_id = f"h{await archive.count()}"
    record = ArchivedRoom(room_id, 1, {"id": room_id}, room_events, game_events)
    await archive.put(record, now_ms=0)
    assert await archive.get(room_id) == record
