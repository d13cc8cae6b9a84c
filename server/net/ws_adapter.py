"""Every reach into websockets' internals, in one place, each with a fallback to its public API.

The outbox frames a fan-out's message once for all its recipients and writes each connection's
frames of a loop turn in one write (docs/benchmarks.md: websockets' framing was a fifth of a
loaded server, one ``send`` a frame a quarter). That appends to the Sans-I/O protocol's
``writes`` buffer (and empties it in place when it writes), reads its
``expect_continuation_frame`` and ``debug``, and skips a connection whose ``send_in_progress``
(a fragmented send) is set, as websockets' own ``broadcast()`` does.
``INTERNALS`` lists them; tests/server/net/test_ws_adapter.py fails loudly when an installed
websockets no longer has them, and the outbox then takes the public path (``send_binary``).
A lost connection also ends its protocol's parser generator (``ReleasingConnection``), which
otherwise keeps the protocol in a cycle; without a ``parser`` it does nothing, and
tests/server/net/test_connection.py fails when a protocol is no longer freed at once.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import Server, ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import InvalidState, ProtocolError
from websockets.frames import Opcode
from websockets.protocol import Protocol, Side, State
from websockets.server import ServerProtocol

INTERNALS: dict[str, tuple[str, ...]] = {
    "ServerProtocol": ("writes", "expect_continuation_frame", "debug"),
    "ServerConnection": ("send_in_progress",),
}
"""The private attributes the quick paths read (on an instance)."""


def _has(instance: object, names: tuple[str, ...]) -> bool:
    return all(hasattr(instance, name) for name in names)


def _probe() -> bool:
    return _has(ServerProtocol(), INTERNALS["ServerProtocol"])


QUICK_WRITES = _probe()
"""Whether frames framed once (``framed``) may be appended to a protocol's buffer: checked once,
at import, so the hot path pays nothing for it."""


_FIN_BINARY = 0x80 | Opcode.BINARY.value
_HEAD_7 = struct.Struct("!BB").pack
_HEAD_16 = struct.Struct("!BBH").pack
_HEAD_64 = struct.Struct("!BBQ").pack


def framed(payload: bytes) -> bytes:
    """A binary message as a server sends it on the wire (FIN, unmasked, no extension).

    The same bytes for every recipient, so a fan-out frames each message once instead of once
    per connection. RFC 6455's header written here: websockets' ``Frame.serialize`` took 1.3 µs
    a frame to this 0.16, four to seven frames a move (tests compare the bytes with it).
    """
    length = len(payload)
    if length < 126:
        return _HEAD_7(_FIN_BINARY, length) + payload
    if length < 65536:
        return _HEAD_16(_FIN_BINARY, 126, length) + payload
    return _HEAD_64(_FIN_BINARY, 127, length) + payload


def settled_plain(protocol: Protocol) -> bool:
    """The part of ``plain`` that is settled once the handshake is done (side, extensions,
    debug): a connection keeps it, instead of re-checking it for every frame it is sent."""
    return (
        QUICK_WRITES
        and protocol.side is Side.SERVER
        and not protocol.extensions
        and not protocol.debug
    )


def plain(protocol: Protocol) -> bool:
    """Whether this connection frames binary messages exactly as ``framed`` does."""
    return settled_plain(protocol) and not protocol.expect_continuation_frame


def queue_binary(
    ws: ServerConnection, frame: bytes, wire: bytes | None = None, settled: bool | None = None
) -> bool:
    """Queue one binary message in the connection's protocol (``wire``: it already ``framed``,
    if known; ``settled``: the connection's ``settled_plain``, if kept); False when it cannot
    take one now (closing, or a fragmented send under way), as ``broadcast()`` skips such a
    connection. Nothing is written yet: see ``write_pending``."""
    protocol = ws.protocol
    if protocol.state is not State.OPEN or getattr(ws, "send_in_progress", None) is not None:
        return False
    if settled is None:
        settled = settled_plain(protocol)
    if wire is not None and settled and not protocol.expect_continuation_frame:
        protocol.writes.append(wire)  # what send_binary would have appended
        return True
    try:
        protocol.send_binary(frame)
    except (ProtocolError, InvalidState):  # without send_in_progress: the public refusal
        return False
    return True


def write_pending(ws: ServerConnection) -> None:
    """What websockets' ``send_data`` does, with the pending frames joined into one write.

    The frames are taken from the protocol's buffer and the list is emptied in place:
    ``data_to_send`` gives a new list to every connection at every write, and each lived until
    that connection's next write, for the collector to scan young and middle (twelve a move,
    the most numerous of a paced server's promoted objects)."""
    transport = ws.transport
    writes = ws.protocol.writes if QUICK_WRITES else None
    if type(writes) is list and all(writes):  # no SEND_EOF (b"") among them
        if writes:
            data = writes[0] if len(writes) == 1 else b"".join(writes)
            writes.clear()
            transport.write(data)
        return
    joined: list[bytes] = []
    for data in ws.protocol.data_to_send():
        if data:
            joined.append(data)
            continue
        if joined:
            transport.write(b"".join(joined))
            joined = []
        # The end of the stream: half-close, or close (as send_data does).
        if transport.can_write_eof():
            with contextlib.suppress(Exception):
                transport.write_eof()
        else:
            transport.close()
    if joined:
        transport.write(joined[0] if len(joined) == 1 else b"".join(joined))


