"""The websockets internals the outbox relies on (server/net/ws_adapter.py): this fails loudly
when an installed websockets no longer has them or they no longer behave, and the public paths
still deliver the same messages without them."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from enum import Enum

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.net import ws_adapter
from server.net.ws_adapter import (
    INTERNALS,
    framed,
    plain,
    queue_binary,
    quick_paths_available,
    settled_plain,
    write_pending,
)
from shared import protocol as p

MESSAGES = [{"type": "pong", "at": i} for i in range(5)] + [{"type": "left", "room": "r" * 300}]
FRAMES = [p.encode(m) for m in MESSAGES]

Handler = Callable[[ServerConnection], Awaitable[None]]


async def served(handler: Handler, *, compression: str | None = None) -> list[bytes]:
    """Run ``handler`` on a real server connection; what a real client received, in order,
    until the server closed."""
    done = asyncio.Event()

    async def run(ws: ServerConnection) -> None:
        try:
            await handler(ws)
        finally:
            done.set()
            await ws.close()

    async with serve(run, "127.0.0.1", 0, compression=compression) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", compression=compression) as client:
            received = [frame async for frame in client]
        await done.wait()
    assert all(isinstance(frame, bytes) for frame in received)
    return [bytes(frame) for frame in received]


async def test_the_installed_websockets_has_every_internal_the_outbox_reads() -> None:
    """If this fails after a websockets upgrade, the outbox takes its slower public path (it
    still works); update ws_adapter.py for the new internals, or drop the shortcut."""
    found: dict[str, bool] = {}

    async def probe(ws: ServerConnection) -> None:
        found.update(quick_paths_available(ws))
        assert ws.send_in_progress is None  # nothing sent yet: the attribute says so
        assert plain(ws.protocol)
        assert isinstance(ws.protocol.writes, list)

    await served(probe)
    assert found == dict.fromkeys(INTERNALS, True), f"websockets internals changed: {found}"
    assert ws_adapter.QUICK_WRITES


@pytest.mark.parametrize("quick", [True, False], ids=["internals", "public"])
async def test_frames_queued_reach_a_real_client_in_order(
    quick: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ws_adapter, "QUICK_WRITES", quick)
    appended: list[bool] = []

    async def send(ws: ServerConnection) -> None:
        for frame in FRAMES:
            wire = framed(frame)
            assert queue_binary(ws, frame, wire)
            appended.append(any(data is wire for data in ws.protocol.writes))
        write_pending(ws)

    assert await served(send) == FRAMES
    assert appended == [quick] * len(FRAMES)  # the buffer took the framed bytes as they were


async def test_a_connection_with_an_extension_frames_each_message_itself() -> None:
    """permessage-deflate frames differently: the shared framing is not used, the messages
    still arrive (the arena's server turns compression off)."""

    async def send(ws: ServerConnection) -> None:
        assert not plain(ws.protocol)
        for frame in FRAMES:
            assert queue_binary(ws, frame, framed(frame))
        write_pending(ws)

    assert await served(send, compression="deflate") == FRAMES


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 200_000])
def test_framed_is_what_a_server_protocol_sends(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    protocol = ServerProtocol()
    protocol.state = State.OPEN
    assert plain(protocol)
    protocol.send_binary(payload)
    assert protocol.data_to_send() == [framed(payload)]


class _Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.eof = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True


class _Ws:
    """A connection without ``send_in_progress``: what the adapter falls back to."""

    def __init__(self) -> None:
        self.protocol = ServerProtocol()
        self.protocol.state = State.OPEN
        self.transport = _Transport()


def test_a_fragmented_send_under_way_takes_no_frame_even_without_send_in_progress() -> None:
    ws = _Ws()
    ws.protocol.send_binary(b"first part", fin=False)
    assert not plain(ws.protocol)
    assert not queue_binary(ws, b"x", framed(b"x"))  # send_binary's own refusal
    ws.protocol.send_continuation(b"last part", fin=True)
    assert queue_binary(ws, b"x", framed(b"x"))


def test_a_closing_connection_takes_no_frame() -> None:
    ws = _Ws()
    ws.protocol.send_close(1001)
    assert ws.protocol.state is State.CLOSING
    assert not queue_binary(ws, b"x", framed(b"x"))


def test_the_frames_of_a_turn_are_one_write_and_the_end_of_stream_a_half_close() -> None:
    ws = _Ws()
    for frame in (b"one", b"two"):
        assert queue_binary(ws, frame, framed(frame))
    write_pending(ws)
    assert ws.transport.written == [framed(b"one") + framed(b"two")]
    ws.protocol.fail(1011)  # a server that fails sends a close frame, then ends the stream
    write_pending(ws)
    assert len(ws.transport.written) == 2
    assert ws.transport.eof


def test_a_write_empties_the_protocols_buffer_in_place() -> None:
    """No new list a write (each lived until the next and was scanned by the collector); what
    websockets queues itself afterwards still goes out, after ours."""
    ws = _Ws()
    buffer = ws.protocol.writes
    assert queue_binary(ws, b"one", framed(b"one"))
    write_pending(ws)
    assert ws.protocol.writes is buffer
    assert buffer == []
    ws.protocol.send_ping(b"p")  # websockets' own frame, into the same buffer
    write_pending(ws)
    assert ws.transport.written[0] == framed(b"one")
    assert ws.transport.written[1][:1] == b"\x89"  # FIN + ping
    assert ws.protocol.writes is buffer


def test_without_the_internals_the_probe_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(INTERNALS, "ServerProtocol", ("no_such_attribute",))
    assert not ws_adapter._probe()
    monkeypatch.setitem(INTERNALS, "ServerConnection", ("no_such_attribute",))
    assert quick_paths_available(_Ws()) == {"ServerProtocol": False, "ServerConnection": False}


def test_a_kept_settled_plain_still_sees_a_fragmented_send() -> None:
    """A connection keeps ``settled_plain``; the fragmented-send part is still asked each time."""
    ws = _Ws()
    settled = settled_plain(ws.protocol)
    assert settled
    ws.protocol.send_binary(b"first part", fin=False)
    assert not queue_binary(ws, b"x", framed(b"x"), settled)
    ws.protocol.send_continuation(b"last part", fin=True)
    wire = framed(b"x")
    assert queue_binary(ws, b"x", wire, settled)
    assert ws.protocol.writes[-1] is wire


async def test_a_handed_off_socket_gets_the_connection_serve_would_have_made() -> None:
    """``connection_factory`` rebuilds serve()'s per-connection closure (server.net.handoff):
    if a websockets upgrade changes what serve() builds, this fails and names the attribute."""
    options = {"max_size": 4096, "compression": None, "close_timeout": 2}
    made: dict[str, ServerConnection] = {}
    done = asyncio.Event()

    async def keep(ws: ServerConnection) -> None:
        made["serve" if "serve" not in made else "factory"] = ws
        if len(made) == 2:
            done.set()
        await ws.wait_closed()

    async with serve(keep, "127.0.0.1", 0, **options) as server:  # type: ignore[arg-type]
        port = server.sockets[0].getsockname()[1]
        factory = ws_adapter.connection_factory(server, max_size=4096, close_timeout=2)
        spare = socket.create_server(("127.0.0.1", 0))
        spare.setblocking(False)
        loop = asyncio.get_running_loop()
        async with connect(f"ws://127.0.0.1:{port}", compression=None):
            await until_made(made, "serve")
            other = spare.getsockname()[1]
            connecting = asyncio.ensure_future(connect(f"ws://127.0.0.1:{other}", compression=None))
            accepted, _ = await loop.sock_accept(spare)
            await loop.connect_accepted_socket(factory, accepted)
            client = await connecting
            await asyncio.wait_for(done.wait(), 5)
            ours, theirs = made["factory"], made["serve"]
            # Every setting: what is a number, a flag, a name or nothing, on the connection,
            # its protocol (the handshake is over on both) and its message queue.
            for mine, serves in (
                (ours, theirs),
                (ours.protocol, theirs.protocol),
                (ours.recv_messages, theirs.recv_messages),
            ):
                assert settings(mine) == settings(serves)
            assert ours.server is theirs.server
            assert ours.protocol.logger.logger is theirs.protocol.logger.logger  # type: ignore[union-attr]
            assert ours in server.connections  # closed with the server, as its own
            await client.close()
        spare.close()


async def until_made(made: dict[str, ServerConnection], key: str) -> None:
    async with asyncio.timeout(5):
        while key not in made:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


def settings(obj: object) -> dict[str, object]:
    return {
        k: v
        for k, v in vars(obj).items()
        if k != "id" and isinstance(v, (int, float, str, bool, type(None), Enum))
    }
