"""The compact game record: one game's events in a few bytes per move (docs/records.md).

A move is stored as its index among the sorted legal moves of the position before it, packed
with its think time into one varint; the deal is a seed or a 29-byte deck rank. Whatever the
compact form cannot say (an unusual field, a client move id out of sequence) rides along in a
small msgpack map beside its event, so decoding gives back exactly the events encoded.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import msgpack

from shared.cards import FULL_DECK
from shared.deal import DEAL_VERSION, deal_deck
from shared.errors import CorruptEvent, IllegalMove, ServerError
from shared.events import GAME_STARTED, MOVED, RESIGNED, check_event
from shared.game import apply_move_revealing, lay_out, legal_moves, resign
from shared.state import GameState
from shared.variants import VARIANTS

__all__ = ["FORMAT_VERSION", "MAGIC", "CorruptRecord", "decode_game", "encode_game"]

MAGIC = b"SAR"
FORMAT_VERSION = 1

# Header flags (docs/records.md, "Header").
_SEED_KIND = 0b11  # 0: no "seed" key, 1: None, 2: an int, 3: a str
_DECK_STORED = 1 << 2
_MOVE_IDS = 1 << 3
_START_EXTRAS = 1 << 4
_RESIGNED = 1 << 5
_KNOWN_FLAGS = 0b111111
# Resignation flags.
_RESIGN_EXTRAS = 1 << 0
_RESIGN_REASON = 1 << 1

_DECK_BYTES = 29  # 52! < 2**226
_DECK_RANKS = math.factorial(52)
_MAX_VARINT = 10  # bytes: 70 bits, past any time or index a game holds
_MAX_SEED_VARINT = 64
_SMALL = 1 << 62  # times and ids within ±this are numbers in the compact form, others extras
_REMOVED = msgpack.ExtType(0, b"")  # in an extras map: this standard field is absent

Event = dict[str, Any]


class CorruptRecord(ServerError):
    """Bytes that are not a game record of a known format version (truncated, damaged, forged)."""

    code = "corrupt_record"


# ---- bytes ----------------------------------------------------------------------------------


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _small(value: object) -> int | None:
    """An int the compact form holds as a number (a time, a move id), or None."""
    return value if type(value) is int and -_SMALL <= value < _SMALL else None


def _zigzag(value: int) -> int:
    return value * 2 if value >= 0 else -value * 2 - 1


def _unzigzag(value: int) -> int:
    return value // 2 if value % 2 == 0 else -(value + 1) // 2


def _utf8(value: object) -> TypeGuard[str]:
    """A str that is text in UTF-8 (no lone surrogate): what a record's text fields hold."""
    if type(value) is not str:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(out: bytearray, text: str) -> None:
    data = text.encode("utf-8")
    _varint(out, len(data))
    out += data


class _Reader:
    """Reads a record's fields in order; CorruptRecord at the first byte that does not fit."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.version = 0  # the events' schema version, read from the header

    def varint(self, limit: int = _MAX_VARINT) -> int:
        value = shift = 0
        for _ in range(limit):
            if self.pos >= len(self.data):
                raise CorruptRecord("the record ends in the middle of a number")
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
        raise CorruptRecord("the record holds a number too long to be one")

    def take(self, count: int) -> bytes:
        if count > len(self.data) - self.pos:
            raise CorruptRecord("the record ends in the middle of a field")
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk

    def text(self) -> str:
        try:
            return self.take(self.varint()).decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptRecord("the record holds text that is not UTF-8") from None

    def extras(self) -> dict[str, Any]:
        blob = self.take(self.varint())
        if not blob:
            return {}
        try:
            extras = msgpack.unpackb(
                blob, raw=False, strict_map_key=True, use_list=True, ext_hook=_ext
            )
        except CorruptRecord:
            raise
        except Exception:  # msgpack raises a family of unrelated exceptions for bad bytes
            raise CorruptRecord("the record holds extra fields that are not msgpack") from None
        if type(extras) is not dict or not all(type(k) is str for k in extras):
            raise CorruptRecord("the record's extra fields are not a map of names")
        if "type" in extras:
            raise CorruptRecord("the record's extra fields cannot change an event's type")
        return extras


def _ext(code: int, data: bytes) -> Any:
    if code == 0 and not data:
        return _REMOVED
    raise CorruptRecord(f"the record holds an unknown msgpack extension {code}")


# ---- exactness ------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1, 1.0 and True are three values here)."""
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if type(a) is float and a != a:
        return b != b  # NaN comes back NaN
    return bool(a == b)


