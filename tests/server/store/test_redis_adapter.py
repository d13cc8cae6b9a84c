"""The redis-py internals the store relies on (server/store/redis_adapter.py): this fails loudly
when an installed redis-py no longer has them, and the public paths still work without them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.store import redis_adapter
from server.store.redis_adapter import INTERNALS, QuickPool, quick_paths_available, raw_pipeline
from tests.support.redis_server import RedisServer


def test_the_installed_redis_py_has_every_internal_the_shortcuts_read() -> None:
    """If this fails after a redis-py upgrade, the store takes its slower public paths (it
    still works); update redis_adapter.py for the new internals, or drop the shortcut."""
    found = quick_paths_available()
    assert found == dict.fromkeys(INTERNALS, True), f"redis-py internals changed: {found}"


@pytest.fixture
async def pool(redis_server: RedisServer) -> AsyncIterator[QuickPool]:
    pool = QuickPool.from_url(redis_server.url, max_connections=4, timeout=5)
    yield pool
    await pool.aclose()


async def test_the_quick_pool_takes_an_idle_connection_and_gives_it_back(pool: QuickPool) -> None:
    client = aioredis.Redis(connection_pool=pool)
    assert await client.ping()
    assert await client.ping()  # the second takes the idle one the first gave back
    assert len(pool._in_use_connections) == 0
    assert len(pool._available_connections) == 1


async def test_without_the_internals_the_pool_takes_its_public_path(pool: QuickPool) -> None:
    pool.quick = False
    client = aioredis.Redis(connection_pool=pool)
    assert await client.set("adapter:k", b"v")
    assert await client.get("adapter:k") == b"v"


async def test_a_raw_pipeline_gives_flat_replies_and_a_fallback_parsed_ones(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = aioredis.Redis.from_url(redis_server.url, protocol=2)
    try:
        await client.xadd("adapter:s", {b"d": b"x"}, id="1-0")
        async with raw_pipeline(client) as pipe:
            pipe.execute_command("XRANGE", "adapter:s", "-", "+")
            (flat,) = await pipe.execute()
        assert flat == [[b"1-0", [b"d", b"x"]]]
        monkeypatch.setitem(redis_adapter.INTERNALS, "Pipeline", ("no_such_attribute",))
        async with raw_pipeline(client) as pipe:
            pipe.execute_command("XRANGE", "adapter:s", "-", "+")
            (parsed,) = await pipe.execute()
        assert parsed == [(b"1-0", {b"d": b"x"})]
    finally:
        await client.delete("adapter:s")
        await client.aclose()
