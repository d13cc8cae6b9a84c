"""The compact game record: exact round trips, damaged bytes refused, and a golden vector so the
format cannot drift without its version changing (docs/records.md)."""

from __future__ import annotations

import functools
import zlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import apply_move, legal_moves, new_game, solve
from shared.deal import deal_deck
from shared.errors import CorruptEvent, ServerError
from shared.events import fold, move_event, resign_event, start_event
from shared.record import FORMAT_VERSION, MAGIC, CorruptRecord, decode_game, encode_game
from shared.variants import VARIANTS

Events = list[dict[str, Any]]


@functools.cache
def winning_line(variant: str) -> tuple[str, ...]:
    """The solver's win of seed 1 (found within a small budget in both variants)."""
    solution = solve(new_game(variant, seed=1), max_nodes=20_000)
    assert solution.moves, "seed 1 is won within the budget in both variants"
    return solution.moves


@st.composite
def games(draw: st.DrawFn) -> Events:
    """A game as the server stores it, with some of what it may also hold: random legal moves
    or a winning line, think times, move ids in sequence or not, a seed or none, a resignation
    or none."""
    variant = draw(st.sampled_from(VARIANTS))
    won = draw(st.integers(0, 3)) == 0
    seed = 1 if won else draw(st.integers(0, 2**40))
    deck = deal_deck(variant, seed)
    at = draw(st.integers(0, 2**45))
    kept_seed = draw(st.sampled_from(["none", "kept", "absent", "text"]))
    start = start_event(variant, deck, at=at, seed=seed if kept_seed == "kept" else None)
    if kept_seed == "absent":
        del start["seed"]
    if kept_seed == "text":
        start["seed"] = str(seed)
    events = [start]
    state = new_game(variant, deck=deck)
    ids = draw(st.sampled_from(["sequence", "none", "mixed"]))
    cid = draw(st.integers(0, 10**6))
    line = list(winning_line(variant)) if won else None
    for number in range(len(line) if line else draw(st.integers(0, 120))):
        legal = sorted(legal_moves(state))
        if not legal:
            break
        move = line[number] if line else legal[draw(st.integers(0, len(legal) - 1))]
        at += draw(st.one_of(st.integers(0, 6000), st.integers(-5000, 10**7)))
        event = move_event(state, move, at=at)
        if ids == "sequence" or (ids == "mixed" and draw(st.booleans())):
            cid += draw(st.sampled_from([1, 1, 1, 2, 0]))
            event["cid"] = cid if draw(st.integers(0, 9)) else f"m{cid}"
        events.append(event)
        state = apply_move(state, move)
    assert state.won or not won
    if not state.won and draw(st.booleans()):
        resigned = resign_event(at=at + draw(st.integers(-10, 10**6)))
        if draw(st.booleans()):
            resigned["reason"] = "abandoned"
        events.append(resigned)
    return events


names = st.sampled_from(["note", "cid", "at", "seed", "deal_version", "revealed", "reason", "x"])
scalars = st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=3)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=2),
    max_leaves=4,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games(), st.data())
def test_any_other_fields_ride_along_exactly(events: Events, data: st.DataObject) -> None:
    """Fields the compact form does not know (msgpack values: a store may hold them) come back
    as they were, whichever event holds them."""
    for index in data.draw(st.lists(st.integers(0, len(events) - 1), min_size=1, max_size=4)):
        events[index].update(data.draw(st.dictionaries(names, json_values, max_size=2)))
    assert _nan_free(decode_game(encode_game(events))) == _nan_free(events)


