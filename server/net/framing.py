"""Batch framing (to move to shared/protocol.py with the client's copy)."""

from __future__ import annotations

import msgpack

from shared import protocol as p


def batch_frame(frames: list[bytes]) -> bytes:
    """One ``batch`` frame holding already-encoded messages, without decoding them."""
    return b"".join((_BATCH_HEAD, array_header(len(frames)), *frames))


def array_header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


_BATCH_HEAD = msgpack.packb({"type": p.BATCH, "messages": None})[:-1]  # up to the list
