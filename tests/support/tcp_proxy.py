"""A TCP proxy that puts a bad network between the server and one of its stores.

Plain asyncio on a thread of its own (so sync and async tests alike can steer it while a server
process talks through it): every connection to ``port`` is forwarded to ``upstream``, with

- ``latency``: seconds each chunk waits, each way, before it is passed on (order is kept);
- ``drop()``: every open connection is cut at once (both sides closed), as a reset link;
- ``partition()`` / ``heal()``: the link is down. Open connections are cut and new ones are
  accepted but go nowhere: their bytes are held, unanswered, as behind a dead router (a client
  only finds out by its own timeout). ``heal()`` cuts those held connections, so their clients
  reconnect, and forwards again.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any

from tests.support.ports import free_port

_CHUNK = 65536


class TcpProxy:
    def __init__(self, upstream_port: int, *, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self.latency = 0.0
        self.connections = 0  # accepted since the start: a test sees its clients came back
        self._partitioned = False
        self._links: set[asyncio.StreamWriter] = set()
        self._held: set[asyncio.StreamWriter] = set()
        self._holding = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    # ---- steering, from any thread --------------------------------------------------------

    def start(self) -> TcpProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        self._call(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def drop(self) -> None:
        """Cut every open connection now."""
        self._call(self._cut(self._links))

    def partition(self) -> None:
        """The link goes down: open connections are cut, new ones lead nowhere."""
        self._call(self._partition(True))

    def heal(self) -> None:
        """The link comes back: connections held during the partition are cut (their clients
        reconnect) and new ones are forwarded."""
        self._call(self._partition(False))

    @property
    def open_links(self) -> int:
        """Connections being forwarded (each counts its two sides)."""
        return len(self._links)

    def wait_held(self, timeout: float = 10.0) -> bool:
        """Whether a connection was taken and held during a partition within ``timeout`` (the
        kernel accepts a connection before the proxy takes it)."""
        return self._holding.wait(timeout)

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, coro: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    # ---- the proxy, on its own loop -------------------------------------------------------

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        await self._cut(self._links | self._held)

    async def _partition(self, down: bool) -> None:
        self._partitioned = down
        await self._cut(self._links if down else self._held)

    async def _cut(self, writers: set[asyncio.StreamWriter]) -> None:
        for writer in list(writers):
            writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.transport.abort()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self._partitioned:
            await self._hold(reader, writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        if self._partitioned:  # the link went down while this one was being opened: cut it
            up_writer.transport.abort()
            writer.transport.abort()
            return
        pair = {writer, up_writer}
        self._links |= pair
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            for side in pair:
                self._links.discard(side)
                side.transport.abort()

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Bytes in, nothing out, until the partition heals and the connection is cut."""
        self._held.add(writer)
        self._holding.set()
        try:
            while await reader.read(_CHUNK):
                pass
        except OSError:
            pass
        finally:
            self._held.discard(writer)
            writer.transport.abort()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One direction: each chunk after ``latency``, in order; the end of either side ends
        both (a half-closed link is a cut link here)."""
        try:
            while chunk := await reader.read(_CHUNK):
                if self.latency:
                    await asyncio.sleep(self.latency)
                if writer.transport.is_closing():
                    return
                writer.write(chunk)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.transport.abort()
