"""The streams contract (``EventStreams``, docs/storage.md), run on every backend."""

from __future__ import annotations

import pytest

from server.store import EventStreams, StoredEvent
from shared.errors import ConflictError, WrongExpectedVersion
from tests.server.store.conftest import Backend


def ev(n: int) -> dict[str, object]:
    return {"type": "moved", "move": f"m{n}", "at": 1_700_000_000_000 + n}


async def test_a_new_stream_is_at_version_zero_and_empty(streams: EventStreams) -> None:
    assert await streams.last_version("{r1}:room") == 0
    assert await streams.read("{r1}:room") == []
    assert await streams.streams() == []


async def test_append_returns_the_new_version_and_read_gives_events_back(
    streams: EventStreams,
) -> None:
    assert await streams.append("{r1}:game:ann", [ev(1)], expected_version=0) == 1
    assert await streams.append("{r1}:game:ann", [ev(2), ev(3)], expected_version=1) == 3
    assert await streams.last_version("{r1}:game:ann") == 3
    assert await streams.read("{r1}:game:ann") == [
        StoredEvent("{r1}:game:ann", 1, ev(1)),
        StoredEvent("{r1}:game:ann", 2, ev(2)),
        StoredEvent("{r1}:game:ann", 3, ev(3)),
    ]


async def test_read_after_and_limit(streams: EventStreams) -> None:
    await streams.append("s", [ev(n) for n in range(1, 11)], expected_version=0)
    assert [e.version for e in await streams.read("s", after=7)] == [8, 9, 10]
    assert [e.version for e in await streams.read("s", after=2, limit=3)] == [3, 4, 5]
    assert [e.version for e in await streams.read("s", limit=1)] == [1]
    assert await streams.read("s", after=10) == []
    assert await streams.read("s", after=50) == []
    assert await streams.read("s", limit=0) == []


@pytest.mark.parametrize(("expected", "actual"), [(0, 2), (1, 2), (3, 2), (7, 2)])
async def test_a_stale_expected_version_raises_and_appends_nothing(
    streams: EventStreams, expected: int, actual: int
) -> None:
    await streams.append("s", [ev(1), ev(2)], expected_version=0)
    with pytest.raises(WrongExpectedVersion) as caught:
        await streams.append("s", [ev(3), ev(4)], expected_version=expected)
    assert isinstance(caught.value, ConflictError)
    assert (caught.value.stream, caught.value.expected, caught.value.actual) == (
        "s",
        expected,
        actual,
    )
    assert caught.value.code == "version_conflict"
    assert [e.data for e in await streams.read("s")] == [ev(1), ev(2)]


async def test_an_append_retried_after_a_lost_reply_succeeds_once(streams: EventStreams) -> None:
    """A client that sent an append again (its first reply was lost: a dropped connection, a
    failover) finds its own events there: the same version, nothing appended twice."""
    await streams.append("s", [ev(1)], expected_version=0)
    assert await streams.append("s", [ev(2), ev(3)], expected_version=1) == 3
    assert await streams.append("s", [ev(2), ev(3)], expected_version=1) == 3
    await streams.append("s", [ev(4)], expected_version=3)
    assert await streams.append("s", [ev(2), ev(3)], expected_version=1) == 3  # others came after
    with pytest.raises(WrongExpectedVersion):
        await streams.append("s", [ev(2), ev(9)], expected_version=1)  # not the same events
    with pytest.raises(WrongExpectedVersion):
        await streams.append("s", [ev(2)], expected_version=2)  # the same event, elsewhere
    assert [e.data for e in await streams.read("s")] == [ev(1), ev(2), ev(3), ev(4)]


async def test_expecting_a_version_of_a_missing_stream_fails(streams: EventStreams) -> None:
    with pytest.raises(WrongExpectedVersion) as caught:
        await streams.append("nope", [ev(1)], expected_version=1)
    assert caught.value.actual == 0
    assert await streams.last_version("nope") == 0
    assert await streams.streams() == []


async def test_an_empty_append_is_a_value_error_and_changes_nothing(streams: EventStreams) -> None:
    await streams.append("s", [ev(1)], expected_version=0)
    with pytest.raises(ValueError, match="at least one event"):
        await streams.append("s", [], expected_version=1)
    assert await streams.last_version("s") == 1


@pytest.mark.parametrize("bad", [-1, True, 1.0, "1", None])
async def test_a_bad_expected_version_is_a_value_error(streams: EventStreams, bad: object) -> None:
    with pytest.raises(ValueError, match="expected_version"):
        await streams.append("s", [ev(1)], expected_version=bad)  # type: ignore[arg-type]
    assert await streams.last_version("s") == 0


