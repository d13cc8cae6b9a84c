"""Corrupt entries on every backend: a clear error naming the stream and the entry."""

from __future__ import annotations

import msgpack
import pytest

from server.store import CorruptEntry, StoreError
from shared.errors import CorruptEvent, ServerError
from tests.server.store.conftest import Backend

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
    assert isinstance(error, StoreError)  # what a caller catches for anything the store raised
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
