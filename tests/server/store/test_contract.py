"""The EventStore contract (docs/architecture.md), run on both backends by the ``store`` fixture."""

from __future__ import annotations

import pytest

from server.store import EventStore, StoredEvent
from shared.errors import ConflictError, WrongExpectedVersion
from tests.server.store.conftest import Backend


def ev(n: int) -> dict[str, object]:
    return {"type": "moved", "move": f"m{n}", "at": 1_700_000_000_000 + n}


async def test_a_new_stream_is_at_version_zero_and_empty(store: EventStore) -> None:
    assert await store.last_version("{r1}:room") == 0
    assert await store.read("{r1}:room") == []
    assert await store.streams() == []


async def test_append_returns_the_new_version_and_read_gives_events_back(
    store: EventStore,
) -> None:
    assert await store.append("{r1}:game:ann", [ev(1)], expected_version=0) == 1
    assert await store.append("{r1}:game:ann", [ev(2), ev(3)], expected_version=1) == 3
    assert await store.last_version("{r1}:game:ann") == 3
    assert await store.read("{r1}:game:ann") == [
        StoredEvent("{r1}:game:ann", 1, ev(1)),
        StoredEvent("{r1}:game:ann", 2, ev(2)),
        StoredEvent("{r1}:game:ann", 3, ev(3)),
    ]


async def test_read_after_and_limit(store: EventStore) -> None:
    await store.append("s", [ev(n) for n in range(1, 11)], expected_version=0)
    assert [e.version for e in await store.read("s", after=7)] == [8, 9, 10]
    assert [e.version for e in await store.read("s", after=2, limit=3)] == [3, 4, 5]
    assert [e.version for e in await store.read("s", limit=1)] == [1]
    assert await store.read("s", after=10) == []
    assert await store.read("s", after=50) == []
    assert await store.read("s", limit=0) == []


@pytest.mark.parametrize(("expected", "actual"), [(0, 2), (1, 2), (3, 2), (7, 2)])
async def test_a_stale_expected_version_raises_and_appends_nothing(
    store: EventStore, expected: int, actual: int
) -> None:
    await store.append("s", [ev(1), ev(2)], expected_version=0)
    with pytest.raises(WrongExpectedVersion) as caught:
        await store.append("s", [ev(3), ev(4)], expected_version=expected)
    assert isinstance(caught.value, ConflictError)
    assert (caught.value.stream, caught.value.expected, caught.value.actual) == (
        "s",
        expected,
        actual,
    )
    assert caught.value.code == "version_conflict"
    assert [e.data for e in await store.read("s")] == [ev(1), ev(2)]


async def test_an_append_retried_after_a_lost_reply_succeeds_once(store: EventStore) -> None:
    """A client that sent an append again (its first reply was lost: a dropped connection, a
    failover) finds its own events there: the same version, nothing appended twice."""
    await store.append("s", [ev(1)], expected_version=0)
    assert await store.append("s", [ev(2), ev(3)], expected_version=1) == 3
    assert await store.append("s", [ev(2), ev(3)], expected_version=1) == 3
    await store.append("s", [ev(4)], expected_version=3)
    assert await store.append("s", [ev(2), ev(3)], expected_version=1) == 3  # others came after
    with pytest.raises(WrongExpectedVersion):
        await store.append("s", [ev(2), ev(9)], expected_version=1)  # not the same events
    with pytest.raises(WrongExpectedVersion):
        await store.append("s", [ev(2)], expected_version=2)  # the same event, elsewhere
    assert [e.data for e in await store.read("s")] == [ev(1), ev(2), ev(3), ev(4)]


async def test_expecting_a_version_of_a_missing_stream_fails(store: EventStore) -> None:
    with pytest.raises(WrongExpectedVersion) as caught:
        await store.append("nope", [ev(1)], expected_version=1)
    assert caught.value.actual == 0
    assert await store.last_version("nope") == 0
    assert await store.streams() == []


async def test_an_empty_append_is_a_value_error_and_changes_nothing(store: EventStore) -> None:
    await store.append("s", [ev(1)], expected_version=0)
    with pytest.raises(ValueError, match="at least one event"):
        await store.append("s", [], expected_version=1)
    assert await store.last_version("s") == 1


@pytest.mark.parametrize("bad", [-1, True, 1.0, "1", None])
async def test_a_bad_expected_version_is_a_value_error(store: EventStore, bad: object) -> None:
    with pytest.raises(ValueError, match="expected_version"):
        await store.append("s", [ev(1)], expected_version=bad)  # type: ignore[arg-type]
    assert await store.last_version("s") == 0