@pytest.mark.parametrize("bad", ["", None, 3])
async def test_a_bad_stream_name_is_a_value_error(streams: EventStreams, bad: object) -> None:
    with pytest.raises(ValueError, match="stream name"):
        await streams.append(bad, [ev(1)], expected_version=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stream name"):
        await streams.read(bad)  # type: ignore[arg-type]


async def test_read_rejects_negative_after_and_limit(streams: EventStreams) -> None:
    with pytest.raises(ValueError, match="after"):
        await streams.read("s", after=-1)
    with pytest.raises(ValueError, match="limit"):
        await streams.read("s", limit=-1)


async def test_an_event_msgpack_cannot_carry_appends_nothing(streams: EventStreams) -> None:
    with pytest.raises(TypeError):
        await streams.append("s", [ev(1), {"type": "x", "bad": object()}], expected_version=0)
    with pytest.raises(TypeError):
        await streams.append("s", ["not a mapping"], expected_version=0)  # type: ignore[list-item]
    assert await streams.last_version("s") == 0


async def test_events_come_back_as_plain_msgpack_values(streams: EventStreams) -> None:
    event = {
        "type": "game_started",
        "deck": ("AS", "2S"),
        "nested": {"revealed": ["TH"], "n": None, "ok": True, "ratio": 0.5},
        "blob": b"\x00\xff",
        "unicode": "♠♥",
    }
    await streams.append("s", [event], expected_version=0)
    [stored] = await streams.read("s")
    assert stored.data == {**event, "deck": ["AS", "2S"]}


async def test_the_caller_cannot_change_what_was_stored(streams: EventStreams) -> None:
    event: dict[str, object] = {"type": "moved", "revealed": ["TH"]}
    await streams.append("s", [event], expected_version=0)
    event["type"] = "changed"
    [first] = await streams.read("s")
    first.data["revealed"].append("XX")
    [again] = await streams.read("s")
    assert again.data == {"type": "moved", "revealed": ["TH"]}


async def test_stored_events_are_frozen(streams: EventStreams) -> None:
    await streams.append("s", [ev(1)], expected_version=0)
    [stored] = await streams.read("s")
    with pytest.raises(AttributeError):
        stored.version = 2  # type: ignore[misc]


async def test_streams_lists_existing_streams_by_prefix(streams: EventStreams) -> None:
    for name in ["{r1}:room", "{r1}:game:ann", "{r1}:game:bob", "{r2}:room", "a*[b]?"]:
        await streams.append(name, [ev(1)], expected_version=0)
    assert await streams.streams() == sorted(
        ["{r1}:room", "{r1}:game:ann", "{r1}:game:bob", "{r2}:room", "a*[b]?"]
    )
    assert await streams.streams("{r1}:") == ["{r1}:game:ann", "{r1}:game:bob", "{r1}:room"]
    assert await streams.streams("{r1}:game:") == ["{r1}:game:ann", "{r1}:game:bob"]
    assert await streams.streams("a*") == ["a*[b]?"]
    assert await streams.streams("a") == ["a*[b]?"]
    assert await streams.streams("{r3}") == []


async def test_expire_now_deletes_the_stream(streams: EventStreams) -> None:
    await streams.append("done", [ev(1)], expected_version=0)
    await streams.append("live", [ev(1)], expected_version=0)
    await streams.expire("done", 0)
    assert await streams.last_version("done") == 0
    assert await streams.read("done") == []
    assert await streams.streams() == ["live"]
    assert await streams.append("done", [ev(9)], expected_version=0) == 1


async def test_expire_later_keeps_the_stream_for_now(streams: EventStreams) -> None:
    await streams.append("done", [ev(1)], expected_version=0)
    await streams.expire("done", 3600)
    assert await streams.last_version("done") == 1
    assert await streams.streams() == ["done"]


async def test_expire_of_a_missing_stream_is_harmless(streams: EventStreams) -> None:
    await streams.expire("nope", 10)
    await streams.expire("nope", 0)
    assert await streams.streams() == []


async def test_retire_applies_the_retention(backend: Backend) -> None:
    streams: EventStreams = backend.store
    await streams.append("keep", [ev(1)], expected_version=0)
    await streams.retire("keep")  # retention None: kept
    streams.retention = 0
    await streams.append("drop", [ev(1)], expected_version=0)
    await streams.retire("drop")
    assert await streams.streams() == ["keep"]


async def test_read_many_gives_every_stream_whole_and_a_missing_one_empty(
    streams: EventStreams,
) -> None:
    await streams.append("{r1}:game:ann", [ev(1), ev(2)], expected_version=0)
    await streams.append("{r2}:room", [ev(3)], expected_version=0)
    names = ["{r1}:game:ann", "{r2}:room", "{r3}:room"]
    expected = {stream: await streams.read(stream) for stream in names}
    assert expected["{r1}:game:ann"] == [
        StoredEvent("{r1}:game:ann", 1, ev(1)),
        StoredEvent("{r1}:game:ann", 2, ev(2)),
    ]
    assert await streams.read_many(names) == expected
    raw = await streams.read_many_raw(names)
    assert {stream: streams.decode_raw(stream, raw[stream]) for stream in names} == expected


async def test_last_versions_in_bulk(streams: EventStreams) -> None:
    await streams.append("{a}:room", [ev(1), ev(2)], expected_version=0)
    await streams.append("{b}:room", [ev(1)], expected_version=0)
    assert await streams.last_versions(["{a}:room", "{b}:room", "{c}:room"]) == {
        "{a}:room": 2,
        "{b}:room": 1,
        "{c}:room": 0,
    }


async def test_last_versions_of_more_streams_than_one_batch(streams: EventStreams) -> None:
    """The catch-up asks for every loaded room's streams at once: 300 streams in 60 groups,
    more than one script call's batch, each answered with its own last version."""
    names = [f"{{g{g}}}:s{s}" for g in range(60) for s in range(5)]
    wanted = {}
    for n, stream in enumerate(names):
        count = n % 4  # 0: never written
        if count:
            await streams.append(stream, [ev(v) for v in range(1, count + 1)], expected_version=0)
        wanted[stream] = count
    assert await streams.last_versions(names) == wanted


async def test_delete_at_deletes_every_stream_when_each_is_at_its_version(
    streams: EventStreams,
) -> None:
    await streams.append("{r1}:room", [ev(1), ev(2)], expected_version=0)
    await streams.append("{r1}:game:ann", [ev(3)], expected_version=0)
    await streams.append("{r2}:room", [ev(4)], expected_version=0)
    at = {"{r1}:room": 2, "{r1}:game:ann": 1, "{r1}:game:bob": 0}
    assert await streams.delete_at(at) is True
    assert await streams.last_versions(list(at)) == dict.fromkeys(at, 0)
    assert await streams.read("{r1}:room") == []
    assert await streams.streams() == ["{r2}:room"]  # another group is untouched
    # A stream deleted by the fence starts again at version 1, as any absent stream.
    assert await streams.append("{r1}:room", [ev(5)], expected_version=0) == 1


@pytest.mark.parametrize(
    "at",
    [
        {"{r1}:room": 1, "{r1}:game:ann": 1},  # the room moved on after the check
        {"{r1}:room": 2, "{r1}:game:ann": 2},  # a stream behind what was checked
        {"{r1}:room": 2, "{r1}:game:ann": 1, "{r1}:game:bob": 0, "{r1}:game:cat": 3},
        {"{r1}:room": 2, "{r1}:game:bob": 0, "{r1}:game:ann": 0},  # ann appeared meanwhile
    ],
)
async def test_delete_at_deletes_nothing_when_any_stream_is_elsewhere(
    streams: EventStreams, at: dict[str, int]
) -> None:
    await streams.append("{r1}:room", [ev(1), ev(2)], expected_version=0)
    await streams.append("{r1}:game:ann", [ev(3)], expected_version=0)
    assert await streams.delete_at(at) is False
    assert [e.data for e in await streams.read("{r1}:room")] == [ev(1), ev(2)]
    assert [e.data for e in await streams.read("{r1}:game:ann")] == [ev(3)]


async def test_an_append_after_the_check_survives_the_fence(streams: EventStreams) -> None:
    """The archiver's window: versions read, an event appended, then the delete asked for at
    the versions read. The late event is never deleted unseen."""
    await streams.append("{r1}:room", [ev(1)], expected_version=0)
    await streams.append("{r1}:game:ann", [ev(2)], expected_version=0)
    checked = await streams.last_versions(["{r1}:room", "{r1}:game:ann"])
    await streams.append("{r1}:room", [ev(3)], expected_version=1)
    assert await streams.delete_at(checked) is False
    assert [e.data for e in await streams.read("{r1}:room")] == [ev(1), ev(3)]
    assert await streams.delete_at({"{r1}:room": 2, "{r1}:game:ann": 1}) is True
    # And an append at the deleted version after the delete fails: it was never acknowledged.
    with pytest.raises(WrongExpectedVersion):
        await streams.append("{r1}:room", [ev(4)], expected_version=2)


async def test_delete_at_refuses_streams_of_several_groups(streams: EventStreams) -> None:
    with pytest.raises(ValueError, match="one group"):
        await streams.delete_at({"{r1}:room": 0, "{r2}:room": 0})
    with pytest.raises(ValueError, match="version"):
        await streams.delete_at({"{r1}:room": -1})
    assert await streams.delete_at({}) is True
