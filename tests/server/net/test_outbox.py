"""The outbox: each message framed once, as websockets would; one write per connection a loop
turn, with the hooks that queue frames for it (a room's tick) run first; an ack written at once."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from websockets.protocol import State
from websockets.server import ServerProtocol

from server.net.connection import Outbox
from server.net.ws_adapter import framed


class _Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.unsent = 0  # bytes the kernel has not taken yet

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def get_write_buffer_size(self) -> int:
        return self.unsent


class _Ws:
    """What the outbox touches of a websockets connection: its protocol and its transport."""

    def __init__(self) -> None:
        self.protocol = ServerProtocol()
        self.protocol.state = State.OPEN
        self.transport = _Transport()
        self.send_in_progress = None


class _Connection:
    def __init__(self) -> None:
        self.ws = _Ws()
        self.queued = False
        self.session = "s"
        self.plain = True  # what Connection keeps: settled_plain of its protocol
        self.config = SimpleNamespace(max_outbound_bytes=1000)
        self.dropped = 0

    def drop_slow(self) -> None:
        self.dropped += 1


def _outbox_and_connection() -> tuple[Outbox, Any, _Transport]:
    connection = _Connection()
    return Outbox(), connection, connection.ws.transport


async def test_a_hooks_frames_go_out_in_the_flush_it_runs_in() -> None:
    """A room's tick opened through ``soon`` is written in the next loop turn, not the one
    after (each turn of a loaded server is milliseconds)."""
    outbox, connection, transport = _outbox_and_connection()
    outbox.soon(lambda c: outbox.queue(c, b"tick"), connection)
    await asyncio.sleep(0)
    assert transport.written == [framed(b"tick")]


async def test_frames_queued_in_one_turn_are_one_write() -> None:
    outbox, connection, transport = _outbox_and_connection()
    outbox.queue(connection, b"one")
    outbox.soon(lambda c: outbox.queue(c, b"two"), connection)
    outbox.queue(connection, b"three")
    assert transport.written == []
    await asyncio.sleep(0)
    assert transport.written == [framed(b"one") + framed(b"three") + framed(b"two")]


async def test_a_cancelled_hook_does_not_run_and_a_failing_one_stops_nothing() -> None:
    outbox, connection, transport = _outbox_and_connection()
    ran: list[str] = []

    def fail(_: Any) -> None:
        raise RuntimeError("hook")

    outbox.soon(ran.append, "cancelled").cancel()
    outbox.soon(fail, None)
    outbox.soon(lambda c: outbox.queue(c, b"after"), connection)
    await asyncio.sleep(0)
    assert ran == []
    assert transport.written == [framed(b"after")]
    outbox.queue(connection, b"next turn")  # the flush is scheduled again as ever
    await asyncio.sleep(0)
    assert transport.written[-1] == framed(b"next turn")


async def test_write_now_writes_at_once_and_leaves_the_flush_nothing() -> None:
    """An ack goes out with what was queued before it, in the turn its append is answered."""
    outbox, connection, transport = _outbox_and_connection()
    outbox.queue(connection, b"event")
    outbox.queue(connection, b"ack")
    outbox.write_now(connection)
    assert transport.written == [framed(b"event") + framed(b"ack")]
    await asyncio.sleep(0)
    assert len(transport.written) == 1
    outbox.write_now(connection)  # nothing queued: no empty write
    assert len(transport.written) == 1


async def test_a_write_that_leaves_the_limit_behind_drops_the_slow_reader() -> None:
    """Answers queued in one turn for a client that reads nothing go out in one write; no frame
    may follow them, so the limit is asked after the write, not only on the next queuing."""
    outbox, connection, transport = _outbox_and_connection()
    outbox.queue(connection, b"within")
    await asyncio.sleep(0)
    assert connection.dropped == 0
    for _ in range(50):
        outbox.queue(connection, b"x" * 100)
    transport.unsent = 5000  # the kernel took little of it
    await asyncio.sleep(0)
    assert connection.dropped == 1
