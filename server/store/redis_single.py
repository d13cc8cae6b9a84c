"""One Redis server as the Redis store's topology: a pool of connections, every batch of
commands in one write (on the pipelined connection, or on one of the pool's while a batch
waits for replicas), and one pub/sub connection from the same pool."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as redis_errors

from server.store import redis_topology
from server.store.redis_adapter import QuickPool, can_take_over, one_deadline, raw_pipeline
from server.store.redis_pipeline import PipelinedConnection
from server.store.redis_topology import Answer, Command, Listener, Node, RedisTopology
from server.store.resp import Packer


class SingleNode(RedisTopology):
    """One Redis at ``url``, through redis.asyncio with hiredis. Commands share a pool of
    ``max_connections`` (a call waits up to ``pool_timeout`` for one), which bounds the
    process's connections however many rooms it follows; the wake-ups' pub/sub connection is
    one of them. Batches that do not wait for replicas go on one more connection, pipelined
    (server.store.redis_pipeline)."""

    def __init__(
        self,
        url: str,
        *,
        max_connections: int = 12,
        pool_timeout: float = 30.0,
        **redis_options: Any,
    ) -> None:
        options = redis_topology.connection_options(redis_options)
        self.url = url
        self.pool = QuickPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, **options
        )
        self.client = aioredis.Redis(connection_pool=self.pool)
        self._node = Node("redis", "", 0)
        probe = self.pool.make_connection()  # not connected: its options, its encoder
        # Every pooled connection encodes alike (the pool's options).
        self._packer = Packer(probe.encoder.encode)
        self._line = (
            PipelinedConnection(self.pool.make_connection) if can_take_over(probe) else None
        )

    async def send(
        self, commands: Sequence[Command], *, wait: redis_topology.Wait | None = None
    ) -> list[Answer]:
        """One write with a ``WAIT`` after all the commands when asked (WAIT counts the
        replicas holding every write of the connection so far)."""
        if not wait and self._line is not None:
            replies = await self._line.send(self._packer.pack(commands), len(commands))
            return [(reply, None) for reply in replies]
        batch = [*commands, ("WAIT", *wait)] if wait else list(commands)
        replies = await self._in_one_write(batch)
        replicas: int | None = None
        if wait:
            waited = replies.pop()
            replicas = waited if isinstance(waited, int) else 0
        return [(reply, replicas) for reply in replies]

    def send_now(
        self, commands: Sequence[Command], answer: Callable[[list[Any] | BaseException], None]
    ) -> bool:
        """On the pipelined line, when it is open."""
        line = self._line
        if line is None or not line.open:
            return False
        return line.send_now(self._packer.pack(commands), len(commands), answer)

    async def _in_one_write(self, commands: Sequence[Command]) -> list[Any]:
        """The commands in one write on one pooled connection, and their replies in order,
        an error reply as its exception: a non-transactional pipeline, retried as redis-py
        retries one, without its reset, which hands the connection back through a task of its
        own (two loop turns before every append batch's callers were answered)."""
        connection = await self.pool.get_connection()
        try:
            packed = self._packer.pack(commands)

            async def attempt() -> list[Any]:
                replies: list[Any] = []
                async with one_deadline(connection):
                    await connection.send_packed_command(packed)
                    for _ in commands:
                        try:
                            replies.append(await connection.read_response())
                        except redis_errors.ResponseError as exc:  # that reply alone: read on
                            replies.append(exc)
                return replies

            async def broken(error: BaseException) -> None:
                await connection.disconnect()

            return list(await connection.retry.call_with_retry(attempt, broken))
        finally:
            await self.pool.release(connection)

    async def pipelined(self, fill: Callable[[Any], object], *, raw: bool = False) -> list[Any]:
        pipe = raw_pipeline(self.client) if raw else self.client.pipeline(transaction=False)
        async with pipe:
            fill(pipe)
            return list(await pipe.execute())

    def key_batches(self, streams: Sequence[str], most: int) -> list[list[str]]:
        """Any streams together, ``most`` at a time: they are all on this Redis."""
        return [list(streams[start : start + most]) for start in range(0, len(streams), most)]

    async def ping(self) -> bool:
        return bool(await self.client.ping())

    async def ready(self) -> None:
        return None

    def node_for(self, channel: str) -> Node:
        return self._node

    def listen(self, node: Node) -> Listener:
        """A pub/sub connection from the pool (it counts in ``max_connections``)."""
        pubsub = self.client.pubsub()
        return Listener(pubsub, pubsub.aclose)

    async def refresh(self) -> None:
        return None

    async def aclose(self) -> None:
        if self._line is not None:
            await self._line.aclose()
        await self.client.aclose()
        await self.pool.aclose()
