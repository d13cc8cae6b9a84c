"""server.net.handoff: the request line is peeked, not read; sockets pass between workers."""

from __future__ import annotations

import asyncio
import socket

from server.net.handoff import Handoff, request_target


def test_the_target_is_read_from_a_get_request_line_only() -> None:
    assert request_target(b"GET /?room=abc HTTP/1.1\r\nHost: x\r\n") == "/?room=abc"
    assert request_target(b"POST / HTTP/1.1\r\n") is None
    assert request_target(b"\x16\x03\x01\x02\x00") is None  # a TLS hello: nothing to route by
    assert request_target(b"GET /\xff HTTP/1.1\r\n") is None


async def test_a_connection_naming_another_workers_room_is_passed_to_it_unread() -> None:
    """Two Handoffs in one process stand for two workers: worker 0 accepts a connection that
    names a room homed on worker 1; worker 1 gets the socket with the request still unread."""
    from server.kernel.placement import home_worker

    room = next(f"r{i}" for i in range(100) if home_worker(f"r{i}", 2) == 1)
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(2)]
    listener = socket.create_server(("127.0.0.1", 0))
    idle = socket.create_server(("127.0.0.1", 0))  # worker 1's share of the port: unused here
    served: dict[int, asyncio.Queue[socket.socket]] = {0: asyncio.Queue(), 1: asyncio.Queue()}
    workers = [
        Handoff(
            listener=sock,
            inbox=pairs[i][1],
            outboxes=[pair[0] for pair in pairs],
            worker_index=i,
            serve=served[i].put,
        )
        for i, sock in enumerate((listener, idle))
    ]
    for worker in workers:
        worker.start()
    port = listener.getsockname()[1]
    request = f"GET /?room={room} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    plain = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    try:
        for payload, home in ((request, 1), (plain, 0)):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(payload)
            await writer.drain()
            sock = await asyncio.wait_for(served[home].get(), 5)
            sock.setblocking(True)
            assert sock.recv(len(payload), socket.MSG_WAITALL) == payload  # unread till now
            sock.sendall(b"hi")
            assert await reader.readexactly(2) == b"hi"  # the same TCP connection
            sock.close()
            writer.close()
        assert (workers[0].passed, workers[1].received) == (1, 1)
        assert served[0].empty()
        assert served[1].empty()
    finally:
        for worker in workers:
            await worker.aclose()
        for sock in (listener, idle, *(s for pair in pairs for s in pair)):
            sock.close()


async def test_a_connection_that_says_nothing_in_time_is_served_where_it_landed() -> None:
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(2)]
    listener = socket.create_server(("127.0.0.1", 0))
    served: asyncio.Queue[socket.socket] = asyncio.Queue()
    worker = Handoff(
        listener=listener,
        inbox=pairs[0][1],
        outboxes=[pair[0] for pair in pairs],
        worker_index=0,
        serve=served.put,
        peek_timeout_s=0.2,
    )
    worker.start()
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
        sock = await asyncio.wait_for(served.get(), 5)
        assert worker.passed == 0
        sock.close()
        writer.close()
    finally:
        await worker.aclose()
        for sock in (listener, *(s for pair in pairs for s in pair)):
            sock.close()
