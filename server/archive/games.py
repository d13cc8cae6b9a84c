"""How one game stream's events are stored in a record: the one function to swap for another
encoder. Exact: ``decode_game(encode_game(events)) == events``."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack


def encode_game(events: Sequence[Mapping[str, Any]]) -> bytes:
    return zlib.compress(msgpack.packb([dict(e) for e in events]), 9)


def decode_game(data: bytes) -> list[dict[str, Any]]:
    events = msgpack.unpackb(zlib.decompress(data))
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ValueError("a game record is a list of event maps")
    return events
