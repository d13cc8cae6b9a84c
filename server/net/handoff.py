"""``--workers``: each connection that names its room goes to the room's home worker.

The kernel spreads a port's connections over the workers at random (SO_REUSEPORT), so a room's
racers and spectators would land on every worker, and each worker would fold, check and encode
every move of the room (with two workers, about a fifth more CPU a move). Here each worker
accepts on the shared port itself, peeks at the request line without reading it
(``MSG_PEEK``), and when it names a room homed on another worker (``server.kernel.placement``)
passes the socket to that worker over a Unix datagram socket (``SCM_RIGHTS``); the receiver
serves it as if it had accepted it, the request still unread. A connection that names no room,
or whose request does not come in time, or that cannot be passed (the receiver's queue full) is
served where it landed: routing is only ever an optimisation. TLS connections are not peeked
(the bytes are encrypted): with ``--tls-cert`` the workers keep the kernel's spreading
(docs/operations.md: terminate TLS in front).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve

from server.kernel.placement import home_worker
from server.net.ws_adapter import ReleasingConnection, connection_factory
from server.runtime.logging import get_logger
from shared.protocol import room_hint

log = get_logger("server.net.handoff")

PEEK_BYTES = 2048
"""The request line must fit in this (it is ``GET /?room=CODE HTTP/1.1``)."""
PEEK_TIMEOUT_S = 2.0
"""How long a fresh connection may take to send its request line before it is served here."""
_PARTIAL_WAIT_S = 0.005
"""A request line that came in part is peeked again after this (still readable: no wakeup)."""


def request_target(head: bytes) -> str | None:
    """The target of an HTTP request line (``GET /?room=x HTTP/1.1`` → ``/?room=x``)."""
    line = head.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) != 3 or parts[0] != b"GET":
        return None
    try:
        return parts[1].decode("ascii")
    except UnicodeDecodeError:
        return None


class Handoff:
    """One worker's accept loop on the shared port, and its end of the workers' hand-offs.

    ``inbox`` receives sockets other workers pass here; ``outboxes[i]`` sends to worker i.
    ``serve`` runs an accepted socket whose request is still unread (a task of its own)."""

    def __init__(
        self,
        *,
        listener: socket.socket,
        inbox: socket.socket,
        outboxes: Sequence[socket.socket],
        worker_index: int,
        serve: Callable[[socket.socket], Coroutine[Any, Any, None]],
        peek_timeout_s: float = PEEK_TIMEOUT_S,
    ) -> None:
        self.listener = listener
        self.inbox = inbox
        self.outboxes = list(outboxes)
        self.worker_index = worker_index
        self.serve = serve
        self.peek_timeout_s = peek_timeout_s
        self.passed = 0  # connections handed to another worker
        self.received = 0  # connections another worker handed here
        self._accepting: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # routing or starting a connection

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        for sock in (self.listener, self.inbox, *self.outboxes):
            sock.setblocking(False)
        loop.add_reader(self.inbox.fileno(), self._receive)
        self._accepting = loop.create_task(self._accept(), name="handoff-accept")

    async def aclose(self) -> None:
        """Stop accepting (the port closes) and receiving; connections being routed are closed
        unserved."""
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self.inbox.fileno())
        tasks = [t for t in (self._accepting, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.listener.close()

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(self.listener)
            except asyncio.CancelledError:
                raise
            except OSError as exc:  # the listener closed (a shutdown), or out of descriptors
                if self.listener.fileno() < 0:
                    return
                log.warning("accept_failed", error=str(exc))
                await asyncio.sleep(0.1)
                continue
            self._spawn(self._route(sock))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work, name="handoff")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _route(self, sock: socket.socket) -> None:
        try:
            target = await self._peek_target(sock)
        except asyncio.CancelledError:
            sock.close()
            raise
        room = None if target is None else room_hint(target)
        home = self.worker_index if room is None else home_worker(room, len(self.outboxes))
        if home != self.worker_index and self._pass(sock, home):
            return
        await self.serve(sock)

    async def _peek_target(self, sock: socket.socket) -> str | None:
        """The request line's target, read without consuming it; None when it does not come
        in time or is not an HTTP GET (the server then answers whatever came, as usual)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.peek_timeout_s
        while loop.time() < deadline:
            try:
                head = sock.recv(PEEK_BYTES, socket.MSG_PEEK)
            except BlockingIOError:
                head = None
            except OSError:
                return None
            if head is not None:
                if not head:
                    return None  # closed before a word
                if b"\r\n" in head or len(head) >= PEEK_BYTES:
                    return request_target(head)
                await asyncio.sleep(_PARTIAL_WAIT_S)
                continue
            ready = loop.create_future()
            loop.add_reader(sock.fileno(), ready.set_result, None)
            try:
                async with asyncio.timeout_at(deadline):
                    await ready
            except TimeoutError:
                return None
            finally:
                loop.remove_reader(sock.fileno())
        return None

    def _pass(self, sock: socket.socket, index: int) -> bool:
        """Send ``sock`` to worker ``index``; False (serve it here) when its queue is full."""
        try:
            socket.send_fds(self.outboxes[index], [b"c"], [sock.fileno()])
        except OSError as exc:
            log.warning("handoff_failed", worker=index, error=str(exc))
            return False
        sock.close()  # the receiver holds its own descriptor of the connection now
        self.passed += 1
        return True

    def _receive(self) -> None:
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(self.inbox, 16, 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("handoff_receive_failed", error=str(exc))
                return
            for fd in fds:
                self.received += 1
                self._spawn(self.serve(socket.socket(fileno=fd)))


async def listen_routed(
    handler: Callable[[ServerConnection], Awaitable[None]],
    *,
    host: str,
    port: int,
    handoff_fds: Sequence[int],
    worker_index: int,
    max_size: int | None,
    close_timeout: float | None,
    open_timeout: float | None = 10.0,
    backlog: int = 1024,
    **options: Any,
) -> tuple[Server, Handoff]:
    """A worker's endpoint on the shared port, accepting through a ``Handoff``; every
    connection reaches websockets through ``connect_accepted_socket``. websockets answers 503
    unless its server is serving, so it serves a private, unnamed Unix socket nobody connects
    to (abstract namespace: no file to clean up). Raises OSError when the port is taken."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    listener = socket.create_server((host, port), family=family, reuse_port=True, backlog=backlog)
    private = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    private.bind(f"\0solitaire-{os.getpid()}-{secrets.token_hex(8)}")
    private.listen()
    server = await serve(
        handler,
        sock=private,
        max_size=max_size,
        close_timeout=close_timeout,
        open_timeout=open_timeout,
        compression=None,
        create_connection=ReleasingConnection,
        **options,
    )
    factory = connection_factory(server, max_size=max_size, close_timeout=close_timeout)

    async def connect(sock: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(factory, sock)
        except OSError as exc:  # the client went away meanwhile
            sock.close()
            log.info("handed_off_connection_lost", error=str(exc))

    handoff = Handoff(
        listener=listener,
        inbox=socket.socket(fileno=handoff_fds[2 * worker_index + 1]),
        outboxes=[socket.socket(fileno=handoff_fds[2 * i]) for i in range(len(handoff_fds) // 2)],
        worker_index=worker_index,
        serve=connect,
    )
    handoff.start()
    return server, handoff
