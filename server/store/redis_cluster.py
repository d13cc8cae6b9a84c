"""A Redis Cluster as the Redis store's topology, through redis-py's cluster client.

A room's streams and its wake-up channel share the room's hash tag, so every operation on a
room stays in one slot, and its node runs the append script. What the Cluster changes: batches
go through the cluster pipeline (grouped per node); a topology change (MOVED, ASK, a failover)
is retried until the slot is served again; wake-ups come on one pub/sub connection per primary.
docs/storage.md, "On a Redis Cluster".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
import redis.exceptions as redis_errors
import structlog
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff

from server.store.redis_adapter import refresh_topology
from server.store.redis_topology import (
    UNREACHABLE,
    Answer,
    Command,
    Listener,
    Node,
    RedisTopology,
    Wait,
    connection_options,
)
from server.store.wakeups import stream_group

_log = structlog.get_logger("server.store")

BACKOFF = ExponentialBackoff(cap=0.5, base=0.05)
"""Between retries through a failover: 50 ms doubling to 500 ms."""

_GATED: contextvars.ContextVar[bool] = contextvars.ContextVar("cluster_gated", default=False)
"""Set while a command or pipeline of this task holds a place at the gate (nested commands,
such as redis-py's own redirect retries inside a pipeline, do not queue again)."""


async def patiently(patience: float, attempt: Callable[[], Awaitable[Any]]) -> Any:
    """``attempt()`` again with ``BACKOFF`` while it fails with a topology error, for up to
    ``patience`` seconds; then its error."""
    deadline = time.monotonic() + patience
    failures = 0
    while True:
        try:
            return await attempt()
        except UNREACHABLE as exc:
            pause = BACKOFF.compute(failures)
            failures += 1
            if time.monotonic() + pause > deadline:
                raise
            _log.info("store_retry", error=str(exc)[:200], retry_in=pause)
            await asyncio.sleep(pause)


class _PatientCluster(RedisCluster):
    """redis-py's cluster client, retrying a command through a failover: its own retries are
    a few quick attempts, while a replica takes a couple of node timeouts to be promoted.

    redis-py's async cluster does not wait for a free connection: past ``max_connections``
    to a node it raises MaxConnectionsError, and a pipeline that meets it closes every
    connection of the client, those in use by other commands included (3,000 clients setting
    up at once broke every command in flight, bench.load --redis-cluster). So commands and
    pipelines wait at a gate of ``max_connections`` places: never more in flight to a node.
    """

    patience: float = 20.0
    gate: asyncio.Semaphore | None = None

    @contextlib.asynccontextmanager
    async def place(self) -> AsyncIterator[None]:
        """Hold a place at the gate for one command or pipeline (once per task)."""
        if self.gate is None or _GATED.get():
            yield
            return
        async with self.gate:
            token = _GATED.set(True)
            try:
                yield
            finally:
                _GATED.reset(token)

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.place():
            # redis-py 8.1: commands racing on a client not initialized yet break a connection
            # (AttributeError on its writer); initialized first, under its lock, they do not.
            await self.initialize()
            if kwargs.get("target_nodes") is not None and not self._is_node_flag(
                kwargs["target_nodes"]
            ):
                return await super().execute_command(*args, **kwargs)  # one node: no retry
            return await patiently(
                self.patience,
                lambda: super(_PatientCluster, self).execute_command(*args, **kwargs),
            )


def startup_nodes(url: str) -> list[tuple[str, int]]:
    """The nodes a URL names: ``redis://host:port,host:port/0`` lists several, so that a
    server can start while one of them is down."""
    netloc = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    nodes = []
    for item in netloc.split(","):
        host, _, port = item.rpartition(":")
        nodes.append((host or item, int(port) if port.isdigit() else 6379))
    return nodes


def _cluster_client(url: str, max_connections: int, options: dict[str, Any]) -> _PatientCluster:
    options = dict(options)
    options.pop("single_connection_client", None)
    retry = Retry(BACKOFF, 3)
    nodes = startup_nodes(url)
    if len(nodes) == 1:
        client = _PatientCluster.from_url(
            url, max_connections=max_connections, retry=retry, **options
        )
        assert isinstance(client, _PatientCluster)
        return client
    parts = urlsplit(url.replace(",", "_", url.count(",")))  # one netloc for the parser
    if parts.username:
        options.setdefault("username", unquote(parts.username))
    if parts.password:
        options.setdefault("password", unquote(parts.password))
    if parts.scheme == "rediss":
        options.setdefault("ssl", True)
    return _PatientCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in nodes],
        max_connections=max_connections,
        retry=retry,
        **options,
    )