def _diff(event: Mapping[str, Any], standard: Mapping[str, Any]) -> dict[str, Any]:
    """What turns the standard event into this one: fields set, and standard fields removed."""
    extras = {k: v for k, v in event.items() if k not in standard or not _same(v, standard[k])}
    extras.update({k: _REMOVED for k in standard if k not in event})
    return extras


def _pack_extras(out: bytearray, extras: dict[str, Any], what: str) -> None:
    try:
        blob = msgpack.packb(extras, use_bin_type=True)
        back = msgpack.unpackb(blob, raw=False, strict_map_key=True, ext_hook=_ext)
    except Exception as exc:  # what msgpack cannot pack: a foreign type, a huge int
        raise CorruptEvent(f"{what} has a field a record cannot hold: {exc}") from None
    if not all(type(k) is str for k in extras) or not _same(back, extras):
        raise CorruptEvent(f"{what} has a field a record cannot hold exactly (a tuple, a key?)")
    _varint(out, len(blob))
    out += blob


def _patched(standard: Event, extras: Mapping[str, Any]) -> Event:
    for key, value in extras.items():
        if type(value) is msgpack.ExtType and value == _REMOVED:
            standard.pop(key, None)
        else:
            standard[key] = value
    return standard


# ---- the deck -------------------------------------------------------------------------------

_CARD_INDEX = {card: i for i, card in enumerate(FULL_DECK)}
_CARDS = frozenset(FULL_DECK)


def _deck_rank(deck: Sequence[str]) -> int:
    """The deck's rank among all orders of FULL_DECK (its Lehmer code, first card most
    significant)."""
    left = list(range(52))
    rank = 0
    for i, card in enumerate(deck):
        at = left.index(_CARD_INDEX[card])
        left.pop(at)
        rank = rank * (52 - i) + at
    return rank


def _deck_of(rank: int) -> list[str]:
    digits = []
    for base in range(1, 53):
        rank, digit = divmod(rank, base)
        digits.append(digit)
    left = list(FULL_DECK)
    return [left.pop(d) for d in reversed(digits)]


# ---- encoding -------------------------------------------------------------------------------


def _check_deck(deck: object) -> list[str]:
    if type(deck) is not list or len(deck) != 52 or not all(type(c) is str for c in deck):
        raise CorruptEvent("game_started holds no deck of the 52 cards")
    if set(deck) != _CARDS:
        raise CorruptEvent("game_started holds no deck of the 52 cards")
    return deck


def _header(out: bytearray, start: Mapping[str, Any]) -> tuple[GameState, dict[str, Any], int]:
    """The start event's fields; the state it lays out, its standard event and the flags."""
    variant = start.get("variant")
    if variant not in VARIANTS:
        raise CorruptEvent(f"game_started names an unknown variant {variant!r}")
    deal_version = start.get("deal_version")
    if type(deal_version) is not int or not 0 <= deal_version < 1 << 63:
        deal_version = 0  # an odd one is kept as an extra field
    deck = _check_deck(start.get("deck"))
    standard: Event = {"type": GAME_STARTED, "v": start["v"], "variant": variant}
    standard |= {"deal_version": deal_version, "deck": deck}
    flags = 0
    seed = start.get("seed")
    body = bytearray()
    if "seed" in start:
        standard["seed"] = seed
        if seed is None:
            flags |= 1
        elif type(seed) is int and seed.bit_length() < 7 * _MAX_SEED_VARINT - 1:
            flags |= 2
            _varint(body, _zigzag(seed))
        elif _utf8(seed):
            flags |= 3
            _text(body, seed)
        else:
            standard["seed"] = None
            flags |= 1  # an odd seed: stored as an extra field
    dealt = (flags & _SEED_KIND) in (2, 3) and deal_version == DEAL_VERSION
    if not (dealt and isinstance(seed, int | str) and deal_deck(variant, seed) == deck):
        flags |= _DECK_STORED
        body += _deck_rank(deck).to_bytes(_DECK_BYTES, "big")
    at = _small(start.get("at"))
    standard["at"] = at if at is not None else 0
    _varint(body, _zigzag(standard["at"]))
    out += body
    return lay_out(variant, deck), standard, flags