def quick_paths_available(ws: ServerConnection) -> dict[str, bool]:
    """Which internals the installed websockets has, on a live server connection ``ws`` (for
    the adapter test and the log)."""
    return {
        "ServerProtocol": _has(ws.protocol, INTERNALS["ServerProtocol"]),
        "ServerConnection": _has(ws, INTERNALS["ServerConnection"]),
    }


class ReleasingConnection(ServerConnection):
    """A ``ServerConnection`` whose Sans-I/O protocol is freed by reference counting once the
    connection is lost. The protocol's parser is a generator of its own methods (``parse``,
    then ``discard``) that stays suspended at its last ``yield`` after the end of the stream,
    holding the protocol, its reader and its buffers in a cycle until the collector's next full
    pass, minutes apart on a busy server (server/runtime/gc_timer.py): a few KiB per connection
    ever made, waiting there (bench.soak)."""

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        release_parser(self.protocol)


def release_parser(protocol: Protocol) -> None:
    """End a closed protocol's parser, which breaks its cycle. Nothing steps it again: once the
    reader has seen the end of the stream, ``receive_data`` and ``receive_eof`` return or raise
    before they would."""
    parser: Any = getattr(protocol, "parser", None)
    at_eof = getattr(getattr(protocol, "reader", None), "eof", False)
    if protocol.state is State.CLOSED and at_eof and hasattr(parser, "close"):
        parser.close()


def connection_factory(
    server: Server, *, max_size: int | None, close_timeout: float | None
) -> Callable[[], ServerConnection]:
    """What ``serve`` builds for each connection it accepts (its ``protocol_factory`` closure,
    which websockets does not expose), for sockets accepted outside it: the ones a worker is
    handed (server.net.handoff). Only the options the server passes to ``serve`` differ from
    websockets' defaults; the adapter test compares a connection made here with one ``serve``
    accepted, attribute by attribute."""

    def factory() -> ServerConnection:
        protocol = ServerProtocol(max_size=max_size, logger=server.logger)
        return ReleasingConnection(protocol, server, close_timeout=close_timeout)

    return factory


def forget_handshake(ws: ServerConnection) -> None:
    """Drop the opening handshake's headers and response (3 KiB of every idle connection):
    read by ``process_request`` and the handshake only, both done by now. The request itself
    stays: websockets takes a connection without one as still shaking hands."""
    if ws.request is not None:
        ws.request.headers = _NO_HEADERS
    ws.response = None


_NO_HEADERS = Headers()
"""What a connection's request keeps of its headers once open: the same empty one for all."""