def _nan_free(value: Any) -> Any:
    """The value with each scalar tagged with its type (1, 1.0 and True differ) and NaN (never
    equal to itself) a marker, for comparing with ==."""
    if isinstance(value, float) and value != value:
        return "<NaN>"
    if isinstance(value, list):
        return [_nan_free(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_free(v) for k, v in value.items()}
    return (type(value).__name__, value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_a_random_game_decodes_to_exactly_its_events(events: Events) -> None:
    record = encode_game(events)
    assert _nan_free(decode_game(record)) == _nan_free(events)
    assert fold(decode_game(record)) == fold(events)


def _won_game(variant: str) -> Events:
    deck = deal_deck(variant, 1)
    events = [start_event(variant, deck, at=1_780_000_000_000, seed=1)]
    state = new_game(variant, deck=deck)
    for i, move in enumerate(winning_line(variant)):
        events.append(move_event(state, move, at=1_780_000_000_000 + 900 * (i + 1)))
        state = apply_move(state, move)
    return events


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_won_game_round_trips_in_under_three_bytes_a_move(variant: str) -> None:
    events = _won_game(variant)
    record = encode_game(events)
    assert decode_game(record) == events
    assert fold(decode_game(record)).won
    assert len(record) / (len(events) - 1) < 3  # the seed deals the deck: no deck stored


def test_fields_the_compact_form_cannot_say_ride_along_exactly() -> None:
    deck = deal_deck("swiss", 7)
    state = new_game("swiss", deck=deck)
    move = sorted(legal_moves(state))[0]
    odd_move = move_event(state, move, at=2.5)  # type: ignore[arg-type]
    odd_move |= {"cid": True, "note": {"a": [1, None, b"x"]}}
    del odd_move["revealed"]
    start = start_event("swiss", deck, at=10) | {"extra": 1.5, "seed": False}
    events = [start, odd_move, resign_event(at=3) | {"reason": 4}]
    assert decode_game(encode_game(events)) == events
    assert type(decode_game(encode_game(events))[1]["cid"]) is bool


def test_times_and_ids_too_large_for_a_number_ride_along_too() -> None:
    deck = deal_deck("quadrennial", 5)
    state = new_game("quadrennial", deck=deck)
    first = sorted(legal_moves(state))[0]
    after = apply_move(state, first)
    events = [
        start_event("quadrennial", deck, at=2**63),
        move_event(state, first, at=-(2**63)) | {"cid": 2**64 - 1},
        move_event(after, sorted(legal_moves(after))[0], at=2**62 - 1) | {"cid": -(2**62)},
        resign_event(at=-(2**62)),
    ]
    events[2]["revealed"] = ["AS"]  # not what the engine turns up: kept as it was
    assert _nan_free(decode_game(encode_game(events))) == _nan_free(events)
    with pytest.raises(CorruptEvent):
        encode_game([events[0] | {"at": 2**64}])  # msgpack cannot hold it
    with pytest.raises(CorruptEvent):
        encode_game([events[0] | {"seed": "\ud800"}])  # a lone surrogate is no UTF-8 text


def test_what_no_record_can_hold_is_refused_with_corrupt_event() -> None:
    start = start_event("swiss", deal_deck("swiss", 3), at=0)
    state = new_game("swiss", deck=start["deck"])
    illegal = {"type": "moved", "v": 1, "move": "t1t1", "revealed": [], "at": 1}
    for events in (
        [],
        [resign_event(at=0)],
        [start, illegal],
        [start, resign_event(at=1), move_event(state, sorted(legal_moves(state))[0], at=2)],
        [start | {"deck": tuple(start["deck"])}],  # a tuple would come back a list
        [start | {"deck": start["deck"][:51]}],
    ):
        with pytest.raises(CorruptEvent):
            encode_game(events)


GOLDEN = (
    "534152012d01010102a29c7ef1cd78bf7480039d95289da355ad6e1fa8e5e381245f22196f80a0a484ce670e"
    "0ca413a413a413a413a413a413a413a413a413a413f61ca413029051096162616e646f6e6564c6081ff3"
)


def _golden_events() -> Events:
    deck = deal_deck("quadrennial", 40)
    events = [start_event("quadrennial", deck, at=1_780_000_000_000)]
    state = new_game("quadrennial", deck=deck)
    for i in range(12):
        legal = sorted(legal_moves(state))
        move = legal[i % len(legal)]
        event = move_event(state, move, at=1_780_000_000_000 + 1234 * (i + 1))
        event["cid"] = 7 + i
        events.append(event)
        state = apply_move(state, move)
    events.append(resign_event(at=1_780_000_020_000) | {"reason": "abandoned"})
    return events


def test_the_golden_record_has_not_drifted() -> None:
    """These bytes are format 1: if this fails, the format changed; bump FORMAT_VERSION and keep
    a reader for the old one rather than edit the vector."""
    record = encode_game(_golden_events())
    assert record.hex() == GOLDEN
    assert decode_game(bytes.fromhex(GOLDEN)) == _golden_events()


def _resealed(body: bytes) -> bytes:
    return body + zlib.crc32(body).to_bytes(4, "big")


def test_damaged_records_are_refused_with_corrupt_record() -> None:
    record = encode_game(_golden_events())
    assert issubclass(CorruptRecord, ServerError)
    assert CorruptRecord.code == "corrupt_record"
    bad = [
        b"",
        record[:3],
        b"XYZ" + record[3:],
        MAGIC + bytes([FORMAT_VERSION + 1]) + record[4:],
        record[:-1],
        record[:10] + bytes([record[10] ^ 1]) + record[11:],
        _resealed(record[:-4] + b"\x00"),  # bytes after the end
        _resealed(record[:-10]),  # cut short, checksum right
        _resealed(record[:4] + b"\xff\x7f" + record[5:-4]),  # unknown flags
        _resealed(record[:4] + b"\x00\x05" + record[6:-4]),  # unknown variant
        _resealed(record[:4] + b"\xff" * 12),  # a number too long
    ]
    for data in bad:
        with pytest.raises(CorruptRecord):
            decode_game(data)
    with pytest.raises(CorruptRecord):
        decode_game("not bytes")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_damage_behind_a_good_checksum_is_a_game_or_corrupt_record(data: st.DataObject) -> None:
    """A forged record (checksum recomputed) never raises anything but CorruptRecord, and what
    it decodes to is a game the fold accepts."""
    body = bytearray(encode_game(_golden_events())[:-4])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(4, len(body) - 1))
        body[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(4, len(body)))
    try:
        events = decode_game(_resealed(bytes(body[:cut])))
    except CorruptRecord:
        return
    fold(events)