@pytest.mark.parametrize("bad", ["", None, 3])
async def test_a_bad_stream_name_is_a_value_error(store: EventStore, bad: object) -> None:
    with pytest.raises(ValueError, match="stream name"):
        await store.append(bad, [ev(1)], expected_version=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stream name"):
        await store.read(bad)  # type: ignore[arg-type]


async def test_read_rejects_negative_after_and_limit(store: EventStore) -> None:
    with pytest.raises(ValueError, match="after"):
        await store.read("s", after=-1)
    with pytest.raises(ValueError, match="limit"):
        await store.read("s", limit=-1)


async def test_an_event_msgpack_cannot_carry_appends_nothing(store: EventStore) -> None:
    with pytest.raises(TypeError):
        await store.append("s", [ev(1), {"type": "x", "bad": object()}], expected_version=0)
    with pytest.raises(TypeError):
        await store.append("s", ["not a mapping"], expected_version=0)  # type: ignore[list-item]
    assert await store.last_version("s") == 0


async def test_events_come_back_as_plain_msgpack_values(store: EventStore) -> None:
    event = {
        "type": "game_started",
        "deck": ("AS", "2S"),
        "nested": {"revealed": ["TH"], "n": None, "ok": True, "ratio": 0.5},
        "blob": b"\x00\xff",
        "unicode": "♠♥",
    }
    await store.append("s", [event], expected_version=0)
    [stored] = await store.read("s")
    assert stored.data == {**event, "deck": ["AS", "2S"]}


async def test_the_caller_cannot_change_what_was_stored(store: EventStore) -> None:
    event: dict[str, object] = {"type": "moved", "revealed": ["TH"]}
    await store.append("s", [event], expected_version=0)
    event["type"] = "changed"
    [first] = await store.read("s")
    first.data["revealed"].append("XX")
    [again] = await store.read("s")
    assert again.data == {"type": "moved", "revealed": ["TH"]}


async def test_stored_events_are_frozen(store: EventStore) -> None:
    await store.append("s", [ev(1)], expected_version=0)
    [stored] = await store.read("s")
    with pytest.raises(AttributeError):
        stored.version = 2  # type: ignore[misc]


async def test_streams_lists_existing_streams_by_prefix(store: EventStore) -> None:
    for name in ["{r1}:room", "{r1}:game:ann", "{r1}:game:bob", "{r2}:room", "a*[b]?"]:
        await store.append(name, [ev(1)], expected_version=0)
    assert await store.streams() == sorted(
        ["{r1}:room", "{r1}:game:ann", "{r1}:game:bob", "{r2}:room", "a*[b]?"]
    )
    assert await store.streams("{r1}:") == ["{r1}:game:ann", "{r1}:game:bob", "{r1}:room"]
    assert await store.streams("{r1}:game:") == ["{r1}:game:ann", "{r1}:game:bob"]
    assert await store.streams("a*") == ["a*[b]?"]
    assert await store.streams("a") == ["a*[b]?"]
    assert await store.streams("{r3}") == []


async def test_expire_now_deletes_the_stream(store: EventStore) -> None:
    await store.append("done", [ev(1)], expected_version=0)
    await store.append("live", [ev(1)], expected_version=0)
    await store.expire("done", 0)
    assert await store.last_version("done") == 0
    assert await store.read("done") == []
    assert await store.streams() == ["live"]
    assert await store.append("done", [ev(9)], expected_version=0) == 1


async def test_expire_later_keeps_the_stream_for_now(store: EventStore) -> None:
    await store.append("done", [ev(1)], expected_version=0)
    await store.expire("done", 3600)
    assert await store.last_version("done") == 1
    assert await store.streams() == ["done"]


async def test_expire_of_a_missing_stream_is_harmless(store: EventStore) -> None:
    await store.expire("nope", 10)
    await store.expire("nope", 0)
    assert await store.streams() == []


async def test_retire_applies_the_retention(backend: Backend) -> None:
    store = backend.store
    await store.append("keep", [ev(1)], expected_version=0)
    await store.retire("keep")  # retention None: kept
    store.retention = 0
    await store.append("drop", [ev(1)], expected_version=0)
    await store.retire("drop")
    assert await store.streams() == ["keep"]


async def test_ping_is_true_when_the_store_serves(store: EventStore) -> None:
    assert await store.ping() is True


async def test_usable_as_an_async_context_manager(store: EventStore) -> None:
    async with store as same:
        assert same is store
        assert await same.append("s", [ev(1)], expected_version=0) == 1


async def test_read_many_gives_every_stream_whole_and_a_missing_one_empty(
    store: EventStore,
) -> None:
    await store.append("{r1}:game:ann", [ev(1), ev(2)], expected_version=0)
    await store.append("{r2}:room", [ev(3)], expected_version=0)
    streams = ["{r1}:game:ann", "{r2}:room", "{r3}:room"]
    expected = {stream: await store.read(stream) for stream in streams}
    assert expected["{r1}:game:ann"] == [
        StoredEvent("{r1}:game:ann", 1, ev(1)),
        StoredEvent("{r1}:game:ann", 2, ev(2)),
    ]
    assert await store.read_many(streams) == expected
    raw = await store.read_many_raw(streams)
    assert {stream: store.decode_raw(stream, raw[stream]) for stream in streams} == expected
