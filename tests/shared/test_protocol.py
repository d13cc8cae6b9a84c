"""The wire codec (docs/protocol.md): round trips, and the error code of each kind of bad frame."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import protocol
from shared.errors import ProtocolError
from shared.protocol import BadField, BadFrame, UnknownType, decode, encode

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def pack(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


VALID: list[dict[str, Any]] = [
    {"type": "hello", "protocol": 1},
    {"type": "hello", "protocol": 1, "name": "ann", "resume": "tok"},
    {"type": "ping", "ref": 3},
    {"type": "list_rooms", "ref": "abc"},
    {"type": "create_room", "variant": "swiss"},
    {
        "type": "create_room",
        "variant": "quadrennial",
        "seed": 42,
        "capacity": 3,
        "countdown_ms": 0,
        "time_limit_ms": 60000,
        "spectator_delay_ms": 500,
    },
    {"type": "join", "room": "abcd1234", "role": "spectator"},
    {"type": "leave"},
    {"type": "start"},
    {"type": "move", "id": 7, "move": "t3f"},
    {"type": "move", "id": "m-1", "move": "d", "player": "p1"},
    {"type": "resign"},
    {"type": "watch", "room": "abcd1234", "player": "p1"},
    {"type": "ack", "id": 7, "version": 3},
    {"type": "reject", "id": "x", "code": "illegal_move", "reason": "no"},
    {"type": "error", "code": "bad_frame", "reason": "no", "ref": None},
    {"type": "game_event", "room": "r", "player": "p", "version": 1, "event": {"type": "x"}},
    {"type": "game", "room": "r", "player": "p", "version": 0, "events": []},
    {
        "type": "progress",
        "room": "r",
        "player": "p",
        "status": "playing",
        "foundation": 3,
        "moves": 9,
        "finished_at": None,
        "reached_at": 5,
    },
]


@pytest.mark.parametrize("msg", VALID, ids=lambda m: m["type"])
def test_valid_messages_round_trip(msg: dict[str, Any]) -> None:
    assert decode(encode(msg)) == msg


def test_unknown_fields_are_kept_and_ignored() -> None:
    assert decode(pack({"type": "ping", "future": [1, 2]}))["future"] == [1, 2]


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"\xc1",  # a byte msgpack never uses
        b"\x92\x01",  # an array cut short
        pack([1, 2]),
        pack("hello"),
        pack({"no_type": 1}),
        pack({"type": 5}),
        pack({1: "ping"}),
        pack({"type": "ping"}) + b"\x00",  # trailing bytes
    ],
)
def test_bad_frames(frame: bytes) -> None:
    with pytest.raises(BadFrame) as info:
        decode(frame)
    assert info.value.code == "bad_frame"


def test_text_frames_are_bad_frames() -> None:
    with pytest.raises(BadFrame):
        decode('{"type": "ping"}')


def test_unknown_type() -> None:
    with pytest.raises(UnknownType) as info:
        decode(pack({"type": "teleport"}))
    assert info.value.code == "unknown_type"


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        ({"type": "hello"}, "protocol"),
        ({"type": "hello", "protocol": "1"}, "protocol"),
        ({"type": "hello", "protocol": True}, "protocol"),
        ({"type": "hello", "protocol": 1, "name": "x" * 33}, "name"),
        ({"type": "hello", "protocol": 1, "name": ""}, "name"),
        ({"type": "create_room"}, "variant"),
        ({"type": "create_room", "variant": "klondike"}, "variant"),
        ({"type": "create_room", "variant": "swiss", "capacity": 0}, "capacity"),
        ({"type": "create_room", "variant": "swiss", "countdown_ms": -1}, "countdown_ms"),
        ({"type": "create_room", "variant": "swiss", "seed": 1.5}, "seed"),
        ({"type": "create_room", "variant": "swiss", "deck": [1, 2]}, "deck"),
        ({"type": "join"}, "room"),
        ({"type": "join", "room": "r", "role": "referee"}, "role"),
        ({"type": "move", "move": "d"}, "id"),
        ({"type": "move", "id": 1}, "move"),
        ({"type": "move", "id": -1, "move": "d"}, "id"),
        ({"type": "move", "id": [1], "move": "d"}, "id"),
        ({"type": "move", "id": 1, "move": 5}, "move"),
        ({"type": "move", "id": 1, "move": "d" * 17}, "move"),
        ({"type": "ping", "ref": {"a": 1}}, "ref"),
        ({"type": "watch", "player": 3}, "player"),
    ],
)
def test_bad_fields_name_the_field(msg: dict[str, Any], field: str) -> None:
    with pytest.raises(BadField) as info:
        decode(pack(msg))
    assert info.value.code == "bad_field"
    assert info.value.field == field
    assert field in info.value.reason


def test_encode_refuses_what_decode_would_refuse() -> None:
    with pytest.raises(BadField):
        encode({"type": "ack", "id": 1})


def test_every_error_is_a_protocol_error() -> None:
    for cls in (BadFrame, UnknownType, BadField):
        assert issubclass(cls, ProtocolError)


def test_every_message_type_is_documented() -> None:
    text = DOC.read_text()
    for kind in protocol.MESSAGES:
        assert re.search(rf"\| `{kind}` \|", text), kind
    assert f"version {protocol.PROTOCOL_VERSION}" in text


def test_every_codec_error_code_is_documented() -> None:
    table = DOC.read_text().split("## Error codes", 1)[1]
    for cls in (BadFrame, UnknownType, BadField):
        assert f"| `{cls.code}` |" in table


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_raise_only_protocol_errors(frame: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        decode(frame)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["type", "id", "move", "room", "protocol", "ref", "variant"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-(2**63), 2**63 - 1),
            st.text(max_size=8),
            st.lists(st.integers(0, 9)),
        ),
    )
)
def test_random_maps_raise_only_protocol_errors(msg: dict[str, Any]) -> None:
    with contextlib.suppress(ProtocolError):
        assert decode(pack(msg))["type"] in protocol.MESSAGES


def test_what_may_be_echoed() -> None:
    assert protocol.valid_move_id(0)
    assert protocol.valid_move_id("m-1")
    assert not protocol.valid_move_id(-1)
    assert not protocol.valid_move_id(True)
    assert not protocol.valid_move_id("x" * 65)
    assert not protocol.valid_move_id(None)
    assert protocol.valid_ref(3)
    assert not protocol.valid_ref(None)
    assert not protocol.valid_ref("x" * 65)
    assert not protocol.valid_ref([1])