def encode_game(events: Sequence[Mapping[str, Any]]) -> bytes:
    """The compact record of one game's events (docs/records.md); CorruptEvent for events that
    do not make a game (the fold would refuse them) or that a record cannot hold exactly."""
    if not events:
        raise CorruptEvent("no events: a game starts with a game_started event")
    for event in events:
        check_event(event)
    start = events[0]
    if start["type"] != GAME_STARTED:
        raise CorruptEvent(f"a game starts with a game_started event, not {start['type']}")
    version = start["v"]
    body = bytearray()
    state, standard, flags = _header(body, start)
    moves = list(events[1:])
    resigned = None
    if moves and moves[-1]["type"] == RESIGNED:
        resigned = moves.pop()
        flags |= _RESIGNED
    if any(e["type"] != MOVED for e in moves):
        raise CorruptEvent("a game holds one game_started, then moves, then a resignation")
    ids = bool(moves) and all("cid" in e for e in moves)
    first_id = _small(moves[0]["cid"]) if ids else None
    next_id = first_id if first_id is not None else 0
    start_extras = _diff(start, standard)
    out = bytearray(MAGIC)
    out.append(FORMAT_VERSION)
    flags |= (_MOVE_IDS if ids else 0) | (_START_EXTRAS if start_extras else 0)
    _varint(out, flags)
    _varint(out, VARIANTS.index(start["variant"]))
    _varint(out, version)
    _varint(out, standard["deal_version"])
    out += body
    if ids:
        _varint(out, _zigzag(next_id))
    if start_extras:
        _pack_extras(out, start_extras, "game_started")
    _varint(out, len(moves))
    prev_at = standard["at"]
    for number, event in enumerate(moves, 1):
        legal = sorted(legal_moves(state))
        move = event.get("move")
        if type(move) is not str or move not in legal:
            raise CorruptEvent(f"move {number}, {move!r}, is not legal there")
        index = legal.index(move)
        state, revealed = apply_move_revealing(state, move)
        at = _small(event.get("at"))
        delta = at - prev_at if at is not None else 0
        standard = {"type": MOVED, "v": version, "move": move, "revealed": revealed}
        standard["at"] = prev_at + delta
        if ids:
            standard["cid"] = next_id
        extras = _diff(event, standard)
        packed = delta * (len(legal) + 1) + index
        if delta >= 0 and packed < 1 << 63 and not extras:
            _varint(out, packed)
        else:
            _varint(out, len(legal))  # the escape: index, signed delta and extras follow
            _varint(out, index)
            _varint(out, _zigzag(delta))
            if extras:
                _pack_extras(out, extras, f"move {number}")
            else:
                out.append(0)
        if at is not None:
            prev_at = at
        cid = _small(event.get("cid"))
        next_id = cid + 1 if cid is not None else next_id + 1
    if resigned is not None:
        try:
            state = resign(state)
        except IllegalMove as exc:
            raise CorruptEvent(f"stored resignation is not possible: {exc.reason}") from None
        _resignation(out, resigned, version, prev_at)
    out += zlib.crc32(out).to_bytes(4, "big")
    return bytes(out)


def _resignation(out: bytearray, event: Mapping[str, Any], version: int, prev_at: int) -> None:
    at = _small(event.get("at"))
    delta = at - prev_at if at is not None else 0
    standard: Event = {"type": RESIGNED, "v": version, "at": prev_at + delta}
    reason = event.get("reason")
    told = _utf8(reason)
    if _utf8(reason):
        standard["reason"] = reason
    extras = _diff(event, standard)
    _varint(out, (_RESIGN_EXTRAS if extras else 0) | (_RESIGN_REASON if told else 0))
    _varint(out, _zigzag(delta))
    if _utf8(reason):
        _text(out, reason)
    if extras:
        _pack_extras(out, extras, "resigned")


# ---- decoding -------------------------------------------------------------------------------


