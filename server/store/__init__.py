"""The event store: one contract (``EventStore``), two backends, chosen by ``open_store``.

The server receives a store as an argument; nothing here is a module-level instance.
"""

from __future__ import annotations

from typing import Any

from server.store.base import (
    CorruptEntry,
    ErrorHandler,
    EventStore,
    Follower,
    IndexEntry,
    NotReplicated,
    StoredEvent,
    StoreUnavailable,
    Subscription,
    Wakeup,
    stream_group,
)
from server.store.memory import MemoryEventStore
from server.store.redis_cluster_store import RedisClusterEventStore
from server.store.redis_store import DEFAULT_PREFIX, RedisEventStore

__all__ = [
    "DEFAULT_PREFIX",
    "CorruptEntry",
    "ErrorHandler",
    "EventStore",
    "Follower",
    "IndexEntry",
    "MemoryEventStore",
    "NotReplicated",
    "RedisClusterEventStore",
    "RedisEventStore",
    "StoreUnavailable",
    "StoredEvent",
    "Subscription",
    "Wakeup",
    "open_store",
    "stream_group",
]

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def open_store(
    url: str | None,
    *,
    prefix: str = DEFAULT_PREFIX,
    retention: float | None = None,
    cluster: bool = False,
    **options: Any,
) -> EventStore:
    """The store a URL names: None or "" or "memory://" → in memory, redis:// → Redis, on a
    Redis Cluster if ``cluster`` (the URL names any one of its nodes).

    ``prefix`` (Redis only) goes before every key; ``retention`` is how many seconds a finished
    stream is kept after ``retire``. Other options go to the backend's constructor.
    """
    if not url or url == "memory://":
        if cluster:
            raise ValueError("a Redis Cluster needs a redis:// URL of one of its nodes")
        return MemoryEventStore(retention=retention, **options)
    if url.startswith(_REDIS_SCHEMES):
        kind = RedisClusterEventStore if cluster else RedisEventStore
        return kind(url, prefix=prefix, retention=retention, **options)
    raise ValueError(f"no event store for {url!r}: give a redis:// URL, or none for memory")
