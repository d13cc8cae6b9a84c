"""The redis-py internals the store relies on (server/store/redis_adapter.py): this fails loudly
when an installed redis-py no longer has them, and the public paths still work without them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis import exceptions as redis_errors
from redis.asyncio.connection import AbstractConnection

from server.store import redis_adapter
from server.store.redis_adapter import (
    INTERNALS,
    QuickPool,
    one_deadline,
    quick_paths_available,
    raw_pipeline,
)
from tests.support.redis_server import RedisServer
from tests.support.tasks import tasks_made


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


async def test_a_pooled_write_runs_in_its_callers_task(pool: QuickPool) -> None:
    """redis-py's ``wait_for`` ran each write in a task of its own on Python 3.11: two more loop
    turns an append batch; the timed write makes none. (redis-py up to 8.1 shields the
    pipeline's release of its connection in a task; 8.2 releases it in place: either is fine.)"""
    client = aioredis.Redis(connection_pool=pool)
    assert await client.ping()  # connected: what follows is the write and the reply alone
    try:
        with tasks_made() as made:
            async with client.pipeline(transaction=False) as pipe:
                pipe.set("adapter:w", b"v")
                pipe.get("adapter:w")
                assert await pipe.execute() == [True, b"v"]
    finally:
        await client.delete("adapter:w")
    # A write's task would show up here beside the release, whichever redis-py is installed.
    assert set(made) <= {"BlockingConnectionPool.release"}, made


@contextlib.asynccontextmanager
async def silent_redis() -> AsyncIterator[AbstractConnection]:
    """A pooled connection (``socket_timeout`` 0.3 s) to a server that reads nothing and
    answers nothing; it connects on its first write, within the timeout."""
    stop = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await stop.wait()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = QuickPool(host="127.0.0.1", port=port, socket_timeout=0.3, max_connections=1)
    connection = pool.make_connection()
    try:
        yield connection
    finally:
        stop.set()
        await connection.disconnect()
        await pool.aclose()
        server.close()
        await server.wait_closed()


async def test_a_write_to_a_redis_that_stops_answering_times_out() -> None:
    """The timed write keeps redis-py's promise: a ``TimeoutError`` after ``socket_timeout``,
    and a connection that is not used again."""
    async with silent_redis() as connection:
        started = asyncio.get_running_loop().time()
        with pytest.raises(redis_errors.TimeoutError):
            await connection.send_packed_command([b"x" * (32 << 20)])
        assert asyncio.get_running_loop().time() - started < 5
        assert not connection.is_connected
        assert connection.socket_timeout == 0.3


async def test_one_deadline_times_a_write_and_its_replies_with_one_timer(
    pool: QuickPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read and each write made and cancelled a timer of ``socket_timeout``; under
    ``one_deadline`` a pipelined write and its three replies share one."""
    connection = await pool.get_connection()
    loop = asyncio.get_running_loop()
    timers: list[float] = []
    call_at = loop.call_at

    def counting(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        timers.append(when)
        return call_at(when, *args, **kwargs)

    commands = [("SET", "adapter:d", b"v"), ("GET", "adapter:d"), ("DEL", "adapter:d")]

    async def exchange() -> list[Any]:
        await connection.send_packed_command(connection.pack_commands(commands))
        return [await connection.read_response() for _ in commands]

    try:
        monkeypatch.setattr(loop, "call_at", counting)
        assert await exchange() == [b"OK", b"v", 1]
        assert len(timers) == 4  # what redis-py does alone: the write, then each reply
        timers.clear()
        async with one_deadline(connection):
            assert await exchange() == [b"OK", b"v", 1]
        assert len(timers) == 1
        assert connection.socket_timeout == 5
    finally:
        monkeypatch.undo()
        await pool.release(connection)


async def test_one_deadline_on_a_redis_that_stops_answering_times_out() -> None:
    """The promise of ``socket_timeout`` kept over the exchange: a ``TimeoutError``, and a
    connection that is not used again (a late reply must not answer the next command)."""
    async with silent_redis() as connection:

        async def ping() -> None:
            async with one_deadline(connection):
                await connection.send_packed_command(connection.pack_commands([("PING",)]))
                await connection.read_response()

        started = asyncio.get_running_loop().time()
        with pytest.raises(redis_errors.TimeoutError):
            await ping()
        assert 0.25 < asyncio.get_running_loop().time() - started < 5
        assert not connection.is_connected
        assert connection.socket_timeout == 0.3
