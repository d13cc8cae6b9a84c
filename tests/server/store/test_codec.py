"""The stored envelope: msgpack with a schema version, round-tripping every msgpack value."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.store import codec

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
events = st.dictionaries(st.text(max_size=10), values, max_size=6)


@settings(max_examples=150, deadline=None)
@given(events)
def test_every_msgpack_event_round_trips(event: dict[str, object]) -> None:
    assert codec.decode(codec.encode(event)) == event


def test_the_envelope_carries_the_schema_version() -> None:
    assert codec.SCHEMA_VERSION in codec.READABLE
    assert msgpack.unpackb(codec.encode({"type": "resigned", "at": 5})) == {
        "v": codec.SCHEMA_VERSION,
        "e": {"type": "resigned", "at": 5},
    }


def test_tuples_come_back_as_lists_and_int_keys_survive() -> None:
    assert codec.decode(codec.encode({"deck": ("AS", "2S"), "m": {1: "a"}})) == {
        "deck": ["AS", "2S"],
        "m": {1: "a"},
    }


@pytest.mark.parametrize("event", [["type", "x"], "event", None, 5])
def test_only_mappings_are_events(event: object) -> None:
    with pytest.raises(TypeError, match="mapping"):
        codec.encode(event)  # type: ignore[arg-type]


def test_a_value_msgpack_cannot_carry_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        codec.encode({"when": object()})


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (None, "no 'd' field"),
        (b"\xc1", "not valid msgpack"),
        (msgpack.packb({"v": True, "e": {}}), "unknown schema version True"),
        (msgpack.packb({"v": [1], "e": {}}), "unknown schema version [1]"),
        (msgpack.packb({"v": 0, "e": {}}), "unknown schema version 0"),
        (msgpack.packb({"v": 1}), "no event map"),
        (msgpack.packb(7), "not an event envelope"),
    ],
)
def test_what_decode_refuses(payload: bytes | None, why: str) -> None:
    with pytest.raises(codec.DecodeError, match=why.replace("[", r"\[").replace("]", r"\]")):
        codec.decode(payload)
