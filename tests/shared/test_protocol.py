"""The wire codec (docs/protocol.md): round trips, and the error code of each kind of bad frame."""

from __future__ import annotations

import contextlib
import hashlib
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


# ---- wire framing: batch frames, spliced frames, close codes, the commitment -------------------

_MESSAGES = st.sampled_from(VALID)


@settings(max_examples=100, deadline=None)
@given(st.lists(_MESSAGES, max_size=40))
def test_a_batch_frame_decodes_to_the_messages_it_holds(messages: list[dict[str, Any]]) -> None:
    frame = protocol.batch_frame([encode(m) for m in messages])
    assert msgpack.unpackb(frame) == {"type": "batch", "messages": messages}
    assert protocol.decode_frame(frame) == messages
    assert decode(frame)["messages"] == messages  # a valid `batch` message too


def test_a_batch_of_many_messages_uses_the_longer_array_headers() -> None:
    for count in (15, 16, 0xFFFF, 0x10000):
        frame = protocol.batch_frame([encode({"type": "leave"})] * count)
        assert len(protocol.decode_frame(frame)) == count


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(0, 70_000), st.sampled_from([15, 16, 0xFFFF, 0x10000])))
def test_array_header_is_msgpacks(count: int) -> None:
    assert protocol.array_header(count) + b"\xc0" * count == pack([None] * count)


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _VALUES, max_size=20), _VALUES)
def test_packed_with_is_packing_the_merged_map(msg: dict[str, Any], value: Any) -> None:
    key = "the key"
    msg.pop(key, None)
    spliced = protocol.packed_with(msg, key, protocol.pack(value))
    assert spliced == pack({**msg, key: value})
    assert msgpack.unpackb(spliced, strict_map_key=False) == {**msg, key: value}


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _VALUES, max_size=20), _VALUES, _VALUES)
def test_an_open_map_takes_each_recipients_field(msg: dict[str, Any], one: Any, two: Any) -> None:
    key = "me"
    msg.pop(key, None)
    head = protocol.open_map(msg)
    for value in (one, two):  # one head, a different last field each time
        assert head + protocol.pack(key) + protocol.pack(value) == pack({**msg, key: value})


@settings(max_examples=50, deadline=None)
@given(st.lists(_VALUES, max_size=20))
def test_packed_list_is_packing_the_list(items: list[Any]) -> None:
    assert protocol.packed_list([protocol.pack(item) for item in items]) == pack(items)


def test_a_batch_skips_the_messages_it_does_not_know_and_keeps_the_rest() -> None:
    frame = pack(
        {
            "type": "batch",
            "messages": [{"type": "left", "room": "r"}, {"type": "teleport"}, {"type": "leave"}],
        }
    )
    assert protocol.decode_frame(frame) == [{"type": "left", "room": "r"}, {"type": "leave"}]


@pytest.mark.parametrize(
    "frame",
    [pack({"type": "batch"}), pack({"type": "batch", "messages": 3}), b"\xc1", pack([1])],
)
def test_decode_frame_refuses_what_is_no_message(frame: bytes) -> None:
    with pytest.raises(BadFrame):
        protocol.decode_frame(frame)


def test_a_frame_that_is_not_a_batch_decodes_to_itself() -> None:
    assert protocol.decode_frame(encode({"type": "left", "room": "r"})) == [
        {"type": "left", "room": "r"}
    ]
    with pytest.raises(UnknownType):
        protocol.decode_frame(pack({"type": "teleport"}))


def test_close_codes_are_distinct_and_in_their_ranges() -> None:
    constants = {
        name: value
        for name, value in vars(protocol).items()
        if name.startswith("CLOSE_") and isinstance(value, int)
    }
    assert len(set(constants.values())) == len(constants)
    assert set(constants.values()) == set(protocol.CLOSE_CODES)
    for code in constants.values():
        assert 1000 <= code <= 1015 or 4000 <= code <= 4999  # RFC 6455: private codes 4000+


@given(st.text(max_size=30), st.text(alphabet="0123456789abcdef", min_size=32, max_size=32))
def test_the_commitment_is_sha256_of_secret_colon_salt(secret: str, salt: str) -> None:
    published = protocol.commitment(secret, salt)
    assert published == hashlib.sha256(f"{secret}:{salt}".encode()).hexdigest()
    assert protocol.commitment_ok(secret, salt, published)
    assert not protocol.commitment_ok(secret + "0", salt, published)
    assert not protocol.commitment_ok(secret, salt[::-1] + "x", published)
    assert not protocol.commitment_ok(None, salt, published)


def test_a_deck_room_commits_to_its_cards_joined_by_spaces() -> None:
    assert protocol.deck_secret(["AS", "2H", "KD"]) == "AS 2H KD"
    assert protocol.commitment(protocol.deck_secret(["AS", "2H"]), "ab") == (
        hashlib.sha256(b"AS 2H:ab").hexdigest()
    )


def test_the_room_hint_is_the_room_query_parameter_of_the_request_target() -> None:
    """docs/protocol.md, "Transport": ``/?room=CODE`` names the room a connection is for."""
    assert protocol.room_hint("/?room=k2x7m4qa") == "k2x7m4qa"
    assert protocol.room_hint("/ws?x=1&room=abc") == "abc"
    assert protocol.room_hint("/") is None
    assert protocol.room_hint("/?room=") is None
    assert protocol.room_hint("/?room=" + "a" * 65) is None  # no room id is that long
    assert protocol.room_hint("/watch/abc") is None  # a page names its room in its path


@given(st.text(alphabet="abcdefghijkmnpqrstuvwxyz23456789&=?/ %", min_size=1, max_size=64))
def test_a_url_naming_a_room_is_read_back_as_that_room(room: str) -> None:
    url = protocol.room_url("ws://127.0.0.1:8765", room)
    assert url.startswith("ws://127.0.0.1:8765/?")
    assert protocol.room_hint(url.removeprefix("ws://127.0.0.1:8765")) == room
