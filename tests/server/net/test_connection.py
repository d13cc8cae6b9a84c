"""The connection: the rate limit's token bucket, and a connection's lifetime on a real socket."""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect

from server.app import App
from server.net.connection import TokenBucket
from server.runtime.clock import SystemClock
from server.runtime.config import parse_config
from server.store import MemoryEventStore
from shared import protocol as p
from tests.server.parts import until
from tests.support.ports import free_port


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(rate=2, burst=3, now=lambda: now[0])
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] += 0.5
    assert [bucket.take(), bucket.take()] == [True, False]


@pytest.fixture
async def app() -> AsyncIterator[App]:
    """A server in this process, on a free port (no process started)."""
    port = free_port()
    config = parse_config(["--host", "127.0.0.1", "--port", str(port), "--store", "memory"])
    app = App(config, MemoryEventStore(), SystemClock())
    await app.start()
    yield app
    await app.stop()


async def test_an_ended_connection_is_freed_at_once_not_by_the_collector(app: App) -> None:
    """A connection that has served requests (its handlers and request parts made) is freed by
    reference counting when it ends, with its socket and buffers: cyclic garbage would wait for
    the collector's next full pass, minutes apart on a busy server, and grow meanwhile."""
    url = f"ws://127.0.0.1:{app.config.port}"
    app.collector.stop()  # its young collections would find the cycles of a connection this short
    gc.disable()
    try:
        async with connect(url) as ws:
            for request in (
                {"type": p.HELLO, "protocol": 1, "name": "ann"},
                {"type": p.LIST_ROOMS},
                {"type": p.CREATE_ROOM, "variant": "swiss"},
                {"type": p.LEAVE_QUEUE},
                {"type": p.PING},
            ):
                await ws.send(p.encode_unchecked(request))
                await ws.recv()
            [served] = app.connections
            gone = weakref.ref(served)
            del served
        await until(lambda: not app.connections)
        await until(lambda: gone() is None)
    finally:
        gc.enable()


@pytest.mark.parametrize("closed_by", ["client", "server"])
async def test_an_ended_connections_websocket_protocol_is_freed_at_once(
    app: App, closed_by: str
) -> None:
    """websockets' Sans-I/O protocol of a connection that ended (closed by either side) is
    freed by reference counting with its reader and buffers: its parser, a generator suspended
    for good once the connection is lost, would otherwise keep it in a cycle until the
    collector's next full pass, a connection's worth of memory held per connection meanwhile."""
    url = f"ws://127.0.0.1:{app.config.port}"
    app.collector.stop()  # its young collections would find the cycles of a connection this short
    gc.disable()
    try:
        async with connect(url) as ws:
            await ws.send(p.encode_unchecked({"type": p.HELLO, "protocol": 1, "name": "ann"}))
            await ws.recv()
            [served] = app.connections
            protocol = weakref.ref(served.ws.protocol)
            if closed_by == "server":
                await served.ws.close()
            del served
            if closed_by == "server":
                await ws.wait_closed()
        await until(lambda: not app.connections)
        await until(lambda: protocol() is None)
    finally:
        gc.enable()
