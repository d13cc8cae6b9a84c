"""How one event is stored: a msgpack envelope carrying a schema version, so old streams stay
readable after the event format changes (docs/storage.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack

SCHEMA_VERSION = 1
"""The envelope version written today; ``decode`` accepts every version in ``READABLE``."""

READABLE = frozenset({1})

FIELD = b"d"
"""The one field of a Redis stream entry that holds the envelope."""


class DecodeError(ValueError):
    """Bytes that are not an envelope this code can read; the store names the stream and entry."""


def encode(event: Mapping[str, Any]) -> bytes:
    """Pack one event; raises TypeError for a non-mapping or a value msgpack cannot carry."""
    if not isinstance(event, Mapping):
        raise TypeError(f"an event is a mapping, not {type(event).__name__}")
    return msgpack.packb({"v": SCHEMA_VERSION, "e": dict(event)}, use_bin_type=True)


def decode(payload: bytes | None) -> dict[str, Any]:
    """Unpack one envelope into a fresh event dict, or raise DecodeError saying what is wrong."""
    if payload is None:
        raise DecodeError(f"no {FIELD.decode()!r} field")
    try:
        envelope = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise DecodeError(f"not valid msgpack ({type(exc).__name__}: {exc})") from exc
    if not isinstance(envelope, dict) or "v" not in envelope:
        raise DecodeError("not an event envelope (a map with a schema version 'v')")
    version = envelope["v"]
    if isinstance(version, bool) or not isinstance(version, int) or version not in READABLE:
        raise DecodeError(f"unknown schema version {version!r}")
    event = envelope.get("e")
    if not isinstance(event, dict):
        raise DecodeError("the envelope holds no event map")
    return event
