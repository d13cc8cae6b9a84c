"""Room events: one encoding, read back to the same value; anything else is CorruptEvent."""

from __future__ import annotations

import dataclasses

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.race.domain.events import (
    EVENT_TYPES,
    ROOM_EVENT_VERSION,
    PlayerJoined,
    RaceFinished,
    RoomCreated,
    RoomEvent,
    decode,
    encode,
)
from shared.errors import CorruptEvent

texts = st.text(max_size=12)
optional_texts = st.none() | texts


def created() -> st.SearchStrategy[RoomEvent]:
    return st.builds(
        RoomCreated,
        at=st.integers(0, 2**53),
        variant=st.sampled_from(["swiss", "quadrennial"]),
        seed=optional_texts,
        deck=st.none() | st.lists(texts, max_size=4).map(tuple),
        salt=texts,
        commitment=texts,
        deal_version=st.integers(1, 9),
        capacity=st.integers(1, 8),
        countdown_ms=st.integers(0, 10**6),
        time_limit_ms=st.integers(0, 10**7),
        spectator_delay_ms=st.integers(0, 10**5),
        open_seed=st.booleans(),
        winnable=st.booleans(),
        creator=optional_texts,
    )


times = st.integers(0, 2**53)
_BY_TYPE = {
    "int": times,
    "int | None": st.none() | times,
    "str": texts,
    "str | None": optional_texts,
}

events = st.one_of(
    created(),
    st.builds(PlayerJoined, st.integers(0, 2**53), texts, texts, texts, optional_texts),
    st.builds(
        RaceFinished,
        st.integers(0, 2**53),
        st.sampled_from(["all_done", "time_limit"]),
        st.lists(st.fixed_dictionaries({"place": st.integers(1, 4)}), max_size=3).map(tuple),
    ),
    *(
        st.builds(cls, **{f.name: _BY_TYPE[str(f.type)] for f in dataclasses.fields(cls)})
        for cls in EVENT_TYPES.values()
        if cls not in (RoomCreated, PlayerJoined, RaceFinished)
    ),
)


@given(events)
def test_an_event_survives_the_store(event: RoomEvent) -> None:
    stored = msgpack.unpackb(msgpack.packb(encode(event)))
    assert stored["type"] == event.TYPE
    assert stored["v"] == ROOM_EVENT_VERSION
    assert decode(stored) == event


def test_every_wire_name_is_its_class() -> None:
    assert all(name == cls.TYPE for name, cls in EVENT_TYPES.items())
    assert len(EVENT_TYPES) == 12


@pytest.mark.parametrize(
    "data",
    [
        {"type": "no_such_event", "v": 1, "at": 0},
        {"type": ["player_left"], "v": 1, "at": 0},
        {"type": "player_left", "v": 2, "at": 0, "player": "p"},
        {"type": "player_left", "v": 1, "at": 0},  # no player
    ],
)
def test_what_cannot_be_read_is_corrupt(data: dict[str, object]) -> None:
    with pytest.raises(CorruptEvent):
        decode(data)


def test_fields_an_older_writer_left_out_take_their_defaults() -> None:
    old = encode(RoomCreated(0, "swiss", "s", None, "a", "c", 1, 2, 0, 0, 0, False, False, None))
    for name in ("open_seed", "winnable", "creator", "spectator_delay_ms"):
        del old[name]
    assert decode(old) == RoomCreated(
        0, "swiss", "s", None, "a", "c", 1, 2, 0, 0, 0, False, False, None
    )
