"""The Redis event store: its streams (server/store/redis_streams.py), indexes, queues and
wake-ups over one ``RedisTopology``.

One store for one Redis or a Cluster: what differs is the ``RedisTopology`` it is given
(server/store/redis_single.py, redis_cluster.py). docs/storage.md has the key schema and reasons.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from server.store.base import EventStore
from server.store.indexes import IndexEntry
from server.store.queues import QueueEntry
from server.store.redis_cluster import ClusterNodes
from server.store.redis_indexes import RedisIndexes
from server.store.redis_queues import RedisQueues
from server.store.redis_single import SingleNode
from server.store.redis_streams import RedisStreams
from server.store.redis_topology import RedisTopology
from server.store.redis_wakeups import RedisSubscription
from server.store.wakeups import LocalSubscriptions, WakeupHandler

DEFAULT_PREFIX = "sa:"


class RedisEventStore(RedisStreams, EventStore):
    """Event streams, indexes and wake-ups in Redis, through ``topology``; without one, the
    topology is made from ``url`` and ``connection_options`` (``SingleNode``, or
    ``ClusterNodes`` if ``cluster``: ``max_connections``, ``pool_timeout``, ``patience`` and
    redis-py's own options), as httpx makes its default transport from a client's arguments.

    ``prefix`` goes before every key; it must not contain a brace, so the hash tag in the
    stream name (``{room}``) decides the Cluster slot. With ``ack_after_replicas`` K, an append
    is answered once K replicas hold it, else ``NotReplicated`` (``--ack-after-replicas``).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        topology: RedisTopology | None = None,
        cluster: bool = False,
        prefix: str = DEFAULT_PREFIX,
        retention: float | None = None,
        ping_timeout: float = 2.0,
        ack_after_replicas: int = 0,
        ack_timeout_ms: int = 1000,
        **connection_options: Any,
    ) -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"the key prefix {prefix!r} must not contain a hash tag brace")
        if ack_after_replicas < 0 or ack_timeout_ms <= 0:
            raise ValueError("ack_after_replicas is >= 0 and ack_timeout_ms > 0")
        if topology is None:
            if url is None:
                raise ValueError("a Redis store needs a url or a topology")
            kind = ClusterNodes if cluster else SingleNode
            topology = kind(url, **connection_options)
        elif url is not None or connection_options or cluster:
            raise ValueError("give a url (and its options) or a topology, not both")
        # Who appends: wake-ups carry it, so this store skips the channel's copy of its own
        # appends (delivered at once, with their events) instead of reading them back.
        super().__init__(
            topology,
            prefix,
            origin=secrets.token_hex(6),
            subscriptions=LocalSubscriptions(),
            ack_after_replicas=ack_after_replicas,
            ack_timeout_ms=ack_timeout_ms,
        )
        self.retention = retention
        self.ping_timeout = ping_timeout
        self.indexes = RedisIndexes(topology, prefix)
        self.queues = RedisQueues(topology, prefix)

    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> RedisSubscription:
        subscription = RedisSubscription(
            self.topology, self.channel, self.origin, self._subscriptions, on_wakeup, on_gap
        )
        self._subscriptions.add(subscription)
        return subscription

    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        await self.indexes.index_put(index, member, score, value)

    async def index_remove(self, index: str, member: str) -> None:
        await self.indexes.index_remove(index, member)

    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        return await self.indexes.index_get(index, member)

    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        return await self.indexes.index_range(index, max_score=max_score)

    async def index_claim(
        self, index: str, member: str, score: int, value: bytes = b"", *, expired_at: int
    ) -> bool:
        return await self.indexes.index_claim(index, member, score, value, expired_at=expired_at)

    async def index_count(self, index: str) -> int:
        return await self.indexes.index_count(index)

    async def queue_join(self, queue: str, member: str, score: int, value: bytes = b"") -> bool:
        return await self.queues.queue_join(queue, member, score, value)

    async def queue_take(self, queue: str, members: Sequence[str]) -> bool:
        return await self.queues.queue_take(queue, members)

    async def queue_leave(self, queue: str, member: str) -> bool:
        return await self.queues.queue_leave(queue, member)

    async def queue_entries(self, queue: str) -> list[QueueEntry]:
        return await self.queues.queue_entries(queue)

    async def ping(self) -> bool:
        try:
            async with asyncio.timeout(self.ping_timeout):
                return await self.topology.ping()
        except Exception:  # "down" has many shapes; ping's whole job is to say no
            return False

    async def aclose(self) -> None:
        await self._commits.aclose()
        await self.indexes.aclose()
        await self._subscriptions.aclose()
        await self.topology.aclose()
