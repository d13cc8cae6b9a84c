"""What only the Cluster store has: slots per room, every primary scanned, a failover survived,
and acks that wait for replicas (``ack_after_replicas``). Real clusters, never mocks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.crc import key_slot

from server.store import NotReplicated, RedisEventStore, Wakeup
from tests.server.store.conftest import unique_prefix
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer


def ev(n: int) -> dict[str, object]:
    return {"type": "moved", "n": n}


async def until(check: object, within: float = 20.0) -> None:
    """Poll ``check``: it watches what another task fills, with no event to wait on."""
    async with asyncio.timeout(within):
        while not check():  # type: ignore[operator]  # noqa: ASYNC110
            await asyncio.sleep(0.02)


@pytest.fixture
async def store(redis_cluster: LocalRedisCluster) -> AsyncIterator[RedisEventStore]:
    store = RedisEventStore(redis_cluster.url, cluster=True, prefix=unique_prefix())
    yield store
    await store.aclose()


def test_a_room_its_games_and_its_wakeups_share_one_slot() -> None:
    store = RedisEventStore("redis://127.0.0.1:1/0", cluster=True)
    keys = [store.key("{r1}:room"), store.key("{r1}:game:ann"), store.channel("r1")]
    assert len({key_slot(key.encode()) for key in keys}) == 1
    # A name without a hash tag is its own group: its key gets the name as a tag.
    assert store.key("plain") == "sa:{plain}"
    assert key_slot(store.key("plain").encode()) == key_slot(store.channel("plain").encode())


def test_a_name_that_is_all_braces_is_refused_on_a_cluster() -> None:
    store = RedisEventStore("redis://127.0.0.1:1/0", cluster=True)
    with pytest.raises(ValueError, match="braces"):
        store.key("{r1}")


async def test_streams_lists_rooms_from_every_primary(
    store: RedisEventStore, redis_cluster: LocalRedisCluster
) -> None:
    rooms = [f"room{n}" for n in range(24)]
    for room in rooms:
        await store.append(f"{{{room}}}:room", [ev(1)], expected_version=0)
    holders = {redis_cluster.primary_for(store.key(f"{{{room}}}:room")).port for room in rooms}
    assert len(holders) == 3  # the rooms really are spread over the three primaries
    assert await store.streams() == sorted(f"{{{room}}}:room" for room in rooms)
    listed = await store.last_versions([f"{{{room}}}:room" for room in rooms])
    assert set(listed.values()) == {1}


async def test_an_ack_waits_for_a_replica_and_without_one_says_so(
    redis_cluster: LocalRedisCluster, redis_server: RedisServer
) -> None:
    """The session cluster and the private Redis have no replicas: WAIT 1 finds none."""
    prefix = unique_prefix()
    for store in (
        RedisEventStore(
            redis_cluster.url,
            cluster=True,
            prefix=prefix,
            ack_after_replicas=1,
            ack_timeout_ms=50,
        ),
        RedisEventStore(redis_server.url, prefix=prefix, ack_after_replicas=1, ack_timeout_ms=50),
    ):
        try:
            with pytest.raises(NotReplicated) as raised:
                await store.append("{r}:game:ann", [ev(1)], expected_version=0)
            assert raised.value.code == "not_replicated"
            assert (raised.value.replicas, raised.value.wanted) == (0, 1)
            # It reached the primary: the move may count, it is only not known to be safe.
            assert [e.version for e in await store.read("{r}:game:ann")] == [1]
        finally:
            await store.aclose()


async def test_a_failover_loses_no_acked_append_and_the_wakeups_come_back(
    redis_cluster_replicas: LocalRedisCluster,
) -> None:
    cluster = redis_cluster_replicas
    prefix = unique_prefix()
    durable = RedisEventStore(cluster.url, cluster=True, prefix=prefix, ack_after_replicas=1)
    writer = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    other = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    seen: list[Wakeup] = []
    gaps: list[None] = []
    subscription = other.subscribe(seen.append, on_gap=lambda: gaps.append(None))
    stream = "{race}:game:ann"
    try:
        await subscription.subscribe(["race"])
        for version in range(1, 6):  # each acked only once the primary's replica holds it
            assert await durable.append(stream, [ev(version)], expected_version=version - 1)
        await until(lambda: any(w.version == 5 for w in seen))
        primary = cluster.primary_for(writer.key(stream))
        cluster.kill_node(primary)
        # Appended while the slot has no primary: retried until the replica is promoted.
        for version in range(6, 9):
            got = await writer.append(stream, [ev(version)], expected_version=version - 1)
            assert got == version
        assert cluster.primary_for(writer.key(stream)).port != primary.port
        assert [e.data["n"] for e in await other.read(stream)] == list(range(1, 9))
        # The promoted primary has no replica left: a durable ack says it is not confirmed.
        with pytest.raises(NotReplicated):
            await durable.append(stream, [ev(9)], expected_version=8)
        await until(lambda: gaps)  # the subscriber learns it may have missed wake-ups
        # And once re-subscribed on the new primary it hears appends again.
        version = 9
        async with asyncio.timeout(20):
            while not any(w.version > 9 for w in seen):
                version = await writer.append(stream, [ev(version + 1)], expected_version=version)
                await asyncio.sleep(0.1)
    finally:
        await subscription.aclose()
        for store in (durable, writer, other):
            await store.aclose()


async def test_more_commands_at_once_than_connections_wait_their_turn(
    redis_cluster: LocalRedisCluster,
) -> None:
    """redis-py's cluster raises past max_connections per node (and a pipeline meeting that
    closed every connection in use): the store's gate makes the surplus wait instead."""
    async with RedisEventStore(
        redis_cluster.url, cluster=True, prefix=unique_prefix(), max_connections=2
    ) as store:
        for round_ in range(3):
            results = await asyncio.gather(
                *(store.index_put("rooms", f"r{n}", n) for n in range(200)),
                *(store.last_version(f"{{r{n}}}:room") for n in range(200)),
                *(store.read(f"{{r{n}}}:room") for n in range(200)),
                *(store.index_range("rooms") for n in range(20)),
                *(
                    store.append(f"{{r{n}}}:room", [ev(n)], expected_version=round_)
                    for n in range(200)
                ),
                return_exceptions=True,
            )
            assert [r for r in results if isinstance(r, BaseException)] == []
        assert len(await store.index_range("rooms")) == 200


def test_a_url_may_name_several_startup_nodes() -> None:
    from server.store.redis_cluster import startup_nodes

    assert startup_nodes("redis://10.0.0.1:7000/0") == [("10.0.0.1", 7000)]
    assert startup_nodes("redis://u:pw@a:7000,b:7001,c/0") == [
        ("a", 7000),
        ("b", 7001),
        ("c", 6379),
    ]
