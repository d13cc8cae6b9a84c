"""How one game stream's events are stored in a record: exact, so
``decode_game(encode_game(events)) == events``.

The compact game record (``shared.record``, docs/records.md: a few bytes a move) for every game
it can say; a stream it cannot (events it does not know, a game cut short by a corrupt entry)
is kept as zlib-compressed msgpack instead, behind a one-byte tag, so nothing is ever refused.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack

from shared import record
from shared.errors import ArenaError

_FALLBACK = b"Z"  # a compact record starts with record.MAGIC instead


def encode_game(events: Sequence[Mapping[str, Any]]) -> bytes:
    plain = [dict(e) for e in events]
    # A game the compact record cannot give back exactly is kept whole instead: never refused.
    with contextlib.suppress(ArenaError, ValueError, TypeError, KeyError, IndexError):
        compact = record.encode_game(plain)
        if record.decode_game(compact) == plain:
            return compact
    return _FALLBACK + zlib.compress(msgpack.packb(plain), 9)


def decode_game(data: bytes) -> list[dict[str, Any]]:
    """The events back; ValueError (or the record's own ArenaError) for bytes that are not."""
    if data[:1] != _FALLBACK:
        return record.decode_game(data)
    events = msgpack.unpackb(zlib.decompress(data[1:]))
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ValueError("a game record is a list of event maps")
    return events
