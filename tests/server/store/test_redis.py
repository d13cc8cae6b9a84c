"""What only the Redis store has: its key schema, restarts with the AOF, crashes, reconnects,
its group commit and its mapping of redis-py's errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgpack
import pytest
import redis.asyncio as aioredis
import redis.exceptions as redis_errors
from redis.crc import key_slot

from server.store import (
    CorruptEntry,
    IndexEntry,
    RedisEventStore,
    SingleNode,
    StoreError,
    StoreUnavailable,
    Wakeup,
    codec,
)
from server.store.redis_pipeline import _Line
from shared.errors import WrongExpectedVersion
from tests.server.store.conftest import unique_prefix
from tests.server.store.test_wakeups import until
from tests.support.redis_server import RedisServer
from tests.support.tasks import tasks_made

SAFETY = 15.0
"""Seconds before a test that waits gives up: a hang fails, it is not a timing test."""


def ev(n: int) -> dict[str, object]:
    return {"type": "moved", "n": n}


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url, protocol=2)
    yield client
    await client.aclose()


@pytest.fixture
async def store(redis_server: RedisServer) -> AsyncIterator[RedisEventStore]:
    store = RedisEventStore(redis_server.url, prefix=unique_prefix())
    yield store
    await store.aclose()


async def test_the_key_schema(store: RedisEventStore, raw: aioredis.Redis) -> None:
    await store.append("{r1}:game:ann", [ev(1), ev(2)], expected_version=0)
    key = store.prefix + "{r1}:game:ann"
    assert store.key("{r1}:game:ann") == key
    assert await raw.type(key) == b"stream"
    entries = await raw.xrange(key)
    assert [entry for entry, _ in entries] == [b"1-0", b"2-0"]
    assert [list(fields) for _, fields in entries] == [[b"d"], [b"d"]]
    assert msgpack.unpackb(entries[0][1][b"d"]) == {"v": 1, "e": ev(1)}
    assert await raw.ttl(key) == -1  # a live game is never expiring


def test_a_room_and_its_games_share_one_cluster_slot() -> None:
    store = RedisEventStore("redis://127.0.0.1:1/0")
    slots = {key_slot(store.key(name).encode()) for name in ["{r1}:room", "{r1}:game:ann"]}
    assert len(slots) == 1
    assert key_slot(store.key("{r2}:room").encode()) not in slots


@pytest.mark.parametrize("prefix", ["sa{", "}x:", "{a}:"])
def test_a_prefix_with_a_brace_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="brace"):
        RedisEventStore("redis://127.0.0.1:1/0", prefix=prefix)


def test_decoded_responses_are_refused() -> None:
    with pytest.raises(ValueError, match="decode_responses"):
        RedisEventStore("redis://127.0.0.1:1/0", decode_responses=True)


async def test_expire_sets_a_ttl_on_the_key(store: RedisEventStore, raw: aioredis.Redis) -> None:
    await store.append("done", [ev(1)], expected_version=0)
    await store.expire("done", 90.5)
    assert 0 < await raw.pttl(store.key("done")) <= 90_500
    store.retention = 7
    await store.retire("done")
    assert 0 < await raw.pttl(store.key("done")) <= 7_000


async def test_streams_ignores_other_keys_and_other_prefixes(
    store: RedisEventStore, raw: aioredis.Redis
) -> None:
    await store.append("a", [ev(1)], expected_version=0)
    await raw.set(store.prefix + "not-a-stream", b"x")
    await raw.xadd("elsewhere:b", {b"d": b"x"})
    assert await store.streams() == ["a"]


async def test_an_entry_id_that_is_not_a_version_is_corrupt(
    store: RedisEventStore, raw: aioredis.Redis
) -> None:
    await store.append("s", [ev(1)], expected_version=0)
    await raw.xadd(store.key("s"), {b"d": b"\xc1"}, id="5-3")
    with pytest.raises(CorruptEntry, match="entry 5-3: the entry id is not <version>-0"):
        await store.read("s")
    with pytest.raises(CorruptEntry, match="entry 5-3"):
        await store.last_version("s")
    with pytest.raises(CorruptEntry, match="entry 5-3"):
        await store.append("s", [ev(2)], expected_version=1)


async def test_a_gap_in_versions_is_corrupt(store: RedisEventStore, raw: aioredis.Redis) -> None:
    await store.append("s", [ev(1)], expected_version=0)
    valid = codec.encode(ev(2))  # a good payload, at an id that skips versions
    added = (await raw.xadd(store.key("s"), {b"d": valid}, id="*")).decode()
    with pytest.raises(CorruptEntry, match="a gap in versions: expected 2") as caught:
        await store.read("s")
    assert (caught.value.stream, caught.value.entry) == ("s", added)
    assert [e.version for e in await store.read("s", limit=1)] == [1]


async def test_an_entry_without_the_payload_field_is_corrupt(
    store: RedisEventStore, raw: aioredis.Redis
) -> None:
    await raw.xadd(store.key("s"), {b"x": b"1"}, id="1-0")
    with pytest.raises(CorruptEntry, match="stream 's' entry 1-0: no 'd' field"):
        await store.read("s")


def through_the_pool(store: RedisEventStore) -> None:
    """Appends as a store that waits for replicas sends them: each batch on a pooled
    connection, not on the pipelined one (server.store.redis_pipeline)."""
    assert isinstance(store.topology, SingleNode)
    store.topology._line = None


async def test_many_concurrent_commands_share_a_small_pool(redis_server: RedisServer) -> None:
    """The pool's quick path (an idle connection, nobody waiting) and its waiting path mix:
    every command completes, and the pool never opens more than its maximum."""
    async with RedisEventStore(
        redis_server.url, prefix=unique_prefix(), max_connections=2, pool_timeout=SAFETY
    ) as store:
        through_the_pool(store)
        for round_ in range(3):
            versions = await asyncio.gather(
                *(store.append(f"s{n}", [ev(n)], expected_version=round_) for n in range(40))
            )
            assert versions == [round_ + 1] * 40
            pool = store.topology.pool  # type: ignore[attr-defined]
            assert len(pool._available_connections) + len(pool._in_use_connections) <= 2
            assert not pool._in_use_connections
        assert [len(await store.read(f"s{n}")) for n in range(40)] == [3] * 40


async def test_rooms_subscribed_side_by_side_leave_the_pool_its_connections(
    redis_server: RedisServer,
) -> None:
    """redis-py's PubSub takes its connection without a lock: concurrent first subscribes each
    took one and leaked all but the last, until appends found no connection at all."""
    async with RedisEventStore(
        redis_server.url, prefix=unique_prefix(), max_connections=3, pool_timeout=1.0
    ) as store:
        through_the_pool(store)
        subscription = store.subscribe(lambda wakeup: None)
        await asyncio.gather(*(subscription.subscribe([f"room{n}"]) for n in range(50)))
        pool = store.topology.pool  # type: ignore[attr-defined]
        assert pool is not None
        assert len(pool._in_use_connections) == 1  # the subscription's own
        versions = await asyncio.gather(
            *(store.append(f"{{room{n}}}:g", [ev(n)], expected_version=0) for n in range(20))
        )
        assert versions == [1] * 20
        await subscription.aclose()


async def test_index_writes_of_one_loop_turn_go_as_one_pipeline_in_order(
    store: RedisEventStore,
) -> None:
    before = store.indexes.writes.batches
    await asyncio.gather(
        *(store.index_put("rooms", f"r{n}", n, b"v") for n in range(20)),
        store.index_remove("rooms", "r3"),
        store.index_put("rooms", "r3", 33, b"again"),  # after the remove: it stays
    )
    assert store.indexes.writes.batches == before + 1
    assert await store.index_count("rooms") == 20
    assert await store.index_get("rooms", "r3") == IndexEntry("r3", 33, b"again")


async def test_the_appends_of_one_loop_turn_go_as_one_pipeline(store: RedisEventStore) -> None:
    """Group commit: each caller gets its own answer, a conflict included, from one batch."""
    await store.append("c", [ev(1)], expected_version=0)
    before = store._commits.batches
    answers = await asyncio.gather(
        *(store.append(f"s{n}", [ev(n), ev(n + 1)], expected_version=0) for n in range(30)),
        store.append("c", [ev(2)], expected_version=0),
        return_exceptions=True,
    )
    assert answers[:30] == [2] * 30
    assert isinstance(answers[30], WrongExpectedVersion)
    assert store._commits.batches == before + 1


async def test_an_append_after_the_script_cache_was_flushed(
    store: RedisEventStore, raw: aioredis.Redis
) -> None:
    """A restarted or promoted Redis has no scripts: the batch loads it and goes on."""
    await store.append("a", [ev(1)], expected_version=0)
    await raw.script_flush()
    versions = await asyncio.gather(
        store.append("a", [ev(2)], expected_version=1),
        store.append("b", [ev(1)], expected_version=0),
    )
    assert versions == [2, 1]
    await raw.script_flush()  # the index script too
    await asyncio.gather(store.index_put("due", "r1", 5, b"x"), store.index_put("due", "r2", 6))
    assert [e.member for e in await store.index_range("due")] == ["r1", "r2"]
    await raw.script_flush()  # and the catch-up's
    assert await store.last_versions(["a", "b", "c"]) == {"a": 2, "b": 1, "c": 0}


async def test_own_wakeups_are_not_read_back_from_the_channel(
    redis_server: RedisServer,
) -> None:
    """The channel's copy of this store's own append is dropped (it was delivered at once,
    with its events); another store object's append arrives from the channel, with its events
    too, so the subscriber need not read the stream."""
    prefix = unique_prefix()
    async with (
        RedisEventStore(redis_server.url, prefix=prefix) as mine,
        RedisEventStore(redis_server.url, prefix=prefix) as theirs,
    ):
        got: list[Wakeup] = []
        theirs_came = asyncio.Event()

        def on_wakeup(wakeup: Wakeup) -> None:
            got.append(wakeup)
            if wakeup.stream == "{room}:b":
                theirs_came.set()

        subscription = mine.subscribe(on_wakeup)
        await subscription.subscribe(["room"])
        await mine.append("{room}:a", [ev(1)], expected_version=0)
        await theirs.append("{room}:b", [ev(1)], expected_version=0)
        async with asyncio.timeout(SAFETY):
            await theirs_came.wait()
        await asyncio.sleep(0.2)  # the channel's copy of ours would have come by now
        assert [(w.stream, w.version, w.events) for w in got] == [
            ("{room}:a", 1, [ev(1)]),
            ("{room}:b", 1, [ev(1)]),
        ]
        await subscription.aclose()


async def spublished(raw: aioredis.Redis) -> int:
    """How many SPUBLISH calls Redis ran (the append script's included)."""
    stats = await raw.info("commandstats")
    return int(stats.get("cmdstat_spublish", {}).get("calls", 0))


async def test_a_group_followed_by_its_writer_alone_publishes_no_wakeup(
    redis_server: RedisServer, raw: aioredis.Redis
) -> None:
    """Redis would only send the writer its own wake-up back, to be dropped (a read and a
    parse a move on a single server). Once a second process follows the group, the
    writer's appends wake it again."""
    prefix = unique_prefix()
    async with (
        RedisEventStore(redis_server.url, prefix=prefix) as mine,
        RedisEventStore(redis_server.url, prefix=prefix) as theirs,
    ):
        channel = mine.channel("room")
        following = mine.subscribe(lambda w: None)
        await following.subscribe(["room"])
        await until(lambda: following.hears(channel))
        before = await spublished(raw)
        await mine.append("{room}:a", [ev(1), ev(2)], expected_version=0)
        await mine.append("{room}:a", [ev(3)], expected_version=2)
        assert await spublished(raw) == before

        got: list[Wakeup] = []
        other = theirs.subscribe(got.append)
        await other.subscribe(["room"])
        await until(lambda: other.hears(channel))
        await mine.append("{room}:a", [ev(4)], expected_version=3)
        await until(lambda: bool(got))
        assert [(w.stream, w.version, w.events) for w in got] == [("{room}:a", 4, [ev(4)])]

        await following.unsubscribe(["room"])
        assert not following.hears(channel)  # at once, before Redis answers the unsubscribe
        await other.aclose()
        await following.aclose()


async def test_an_unconfirmed_subscription_is_not_counted_as_the_writers_own(
    redis_server: RedisServer,
) -> None:
    """Until Redis answers a subscribe, the writer counts none of its own listeners: the
    script then publishes if anyone at all listens, so nobody's wake-up is withheld."""
    async with RedisEventStore(redis_server.url, prefix=unique_prefix()) as store:
        subscription = store.subscribe(lambda w: None)
        assert store._own_listeners(store.channel("room")) == 0
        await subscription.subscribe(["room"])
        await until(lambda: store._own_listeners(store.channel("room")) == 1)
        await subscription.aclose()
        assert store._own_listeners(store.channel("room")) == 0


async def test_a_broken_wakeup_connection_is_a_gap_and_is_subscribed_again(
    redis_server: RedisServer, raw: aioredis.Redis
) -> None:
    """The reader blocks without a timeout: a connection Redis closes still ends its read, is
    reported as a gap (what was published meanwhile is gone: the hub reads the streams), and the
    next wake-up comes through the new connection."""
    prefix = unique_prefix()
    async with (
        RedisEventStore(redis_server.url, prefix=prefix) as mine,
        RedisEventStore(redis_server.url, prefix=prefix) as theirs,
    ):
        got: list[int] = []
        gaps: list[None] = []
        subscription = mine.subscribe(
            lambda w: got.append(w.version), on_gap=lambda: gaps.append(None)
        )
        await subscription.subscribe(["room"])
        await theirs.append("{room}:b", [ev(1)], expected_version=0)
        await until(lambda: bool(got))
        assert await raw.execute_command("CLIENT", "KILL", "TYPE", "pubsub") >= 1
        await until(lambda: bool(gaps))
        async with asyncio.timeout(SAFETY):
            version = 1
            while got[-1] == 1:  # published until the new connection has subscribed again
                version = await theirs.append(
                    "{room}:b", [ev(version + 1)], expected_version=version
                )
                await asyncio.sleep(0.05)
        assert got[-1] == version
        await subscription.aclose()


async def test_the_store_works_over_resp3_too(redis_server: RedisServer) -> None:
    async with RedisEventStore(redis_server.url, prefix=unique_prefix(), protocol=3) as store:
        await store.append("a", [ev(1)], expected_version=0)
        await store.append("b", [ev(1), ev(2)], expected_version=0)
        assert [e.version for e in await store.read("b", after=1)] == [2]
        assert await store.last_versions(["a", "b"]) == {"a": 1, "b": 2}
        raw = await store.read_many_raw(["b"])
        assert [e.version for e in store.decode_raw("b", raw["b"])] == [1, 2]


async def test_events_survive_a_clean_restart_with_the_aof(fresh_redis: RedisServer) -> None:
    prefix = unique_prefix()
    async with RedisEventStore(fresh_redis.url, prefix=prefix) as store:
        for n in range(1, 31):
            await store.append(f"{{r}}:game:p{n % 3}", [ev(n)], expected_version=(n - 1) // 3)
    fresh_redis.stop()
    fresh_redis.start()
    async with RedisEventStore(fresh_redis.url, prefix=prefix) as store:
        assert await store.streams() == ["{r}:game:p0", "{r}:game:p1", "{r}:game:p2"]
        for p in range(3):
            events = await store.read(f"{{r}}:game:p{p}")
            assert [e.version for e in events] == list(range(1, 11))
            assert [e.data["n"] for e in events] == [n for n in range(1, 31) if n % 3 == p]


async def test_acknowledged_appends_survive_a_kill(fresh_redis: RedisServer) -> None:
    """appendfsync always: once append returns, the event is on disk, even under SIGKILL."""
    store = RedisEventStore(fresh_redis.url, prefix="sa:")
    for n in range(1, 51):
        assert await store.append("{r}:room", [ev(n)], expected_version=n - 1) == n
    fresh_redis.kill()
    assert await store.ping() is False
    with pytest.raises(StoreUnavailable) as caught:
        await store.append("{r}:room", [ev(51)], expected_version=50)
    assert caught.value.code == "store_unavailable"
    fresh_redis.start()
    assert await store.ping() is True  # the same store reconnects by itself
    assert [e.data["n"] for e in await store.read("{r}:room")] == list(range(1, 51))
    assert await store.append("{r}:room", [ev(51)], expected_version=50) == 51
    await store.aclose()


async def test_an_append_makes_no_task_but_its_batchs(store: RedisEventStore) -> None:
    """Each task on an append's path was a loop turn before its caller was answered (a
    pipeline's write and its reset each made one): the group commit's own is the only one."""
    await store.append("g-tasks-1", [ev(1)], expected_version=0)  # connected, script loaded
    with tasks_made() as made:
        assert await store.append("g-tasks-1", [ev(2)], expected_version=1) == 2
    assert made == ["GroupCommit._drain"]


async def test_an_append_is_answered_in_the_loop_turn_after_its_reply_is_read(
    store: RedisEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller wakes in the turn after the one whose callback read Redis's reply: a task
    that awaited the reply, then answered the callers, cost every ack one turn more."""
    await store.append("g-turns-1", [ev(1)], expected_version=0)  # connected, script loaded
    loop = asyncio.get_running_loop()
    turns, done = 0, False
    read_in: list[int] = []

    def turn() -> None:  # runs once a loop turn, first in it
        nonlocal turns
        turns += 1
        if not done:
            loop.call_soon(turn)

    def reading(line: _Line, data: bytes) -> None:
        read_in.append(turns)
        data_received(line, data)

    data_received = _Line.data_received
    monkeypatch.setattr(_Line, "data_received", reading)
    loop.call_soon(turn)
    await asyncio.sleep(0)
    assert await store.append("g-turns-1", [ev(2)], expected_version=1) == 2
    done = True
    assert read_in
    assert turns == read_in[-1] + 1


async def test_an_append_batch_survives_a_dropped_connection(
    store: RedisEventStore, raw: aioredis.Redis
) -> None:
    """A connection Redis closed is reconnected and the batch sent again, as redis-py retries
    a pipeline; the script answers an append that had landed as done, so nothing doubles."""
    assert await store.append("g-drop-1", [ev(1)], expected_version=0) == 1
    await raw.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    assert await store.append("g-drop-1", [ev(2)], expected_version=1) == 2
    assert [e.version for e in await store.read("g-drop-1")] == [1, 2]


async def test_a_redis_error_reply_is_a_store_error_not_redis_pys(
    store: RedisEventStore, raw: aioredis.Redis
) -> None:
    """redis-py's own families stop at the store's edge: a caller catches StoreError."""
    await raw.set(store.key("s"), b"not a stream")
    await raw.set(store.indexes.shard_keys("due", 0)[0], b"not a sorted set")
    calls = [
        store.read("s"),
        store.last_version("s"),
        store.append("s", [ev(1)], expected_version=0),
        store.read_many(["s"]),
        store.last_versions(["s"]),
        store.index_range("due"),
    ]
    for call in calls:
        with pytest.raises(StoreError) as caught:
            await call
        assert not isinstance(caught.value, StoreUnavailable)
        assert caught.value.code == "store_error"
        assert isinstance(caught.value.__cause__, redis_errors.ResponseError)


async def test_a_finished_stream_leaves_the_append_heads_a_long_run_keeps(
    store: RedisEventStore,
) -> None:
    """Each stream's append command head is kept for its next append; a stream that expired (a
    finished room) takes none, so its head goes, and a server that runs for days keeps the
    heads of its live streams, not one for every stream it ever wrote."""
    await store.append("{r1}:game:ann", [ev(1)], expected_version=0)
    await store.append("{r1}:game:bob", [ev(1)], expected_version=0)
    assert set(store._append_heads) == {"{r1}:game:ann", "{r1}:game:bob"}
    await store.expire("{r1}:game:ann", 0)
    await store.retire("{r1}:game:bob")
    assert set(store._append_heads) == ({"{r1}:game:bob"} if store.retention is None else set())
    assert await store.append("{r1}:game:ann", [ev(1)], expected_version=0) == 1  # made again


async def test_streams_deleted_at_their_versions_leave_the_append_heads(
    store: RedisEventStore,
) -> None:
    await store.append("{r2}:room", [ev(1)], expected_version=0)
    await store.append("{r2}:game:ann", [ev(1)], expected_version=0)
    assert await store.delete_at({"{r2}:room": 1, "{r2}:game:ann": 1})
    assert not {"{r2}:room", "{r2}:game:ann"} & set(store._append_heads)