def decode_game(data: bytes) -> list[dict[str, Any]]:
    """The events a record was encoded from, exactly; CorruptRecord for anything else."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CorruptRecord(f"a record is bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) < len(MAGIC) + 5 or not data.startswith(MAGIC):
        raise CorruptRecord("not a game record: it does not begin with SAR")
    if data[len(MAGIC)] != FORMAT_VERSION:
        raise CorruptRecord(f"game record format {data[len(MAGIC)]}: this code reads format 1")
    if zlib.crc32(data[:-4]).to_bytes(4, "big") != data[-4:]:
        raise CorruptRecord("the game record is damaged: its checksum does not match")
    reader = _Reader(data[: len(data) - 4])
    reader.pos = len(MAGIC) + 1
    events, state, prev_at, next_id, flags = _read_start(reader)
    version = reader.version
    count = reader.varint()
    for number in range(1, count + 1):
        legal = sorted(legal_moves(state))
        quotient, index = divmod(reader.varint(), len(legal) + 1)
        extras: dict[str, Any] = {}
        if index == len(legal):
            if quotient != 0:
                raise CorruptRecord(f"move {number}: an escape with a time")
            index, quotient = reader.varint(), _unzigzag(reader.varint())
            extras = reader.extras()
            if "move" in extras:  # the move is the index's: a writer never overrides it
                raise CorruptRecord(f"move {number}: extra fields name another move")
            if index >= len(legal):
                raise CorruptRecord(f"move {number}: index {index} of {len(legal)} legal moves")
        move = legal[index]
        state, revealed = apply_move_revealing(state, move)
        event: Event = {"type": MOVED, "v": version, "move": move, "revealed": revealed}
        event["at"] = prev_at + quotient
        if flags & _MOVE_IDS:
            event["cid"] = next_id
        event = _patched(event, extras)
        events.append(event)
        at = _small(event.get("at"))
        if at is not None:
            prev_at = at
        cid = _small(event.get("cid"))
        next_id = cid + 1 if cid is not None else next_id + 1
    if flags & _RESIGNED:
        if state.won or state.resigned:
            raise CorruptRecord("the record resigns a game that is over")
        events.append(_read_resignation(reader, version, prev_at))
    if reader.pos != len(reader.data):
        raise CorruptRecord("the game record has bytes after its end")
    return events


def _read_start(reader: _Reader) -> tuple[list[Event], GameState, int, int, int]:
    flags = reader.varint()
    if flags & ~_KNOWN_FLAGS:
        raise CorruptRecord(f"the record has unknown header flags {flags:#x}")
    variant_index = reader.varint()
    if variant_index >= len(VARIANTS):
        raise CorruptRecord(f"the record names unknown variant {variant_index}")
    variant = VARIANTS[variant_index]
    reader.version = reader.varint()
    event: Event = {"type": GAME_STARTED, "v": reader.version, "variant": variant}
    event["deal_version"] = reader.varint()
    kind = flags & _SEED_KIND
    seed: int | str | None = None
    if kind == 2:
        seed = _unzigzag(reader.varint(_MAX_SEED_VARINT))
    elif kind == 3:
        seed = reader.text()
    if flags & _DECK_STORED:
        rank = int.from_bytes(reader.take(_DECK_BYTES), "big")
        if rank >= _DECK_RANKS:
            raise CorruptRecord("the record's deck rank is past the last order of 52 cards")
        deck = _deck_of(rank)
    elif seed is None or event["deal_version"] != DEAL_VERSION:
        raise CorruptRecord("the record has neither a deck nor a seed to deal it from")
    else:
        deck = deal_deck(variant, seed)
    event["deck"] = deck
    if kind:
        event["seed"] = seed
    event["at"] = _unzigzag(reader.varint())
    next_id = _unzigzag(reader.varint()) if flags & _MOVE_IDS else 0
    if flags & _START_EXTRAS:
        event = _patched(event, reader.extras())
    at = _small(event.get("at"))
    prev_at = at if at is not None else 0
    return [event], lay_out(variant, deck), prev_at, next_id, flags


def _read_resignation(reader: _Reader, version: int, prev_at: int) -> Event:
    flags = reader.varint()
    if flags & ~(_RESIGN_EXTRAS | _RESIGN_REASON):
        raise CorruptRecord(f"the record's resignation has unknown flags {flags:#x}")
    event: Event = {"type": RESIGNED, "v": version, "at": prev_at + _unzigzag(reader.varint())}
    if flags & _RESIGN_REASON:
        event["reason"] = reader.text()
    if flags & _RESIGN_EXTRAS:
        event = _patched(event, reader.extras())
    return event
