"""The event store by capability: streams (``EventStreams``), indexes (``Indexes``), queues
(``Queues``) and wake-ups (``Wakeups``), each with its own contract; ``EventStore`` is all four
of one backend, and ``open_store`` picks the backend. A caller depends only on the capability
it uses.

The server receives a store as an argument; nothing here is a module-level instance.
"""

from __future__ import annotations

import os
from typing import Any

from server.store.base import EventStore
from server.store.errors import (
    CorruptEntry,
    DataDirError,
    DataDirInUse,
    NotReplicated,
    StoreError,
    StoreUnavailable,
)
from server.store.indexes import IndexEntry, Indexes
from server.store.memory import MemoryEventStore
from server.store.queues import QueueEntry, Queues
from server.store.redis_cluster import ClusterNodes
from server.store.redis_single import SingleNode
from server.store.redis_store import DEFAULT_PREFIX, RedisEventStore
from server.store.redis_topology import RedisTopology
from server.store.sqlite import SqliteEventStore
from server.store.streams import EventStreams, StoredEvent
from server.store.wakeups import Subscription, Wakeup, Wakeups, stream_group

__all__ = [
    "DEFAULT_PREFIX",
    "ClusterNodes",
    "CorruptEntry",
    "DataDirError",
    "DataDirInUse",
    "EventStore",
    "EventStreams",
    "IndexEntry",
    "Indexes",
    "MemoryEventStore",
    "NotReplicated",
    "QueueEntry",
    "Queues",
    "RedisEventStore",
    "RedisTopology",
    "SingleNode",
    "SqliteEventStore",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "Subscription",
    "Wakeup",
    "Wakeups",
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
    data_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> EventStore:
    """The store a URL names: redis:// → Redis, on a Redis Cluster if ``cluster`` (the URL
    names any one of its nodes); None or "" or "memory://" → embedded: SQLite in ``data_dir``
    when one is given (the server's default), else in memory (keeps nothing).

    ``prefix`` (Redis only) goes before every key; ``retention`` is how many seconds a finished
    stream is kept after ``retire``. Other options go to the backend's constructor.
    """
    if not url or url == "memory://":
        if cluster:
            raise ValueError("a Redis Cluster needs a redis:// URL of one of its nodes")
        if data_dir is not None:
            return SqliteEventStore(data_dir, retention=retention, **options)
        return MemoryEventStore(retention=retention, **options)
    if url.startswith(_REDIS_SCHEMES):
        return RedisEventStore(url, cluster=cluster, prefix=prefix, retention=retention, **options)
    raise ValueError(
        f"no event store for {url!r}: give a redis:// URL, or none for the embedded store"
    )
