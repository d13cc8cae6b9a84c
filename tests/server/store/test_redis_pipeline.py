"""server.store.redis_pipeline: batches written side by side on one connection, each answered
with its own replies, on a real redis-server; and what a broken or silent line does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
import uvloop
from redis import exceptions as redis_errors

from server.store.redis_adapter import QuickPool
from server.store.redis_pipeline import PipelinedConnection
from server.store.redis_single import SingleNode
from server.store.resp import Packer
from tests.support.redis_server import RedisServer


def packed(*commands: tuple[Any, ...]) -> bytes:
    return Packer(lambda value: str(value).encode()).pack(commands)


@pytest.fixture
async def line(redis_server: RedisServer) -> AsyncIterator[PipelinedConnection]:
    pool = QuickPool.from_url(redis_server.url, max_connections=2, socket_timeout=5, protocol=2)
    line = PipelinedConnection(pool.make_connection)
    yield line
    await line.aclose()
    await pool.aclose()


async def test_batches_in_flight_together_each_get_their_own_replies_in_order(
    line: PipelinedConnection,
) -> None:
    batches = [
        packed(("SET", f"pipe:{n}", f"v{n}"), ("GET", f"pipe:{n}"), ("INCR", f"pipe:n{n}"))
        for n in range(50)
    ]
    answers = await asyncio.gather(*(line.send(batch, 3) for batch in batches))
    assert answers == [[b"OK", f"v{n}".encode(), 1] for n in range(50)]


async def test_an_error_reply_is_its_own_exception_and_the_batch_is_answered_on(
    line: PipelinedConnection,
) -> None:
    replies = await line.send(
        packed(
            ("SET", "pipe:e", "text"),
            ("INCR", "pipe:e"),
            ("EVALSHA", "0" * 40, 0),
            ("GET", "pipe:e"),
        ),
        4,
    )
    assert replies[0] == b"OK"
    assert type(replies[1]) is redis_errors.ResponseError
    assert isinstance(replies[2], redis_errors.NoScriptError)  # the store reloads on this one
    assert replies[3] == b"text"


async def test_a_caller_that_gives_up_does_not_shift_the_replies_of_the_next(
    line: PipelinedConnection,
) -> None:
    slow = asyncio.create_task(line.send(packed(("BLPOP", "pipe:nothing", "0.3")), 1))
    await asyncio.sleep(0.05)
    slow.cancel()
    assert await line.send(packed(("PING",)), 1) == [b"PONG"]  # not BLPOP's nil


async def test_a_killed_connection_fails_what_was_in_flight_and_the_next_batch_reconnects(
    line: PipelinedConnection, redis_server: RedisServer
) -> None:
    admin = aioredis.Redis.from_url(redis_server.url)
    try:
        [client_id] = await line.send(packed(("CLIENT", "ID")), 1)
        waiting = asyncio.create_task(line.send(packed(("BLPOP", "pipe:never", "5")), 1))
        await asyncio.sleep(0.1)
        assert await admin.client_kill_filter(_id=client_id) == 1
        with pytest.raises(redis_errors.ConnectionError):
            await asyncio.wait_for(waiting, 2)
        assert await line.send(packed(("PING",)), 1) == [b"PONG"]
    finally:
        await admin.aclose()


async def test_a_batch_past_the_socket_timeout_fails_and_its_late_reply_answers_nobody(
    redis_server: RedisServer,
) -> None:
    pool = QuickPool.from_url(redis_server.url, max_connections=2, socket_timeout=0.3, protocol=2)
    line = PipelinedConnection(pool.make_connection)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(redis_errors.TimeoutError):
            await line.send(packed(("BLPOP", "pipe:late", "1")), 1)
        assert 0.25 < loop.time() - started < 0.9
        assert await line.send(packed(("PING",)), 1) == [b"PONG"]  # a new connection
    finally:
        await line.aclose()
        await pool.aclose()


async def test_a_batch_sent_now_is_answered_from_the_lines_callback(
    line: PipelinedConnection, redis_server: RedisServer
) -> None:
    told: asyncio.Queue[list[Any] | BaseException] = asyncio.Queue()
    assert not line.open
    assert not line.send_now(packed(("PING",)), 1, told.put_nowait)  # not connected: not written
    [client_id] = await line.send(packed(("CLIENT", "ID")), 1)
    assert line.open
    assert line.send_now(packed(("SET", "pipe:now", "1"), ("INCR", "pipe:now")), 2, told.put_nowait)
    assert line.send_now(packed(("BLPOP", "pipe:never", "5")), 1, told.put_nowait)
    assert await asyncio.wait_for(told.get(), 2) == [b"OK", 2]
    admin = aioredis.Redis.from_url(redis_server.url)
    try:
        assert await admin.client_kill_filter(_id=client_id) == 1
    finally:
        await admin.aclose()
    broken = await asyncio.wait_for(told.get(), 2)
    assert isinstance(broken, redis_errors.ConnectionError)  # told, not retried
    assert not line.open


def test_the_line_takes_over_a_uvloop_socket(redis_server: RedisServer) -> None:
    """The server runs on uvloop, whose transports are not asyncio's classes."""

    async def exchange() -> list[Any]:
        pool = QuickPool.from_url(redis_server.url, max_connections=2, protocol=2)
        line = PipelinedConnection(pool.make_connection)
        try:
            return await line.send(packed(("SET", "pipe:uv", "x"), ("GET", "pipe:uv")), 2)
        finally:
            await line.aclose()
            await pool.aclose()

    assert uvloop.run(exchange()) == [b"OK", b"x"]


async def send_both_ways(node: SingleNode, send: Callable[[], Awaitable[Any]]) -> list[Any]:
    """What ``send`` answers on the pipelined line and, without it, through the pool."""
    first = await send()
    line, node._line = node._line, None
    try:
        return [first, await send()]
    finally:
        node._line = line


async def test_a_single_node_answers_alike_with_and_without_the_line(
    redis_server: RedisServer,
) -> None:
    node = SingleNode(redis_server.url, protocol=2)
    try:
        assert node._line is not None  # this redis-py's connections can be taken over
        commands = [("SET", "pipe:both", "1"), ("INCR", "pipe:both"), ("HGET", "pipe:both", "f")]
        first, second = await send_both_ways(node, lambda: node.send(commands))
        assert [reply for reply, _ in first][:2] == [b"OK", 2]
        assert [reply for reply, _ in second][:2] == [b"OK", 2]
        assert [type(reply) for reply, _ in first] == [type(reply) for reply, _ in second]
        # A batch that waits for replicas keeps a pooled connection (WAIT holds its connection).
        assert await node.send([("PING",)], wait=(0, 10)) == [(b"PONG", 0)]
    finally:
        await node.aclose()
