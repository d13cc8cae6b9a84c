"""open_store picks the backend from the URL; the package exports its public names."""

from __future__ import annotations

from pathlib import Path

import pytest

import server.store
from server.store import (
    ClusterNodes,
    MemoryEventStore,
    RedisEventStore,
    SingleNode,
    SqliteEventStore,
    open_store,
)
from tests.server.store.conftest import FakeClock
from tests.support.redis_server import RedisServer


@pytest.mark.parametrize("url", [None, "", "memory://"])
async def test_no_url_gives_the_memory_store(url: str | None) -> None:
    store = open_store(url, retention=60)
    assert isinstance(store, MemoryEventStore)
    assert store.retention == 60
    await store.aclose()


@pytest.mark.parametrize("url", [None, "", "memory://"])
async def test_a_data_dir_gives_the_sqlite_store(url: str | None, tmp_path: Path) -> None:
    store = open_store(url, data_dir=tmp_path / "data", retention=60, synchronous="NORMAL")
    assert isinstance(store, SqliteEventStore)
    assert (store.retention, store.data_dir.path) == (60, tmp_path / "data")
    assert (tmp_path / "data" / "events.sqlite3").exists()
    await store.aclose()


async def test_a_redis_url_gives_the_redis_store(redis_server: RedisServer) -> None:
    store = open_store(redis_server.url, prefix="x:", retention=3600, max_connections=3)
    assert isinstance(store, RedisEventStore)
    assert isinstance(store.topology, SingleNode)
    assert (store.prefix, store.retention, store.topology.pool.max_connections) == ("x:", 3600, 3)
    assert await store.ping() is True
    await store.aclose()


def test_a_cluster_url_gives_the_redis_store_on_the_cluster_topology() -> None:
    store = open_store("redis://127.0.0.1:1,127.0.0.1:2/0", cluster=True, patience=3)
    assert isinstance(store, RedisEventStore)
    assert isinstance(store.topology, ClusterNodes)
    assert store.topology.patience == 3


def test_a_topology_is_given_instead_of_a_url_not_beside_it() -> None:
    topology = SingleNode("redis://127.0.0.1:1/0")
    assert RedisEventStore(topology=topology).topology is topology
    with pytest.raises(ValueError, match="not both"):
        RedisEventStore("redis://127.0.0.1:1/0", topology=topology)
    with pytest.raises(ValueError, match="not both"):
        RedisEventStore(topology=topology, max_connections=3)


def test_the_default_key_prefix() -> None:
    store = open_store("redis://127.0.0.1:1/0")
    assert isinstance(store, RedisEventStore)
    assert store.key("{r}:room") == "sa:{r}:room"


@pytest.mark.parametrize("url", ["http://localhost", "postgres://x", "127.0.0.1:6379"])
def test_an_unknown_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="no event store"):
        open_store(url)


async def test_the_memory_store_expires_by_its_clock() -> None:
    clock = FakeClock()
    store = open_store(None, clock=clock)
    await store.append("done", [{"type": "x"}], expected_version=0)
    await store.expire("done", 30)
    clock.now += 29.9
    assert await store.streams() == ["done"]
    clock.now += 0.1
    assert await store.streams() == []
    assert await store.last_version("done") == 0


def test_the_public_names() -> None:
    for name in [
        "EventStore",
        "StoredEvent",
        "EventStreams",
        "Indexes",
        "Wakeups",
        "StoreError",
        "MemoryEventStore",
        "SqliteEventStore",
        "DataDirInUse",
        "RedisEventStore",
        "open_store",
        "CorruptEntry",
        "StoreUnavailable",
    ]:
        assert name in server.store.__all__
        assert hasattr(server.store, name)
