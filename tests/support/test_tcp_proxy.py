"""The test proxy forwards, delays, cuts and partitions as it says (tests/support/tcp_proxy.py),
against an echo server in this test's own loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from tests.support.tcp_proxy import TcpProxy


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[TcpProxy]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with TcpProxy(port) as proxy:
        yield proxy
    server.close()


async def _connect(proxy: TcpProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", proxy.port)


async def _roundtrip(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes
) -> bytes:
    writer.write(data)
    await writer.drain()
    return await reader.readexactly(len(data))


async def test_it_forwards_both_ways_with_the_latency_asked(proxy: TcpProxy) -> None:
    reader, writer = await _connect(proxy)
    assert await _roundtrip(reader, writer, b"ping") == b"ping"
    proxy.latency = 0.1
    began = time.monotonic()
    assert await _roundtrip(reader, writer, b"slow") == b"slow"
    assert time.monotonic() - began >= 0.2  # once each way: a floor, never a ceiling
    writer.close()


async def test_a_drop_cuts_every_open_connection_and_new_ones_work(proxy: TcpProxy) -> None:
    reader, writer = await _connect(proxy)
    assert await _roundtrip(reader, writer, b"a") == b"a"
    await asyncio.to_thread(proxy.drop)
    with pytest.raises((asyncio.IncompleteReadError, ConnectionError)):
        await _roundtrip(reader, writer, b"b")
    reader, writer = await _connect(proxy)
    assert await _roundtrip(reader, writer, b"c") == b"c"
    writer.close()


async def test_a_partition_answers_nothing_until_it_heals(proxy: TcpProxy) -> None:
    reader, writer = await _connect(proxy)
    assert await _roundtrip(reader, writer, b"up") == b"up"  # the link is forwarded by now
    await asyncio.to_thread(proxy.partition)
    with pytest.raises((asyncio.IncompleteReadError, ConnectionError)):
        await _roundtrip(reader, writer, b"cut")
    held_reader, held_writer = await _connect(proxy)
    held_writer.write(b"into the void")
    assert await asyncio.to_thread(proxy.wait_held)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(held_reader.read(1), 0.3)
    await asyncio.to_thread(proxy.heal)
    assert await held_reader.read(1) == b""  # the held connection is cut: its client reconnects
    reader, writer = await _connect(proxy)
    assert await _roundtrip(reader, writer, b"back") == b"back"
    writer.close()
