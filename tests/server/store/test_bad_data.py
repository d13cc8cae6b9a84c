"""Corrupt entries on both backends: a clear error naming stream and entry; other streams go on."""

from __future__ import annotations

import asyncio

import msgpack
import pytest
from structlog.testing import capture_logs

from server.store import CorruptEntry, StoredEvent
from shared.errors import CorruptEvent, ServerError
from tests.server.store.conftest import Backend
from tests.server.store.test_follow import SAFETY, take

GARBAGE = {
    "not msgpack": b"\xc1\xc1\xc1",
    "truncated msgpack": msgpack.packb({"v": 1, "e": {"type": "moved"}})[:-3],
    "trailing bytes": msgpack.packb({"v": 1, "e": {"type": "moved"}}) + b"\x00",
    "unknown schema version": msgpack.packb({"v": 99, "e": {"type": "moved"}}),
    "schema version not an int": msgpack.packb({"v": "1", "e": {"type": "moved"}}),
    "no schema version": msgpack.packb({"e": {"type": "moved"}}),
    "not a map": msgpack.packb([1, {"type": "moved"}]),
    "event not a map": msgpack.packb({"v": 1, "e": ["moved"]}),
    "bad utf-8": b"\x82\xa1v\x01\xa1e\x81\xa1t\xa2\xff\xfe",
    "empty": b"",
}
WHY = {
    "not msgpack": "not valid msgpack",
    "truncated msgpack": "not valid msgpack",
    "trailing bytes": "not valid msgpack",
    "unknown schema version": "unknown schema version 99",
    "schema version not an int": "unknown schema version '1'",
    "no schema version": "not an event envelope",
    "not a map": "not an event envelope",
    "event not a map": "no event map",
    "bad utf-8": "not valid msgpack",
    "empty": "not valid msgpack",
}


@pytest.mark.parametrize("kind", sorted(GARBAGE))
async def test_read_names_the_stream_and_the_entry(backend: Backend, kind: str) -> None:
    store = backend.store
    await store.append("{r}:game:ann", [{"type": "moved", "n": 1}], expected_version=0)
    entry = await backend.plant("{r}:game:ann", GARBAGE[kind])
    assert entry == "2-0"
    with pytest.raises(CorruptEvent) as caught:
        await store.read("{r}:game:ann")
    error = caught.value
    assert isinstance(error, CorruptEntry)
    assert isinstance(error, ServerError)
    assert error.code == "corrupt_event"
    assert (error.stream, error.entry) == ("{r}:game:ann", "2-0")
    assert str(error).startswith("stream '{r}:game:ann' entry 2-0: ")
    assert WHY[kind] in str(error)
    # the bulk reads of a rebuild name it the same way
    with pytest.raises(CorruptEntry) as bulk:
        await store.read_many(["{r}:game:other", "{r}:game:ann"])
    assert (bulk.value.stream, bulk.value.entry, bulk.value.why) == (
        error.stream,
        error.entry,
        error.why,
    )

    async def read_and_decode() -> None:  # a backend may raise on reading or on decoding
        raw = await store.read_many_raw(["{r}:game:ann"])
        store.decode_raw("{r}:game:ann", raw["{r}:game:ann"])

    with pytest.raises(CorruptEntry) as decoded:
        await read_and_decode()
    assert decoded.value.entry == "2-0"
    # what comes before the bad entry is still readable, and the version still counts it
    assert [e.version for e in await store.read("{r}:game:ann", limit=1)] == [1]
    assert await store.last_version("{r}:game:ann") == 2


async def test_a_follower_drops_the_corrupt_stream_and_keeps_the_others(
    backend: Backend,
) -> None:
    store = backend.store
    errors: list[CorruptEntry] = []
    await store.append("{r}:bad", [{"n": 1}], expected_version=0)
    await backend.plant("{r}:bad", b"\xc1")
    await store.append("{r}:bad", [{"n": 3}], expected_version=2)
    await store.append("{r}:good", [{"n": 1}], expected_version=0)
    async with store.follow({"{r}:bad": 0, "{r}:good": 0}, on_error=errors.append) as follower:
        got = await take(follower, 2)
        assert sorted((e.stream, e.version) for e in got) == [("{r}:bad", 1), ("{r}:good", 1)]
        waiting = asyncio.ensure_future(take(follower, 2))
        await asyncio.sleep(0.05)
        await store.append("{r}:bad", [{"n": 4}], expected_version=3)
        await store.append("{r}:good", [{"n": 2}], expected_version=1)
        await store.append("{r}:good", [{"n": 3}], expected_version=2)
        live = await waiting
        assert live == [StoredEvent("{r}:good", 2, {"n": 2}), StoredEvent("{r}:good", 3, {"n": 3})]
        assert [(e.stream, e.entry) for e in errors] == [("{r}:bad", "2-0")]
        assert set(follower.failed) == {"{r}:bad"}
        assert follower.streams == ["{r}:good"]
        assert follower.positions == {"{r}:good": 3}


async def test_the_default_on_error_logs_the_stream_and_entry(backend: Backend) -> None:
    store = backend.store
    await backend.plant("{r}:bad", b"\xc1")
    await store.append("{r}:good", [{"n": 1}], expected_version=0)
    with capture_logs() as logs:
        async with store.follow({"{r}:bad": 0, "{r}:good": 0}) as follower:
            assert [e.stream for e in await take(follower, 1)] == ["{r}:good"]
    [entry] = [log for log in logs if log["event"] == "corrupt_event"]
    assert (entry["stream"], entry["entry"], entry["log_level"]) == ("{r}:bad", "1-0", "error")


async def test_adding_a_failed_stream_again_resumes_after_the_bad_entry(backend: Backend) -> None:
    store = backend.store
    await backend.plant("{r}:bad", b"\xc1")
    await store.append("{r}:bad", [{"n": 2}], expected_version=1)
    failed = asyncio.Event()
    async with store.follow({"{r}:bad": 0}, on_error=lambda error: failed.set()) as follower:
        waiting = asyncio.ensure_future(take(follower, 1))
        async with asyncio.timeout(SAFETY):
            await failed.wait()
        assert set(follower.failed) == {"{r}:bad"}
        follower.add("{r}:bad", after=1)  # an operator skipped the broken entry
        assert [e.version for e in await waiting] == [2]
        assert follower.failed == {}


async def test_an_on_error_that_raises_surfaces_and_the_follower_goes_on(
    backend: Backend,
) -> None:
    store = backend.store

    def give_up(error: CorruptEntry) -> None:
        raise RuntimeError(f"stop: {error.entry}")

    await backend.plant("{r}:bad", b"\xc1")
    async with store.follow({"{r}:bad": 0, "{r}:good": 0}, on_error=give_up) as follower:
        with pytest.raises(RuntimeError, match="stop: 1-0"):
            await take(follower, 1)
        await store.append("{r}:good", [{"n": 1}], expected_version=0)
        assert [(e.stream, e.version) for e in await take(follower, 1)] == [("{r}:good", 1)]
        assert set(follower.failed) == {"{r}:bad"}
