"""Redis behind a partition (tests/support/tcp_proxy.py): the appends that wait for the
pipelined connection share the one attempt to make it, and its failure, rather than each
making its own after the last timed out (which queued a move behind a timeout per batch
waiting before it)."""

from __future__ import annotations

import asyncio

import pytest

from server.store import open_store
from server.store.errors import StoreUnavailable
from tests.support.redis_server import RedisServer
from tests.support.tcp_proxy import TcpProxy


async def test_appends_waiting_for_a_connection_share_its_attempt(
    redis_server: RedisServer,
) -> None:
    with TcpProxy(redis_server.port) as proxy:
        store = open_store(f"redis://127.0.0.1:{proxy.port}/0", prefix="partition:")
        try:
            await store.append("{p}:a", [{"n": 1}], expected_version=0)
            await asyncio.to_thread(proxy.partition)
            before = proxy.connections
            first = asyncio.ensure_future(store.append("{p}:a", [{"n": 2}], expected_version=1))
            assert await asyncio.to_thread(proxy.wait_held)  # its connection attempt hangs
            second = asyncio.ensure_future(store.append("{p}:b", [{"n": 1}], expected_version=0))
            for append in (first, second):
                with pytest.raises(StoreUnavailable):
                    await append
            assert proxy.connections - before == 1
            await asyncio.to_thread(proxy.heal)
            assert await store.append("{p}:b", [{"n": 1}], expected_version=0) == 1
            assert await store.append("{p}:a", [{"n": 2}], expected_version=1) == 2
        finally:
            await store.aclose()