class ClusterNodes(RedisTopology):
    """A Redis Cluster; ``url`` names one node or several (comma separated ``host:port``):
    the others are found from them. ``patience`` is how long a command is retried while its
    slot has no primary (a failover takes about two ``cluster-node-timeout``);
    ``max_connections`` is per node."""

    tags_every_key = True
    unplaceable = (*UNREACHABLE, redis_errors.RedisClusterException)

    def __init__(
        self, url: str, *, patience: float = 20.0, max_connections: int = 12, **redis_options: Any
    ) -> None:
        self.url = url
        self.patience = patience
        self._options = connection_options(redis_options)
        client = _cluster_client(url, max_connections, self._options)
        client.patience = patience
        client.gate = asyncio.Semaphore(max_connections)
        self.client: _PatientCluster = client

    async def send(self, commands: Sequence[Command], *, wait: Wait | None = None) -> list[Answer]:
        """Through the cluster pipeline (one round trip per primary), the whole batch retried
        through a failover: an append that had landed is recognised by the script, so a retry
        never doubles one. With replicas to wait for, each command keeps its own pipeline,
        since WAIT counts one connection's writes."""
        if wait:
            return list(await asyncio.gather(*(self._send_and_wait(c, wait) for c in commands)))

        async def attempt() -> list[Any]:
            async with self.client.place():
                await self.client.initialize()
                async with self.client.pipeline() as pipe:
                    for command in commands:
                        pipe.execute_command(*command)
                    replies = list(await pipe.execute(raise_on_error=False))
            for reply in replies:
                if isinstance(reply, UNREACHABLE):
                    raise reply
            return replies

        return [(reply, None) for reply in await patiently(self.patience, attempt)]

    async def _send_and_wait(self, command: Command, wait: Wait) -> Answer:
        """A script call (EVALSHA sha 1+ key ...) and WAIT in one cluster pipeline, both sent
        to the key's node on one connection. If the slot moved meanwhile, the script was
        redirected and the WAIT asked the wrong node: reported as unconfirmed (zero)."""
        key = command[3]

        async def attempt() -> tuple[Any, int, str]:
            async with self.client.place():
                await self.client.initialize()
                node = self._primary(key)
                async with self.client.pipeline() as pipe:
                    pipe.execute_command(*command)
                    pipe.execute_command("WAIT", *wait, target_nodes=node)
                    reply, replicas = await pipe.execute(raise_on_error=False)
            if isinstance(reply, UNREACHABLE):
                raise reply
            return reply, replicas if isinstance(replicas, int) else 0, node.name

        reply, replicas, asked = await patiently(self.patience, attempt)
        if self._primary(key).name != asked:
            replicas = 0
        return reply, replicas

    def _primary(self, key: str) -> ClusterNode:
        """The primary serving ``key``'s slot, by the client's slot map."""
        node = self.client.get_node_from_key(key)
        if node is None:
            raise redis_errors.SlotNotCoveredError(f"no node serves the slot of {key!r}")
        return node

    async def pipelined(self, fill: Callable[[Any], object], *, raw: bool = False) -> list[Any]:
        """Through the cluster pipeline (commands grouped per node), retried through a
        failover; replies always parsed (the store's decoding reads both shapes)."""

        async def attempt() -> list[Any]:
            async with self.client.place():
                await self.client.initialize()
                async with self.client.pipeline() as pipe:
                    fill(pipe)
                    return list(await pipe.execute())

        replies: list[Any] = await patiently(self.patience, attempt)
        return replies

    def key_batches(self, streams: Sequence[str], most: int) -> list[list[str]]:
        """Streams of one group (hash tag) per batch: a script's keys must share a slot."""
        groups: dict[str, list[str]] = {}
        for stream in streams:
            groups.setdefault(stream_group(stream), []).append(stream)
        return list(groups.values())

    async def ping(self) -> bool:
        await self.client.initialize()
        return bool(await self.client.ping(target_nodes=RedisCluster.PRIMARIES))

    async def ready(self) -> None:
        await self.client.initialize()

    def node_for(self, channel: str) -> Node:
        node = self._primary(channel)
        return Node(node.name, node.host, int(node.port))

    def listen(self, node: Node) -> Listener:
        """A pub/sub connection to one primary, on a plain client of its own with no retries:
        a broken connection is seen (and reported as a gap) instead of silently redone."""
        options = {
            k: v
            for k, v in self._options.items()
            if k not in {"socket_timeout", "retry", "single_connection_client"}
        }
        client = aioredis.Redis(
            host=node.host, port=node.port, retry=Retry(NoBackoff(), 0), **options
        )
        pubsub = client.pubsub()

        async def close() -> None:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            await client.aclose()

        return Listener(pubsub, close)

    async def refresh(self) -> None:
        await refresh_topology(self.client)

    async def aclose(self) -> None:
        await self.client.aclose()
