"""The Redis Streams event store on a Redis Cluster, through redis-py's cluster client.

Same keys, script and indexes as ``RedisEventStore``: a room's streams and its wake-up channel
share the room's hash tag, so every operation on a room stays in one slot, and its node runs
the append script. What differs: commands that span slots go through the cluster pipeline
(grouped per node); a topology change (MOVED, ASK, a failover) is retried until the slot is
served again; wake-ups arrive on one pub/sub connection per primary, re-homed when a slot moves;
followers wait for wake-ups and read with pipelined XRANGE (one XREAD cannot span slots).
docs/storage.md, "On a Redis Cluster".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
import redis.exceptions as redis_errors
import structlog
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff

from server.store.base import (
    ErrorHandler,
    Follower,
    RawEntry,
    Subscription,
    WakeupHandler,
    stream_group,
)
from server.store.redis_adapter import refresh_topology
from server.store.redis_store import (
    APPEND_SCRIPT,
    FOLLOW_BATCH,
    AppendArgs,
    AppendResult,
    RedisEventStore,
    _append_result,
    _glob_escape,
    _reachable,
    parse_wakeup,
    raw_entry,
)

_log = structlog.get_logger("server.store")

TOPOLOGY_ERRORS: tuple[type[Exception], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ClusterDownError,
    redis_errors.SlotNotCoveredError,
    redis_errors.TryAgainError,
    OSError,
)
"""What a failover or a slot move looks like to a client: worth retrying until it is over."""

_UNPLACEABLE: tuple[type[BaseException], ...] = (
    *TOPOLOGY_ERRORS,
    redis_errors.RedisClusterException,
)
"""Why a channel cannot be subscribed on its slot's primary now (the watcher tries again)."""


def node_for(cluster: RedisCluster, key: str) -> ClusterNode:
    """The primary serving ``key``'s slot, by the client's slot map."""
    node = cluster.get_node_from_key(key)
    if node is None:
        raise redis_errors.SlotNotCoveredError(f"no node serves the slot of {key!r}")
    return node


_GATED: contextvars.ContextVar[bool] = contextvars.ContextVar("cluster_gated", default=False)
"""Set while a command or pipeline of this task holds a place at the gate (nested commands,
such as redis-py's own redirect retries inside a pipeline, do not queue again)."""


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


async def patiently(patience: float, attempt: Callable[[], Awaitable[Any]]) -> Any:
    """``attempt()`` again with a backoff (50 ms doubling to 500 ms) while it fails with a
    topology error, for up to ``patience`` seconds; then its error."""
    deadline = time.monotonic() + patience
    pause = 0.05
    while True:
        try:
            return await attempt()
        except TOPOLOGY_ERRORS as exc:
            if time.monotonic() + pause > deadline:
                raise
            _log.info("store_retry", error=str(exc)[:200], retry_in=pause)
            await asyncio.sleep(pause)
            pause = min(0.5, pause * 2)


def startup_nodes(url: str) -> list[tuple[str, int]]:
    """The nodes a URL names: ``redis://host:port,host:port/0`` lists several, so that a
    server can start while one of them is down."""
    netloc = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    nodes = []
    for item in netloc.split(","):
        host, _, port = item.rpartition(":")
        nodes.append((host or item, int(port) if port.isdigit() else 6379))
    return nodes


class RedisClusterEventStore(RedisEventStore):
    """``RedisEventStore`` on a Redis Cluster; ``url`` names one node or several (comma
    separated ``host:port``): the others are found from them.

    ``patience`` is how long a command is retried while its slot has no primary (a failover
    takes about two ``cluster-node-timeout``); ``max_connections`` is per node.
    """

    def __init__(self, url: str, *, patience: float = 20.0, **options: Any) -> None:
        self.patience = patience
        super().__init__(url, **options)

    def _connect(
        self, url: str, max_connections: int, pool_timeout: float, options: dict[str, Any]
    ) -> Any:
        options = dict(options)
        options.pop("single_connection_client", None)
        retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), 3)
        nodes = startup_nodes(url)
        client: RedisCluster
        if len(nodes) > 1:
            parts = urlsplit(url.replace(",", "_", url.count(",")))  # one netloc for the parser
            if parts.username:
                options.setdefault("username", unquote(parts.username))
            if parts.password:
                options.setdefault("password", unquote(parts.password))
            if parts.scheme == "rediss":
                options.setdefault("ssl", True)
            client = _PatientCluster(
                startup_nodes=[ClusterNode(host, port) for host, port in nodes],
                max_connections=max_connections,
                retry=retry,
                **options,
            )
        else:
            client = _PatientCluster.from_url(
                url, max_connections=max_connections, retry=retry, **options
            )
        assert isinstance(client, _PatientCluster)
        client.patience = self.patience
        client.gate = asyncio.Semaphore(max_connections)
        return client

    def key(self, stream: str) -> str:
        """A stream's key; one without a hash tag gets its name as one (``{name}``), so that
        its key and its wake-up channel (``wake:{name}``) share a slot. A name that is itself
        ``{...}`` could then mean two streams, so the Cluster refuses it."""
        if stream_group(stream) == stream:
            return f"{self.prefix}{{{stream}}}"
        if stream.startswith("{") and stream.endswith("}"):
            raise ValueError(f"on a Redis Cluster a stream name is not all braces: {stream!r}")
        return self.prefix + stream

    def _name(self, key: bytes) -> str:
        name = key[len(self.prefix.encode()) :].decode(errors="replace")
        return name[1:-1] if name.startswith("{") and name.endswith("}") else name

    async def streams(self, prefix: str = "") -> list[str]:
        """SCAN of every primary (redis-py's cluster scan_iter visits each), for the tagged
        and the wrapped untagged names that may start with ``prefix``."""
        base = _glob_escape(self.prefix)
        patterns = {base + _glob_escape(prefix) + "*", base + "{" + _glob_escape(prefix) + "*"}
        names: set[str] = set()
        with _reachable():
            for pattern in patterns:
                async for key in self._scan(pattern):
                    name = self._name(key)
                    if name.startswith(prefix):
                        names.add(name)
        return sorted(names)

    @property
    def cluster(self) -> RedisCluster:
        client: RedisCluster = self._client
        return client

    def _gated(self) -> contextlib.AbstractAsyncContextManager[None]:
        """A place at the client's gate for one pipeline (see ``_PatientCluster``)."""
        client: _PatientCluster = self._client
        return client.place()

    async def _send_appends(
        self, items: Sequence[AppendArgs]
    ) -> list[AppendResult | BaseException]:
        """One loop turn's appends through the cluster pipeline (one round trip per primary),
        the whole batch retried through a failover: an append that had landed is recognised
        by the script (status 2), so a retry never doubles one. With replicas to wait for,
        each append keeps its own pipeline, since WAIT counts one connection's writes."""
        if self.ack_after_replicas:
            answers = await asyncio.gather(
                *(self._append_and_wait(keys, args) for keys, args in items),
                return_exceptions=True,
            )
            return [a if isinstance(a, BaseException) else (a[0], a[1], a[2]) for a in answers]
        sha = self._append.sha

        async def attempt() -> list[Any]:
            async with self._gated():
                await self.cluster.initialize()
                async with self.cluster.pipeline() as pipe:
                    for keys, args in items:
                        pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args)
                    replies = list(await pipe.execute(raise_on_error=False))
            for reply in replies:
                if isinstance(reply, redis_errors.NoScriptError):  # a promoted replica
                    await self.cluster.script_load(APPEND_SCRIPT)
                    raise redis_errors.TryAgainError("the append script was not loaded yet")
                if isinstance(reply, TOPOLOGY_ERRORS):
                    raise reply
            return replies

        replies = await patiently(self.patience, attempt)
        return [_append_result(reply, None) for reply in replies]

    async def _append_and_wait(self, keys: list[str], args: list[Any]) -> tuple[int, int, int]:
        """The script and WAIT in one cluster pipeline, both sent to the key's node on one
        connection (WAIT counts the replicas holding that connection's writes). If the slot
        moved meanwhile, the script was redirected and the WAIT asked the wrong node: that is
        reported as unconfirmed (zero replicas) rather than trusted."""

        async def attempt() -> tuple[int, int, int, str]:
            await self.cluster.initialize()
            node = node_for(self.cluster, keys[0])
            try:
                return (*await self._pipeline_append_wait(node, keys, args), node.name)
            except redis_errors.NoScriptError:  # a promoted replica has no script cache
                await self.cluster.script_load(APPEND_SCRIPT)
                return (*await self._pipeline_append_wait(node, keys, args), node.name)

        ok, version, replicas, asked = await patiently(self.patience, attempt)
        if node_for(self.cluster, keys[0]).name != asked:
            replicas = 0
        return ok, version, replicas

    async def _pipeline_append_wait(
        self, node: Any, keys: list[str], args: list[Any]
    ) -> tuple[int, int, int]:
        async with self._gated(), self.cluster.pipeline() as pipe:
            pipe.execute_command("EVALSHA", self._append.sha, len(keys), *keys, *args)
            pipe.execute_command(
                "WAIT", self.ack_after_replicas, self.ack_timeout_ms, target_nodes=node
            )
            (ok, version), replicas = await pipe.execute()
        return int(ok), int(version), int(replicas)

    def _key_batches(self, streams: Sequence[str]) -> list[list[str]]:
        """Streams of one group (hash tag) per batch: a script's keys must share a slot."""
        groups: dict[str, list[str]] = {}
        for stream in streams:
            groups.setdefault(stream_group(stream), []).append(stream)
        return list(groups.values())

    async def _pipelined(
        self, fill: Callable[[Any], object], *, transaction: bool = False, raw: bool = False
    ) -> Any:
        """Through the cluster pipeline (commands grouped per node), retried through a
        failover; replies always parsed (``decode_raw`` reads both shapes)."""

        async def attempt() -> Any:
            async with self._gated():
                await self.cluster.initialize()
                async with self.cluster.pipeline(transaction=transaction) as pipe:
                    fill(pipe)
                    return await pipe.execute()

        return await patiently(self.patience, attempt)

    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> Subscription:
        subscription = ClusterSubscription(self, on_wakeup, on_gap)
        self._subscriptions.add(subscription)
        return subscription

    def follow(
        self, positions: Mapping[str, int], *, on_error: ErrorHandler | None = None
    ) -> Follower:
        follower = ClusterFollower(self, positions, on_error=on_error)
        self._followers.add(follower)
        return follower

    async def ping(self) -> bool:
        try:
            async with asyncio.timeout(self.ping_timeout):
                await self.cluster.initialize()
                replies = await self.cluster.ping(target_nodes=RedisCluster.PRIMARIES)
                return bool(replies)
        except Exception:  # "down" has many shapes; ping's whole job is to say no
            return False

    def node_client(self, host: str, port: int) -> aioredis.Redis:
        """A plain client of one node for its pub/sub connection: no retries of its own, so a
        broken connection is seen (and reported as a gap) instead of silently redone."""
        options = {
            k: v
            for k, v in self._options.items()
            if k not in {"socket_timeout", "retry", "single_connection_client"}
        }
        return aioredis.Redis(host=host, port=port, retry=Retry(NoBackoff(), 0), **options)


class _NodeReader:
    """One primary's shard-channel subscriptions, on one pub/sub connection, read by a task."""

    def __init__(self, owner: ClusterSubscription, name: str, host: str, port: int) -> None:
        self.name = name
        self.channels: set[str] = set()
        self.client = owner._store.node_client(host, port)
        self.pubsub = self.client.pubsub()
        self.broken = False
        self._owner = owner
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Read, once subscribed (redis-py has no connection to read before)."""
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(
                self._owner._read(self), name=f"store-wakeups-{self.name}"
            )

    async def aclose(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()


class ClusterSubscription(Subscription):
    """Wake-ups of every followed group from every primary: one connection per node that owns
    a followed group's slot. A watcher checks each second (and at once after a broken
    connection or a server-side unsubscribe) that every channel is on its slot's primary, moves
    those that are not, and reports a gap for what was published meanwhile."""

    RECHECK_S = 1.0
    RETRY_S = 0.2
    """How soon a channel that found no primary (a failover under way) is tried again."""

    def __init__(
        self,
        store: RedisClusterEventStore,
        on_wakeup: WakeupHandler,
        on_gap: Callable[[], None] | None,
    ) -> None:
        super().__init__(on_wakeup, on_gap)
        self._store = store
        self._readers: dict[str, _NodeReader] = {}
        self._home: dict[str, str] = {}  # channel -> the node name it is subscribed on
        self._lock = asyncio.Lock()
        self._recheck = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None

    async def _subscribe(self, groups: list[str]) -> None:
        async with self._lock:
            for group in groups:
                await self._place(self._store.channel(group))
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(), name="store-wakeups-watch"
            )

    async def _unsubscribe(self, groups: list[str]) -> None:
        async with self._lock:
            for group in groups:
                channel = self._store.channel(group)
                reader = self._readers.get(self._home.pop(channel, ""))
                if reader is not None:
                    reader.channels.discard(channel)
                    if not reader.broken:
                        with contextlib.suppress(*TOPOLOGY_ERRORS):
                            await reader.pubsub.sunsubscribe(channel)

    async def _place(self, channel: str) -> bool:
        """Subscribe ``channel`` on its slot's primary now; False (left for the watcher) when
        the slot has no reachable primary."""
        cluster = self._store.cluster
        try:
            await cluster.initialize()
            node = node_for(cluster, channel)
            reader = self._readers.get(node.name)
            if reader is None or reader.broken:
                if reader is not None:
                    await self._drop(reader)
                reader = _NodeReader(self, node.name, node.host, int(node.port))
                self._readers[node.name] = reader
            await reader.pubsub.ssubscribe(channel)
            reader.start()
        except _UNPLACEABLE as exc:
            _log.warning("wakeups_subscribe_failed", channel=channel, error=str(exc)[:200])
            self._home.pop(channel, None)
            return False
        reader.channels.add(channel)
        self._home[channel] = node.name
        return True

    async def _drop(self, reader: _NodeReader) -> None:
        if self._readers.get(reader.name) is reader:
            del self._readers[reader.name]
        for channel in reader.channels:
            if self._home.get(channel) == reader.name:
                del self._home[channel]
        if asyncio.current_task() is not reader.task:
            await reader.aclose()

    async def _read(self, reader: _NodeReader) -> None:
        while not self.closed:
            try:
                # Blocking, without a timer per read (as RedisSubscription): aclose cancels it.
                message = await reader.pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the node went away, or its connection broke
                _log.warning("wakeups_read_failed", node=reader.name, error=str(exc)[:200])
                reader.broken = True
                self._recheck.set()
                return
            if message is None:
                continue
            kind = message.get("type")
            if kind == "sunsubscribe":
                channel = _text(message.get("channel"))
                if channel in reader.channels and self._home.get(channel) == reader.name:
                    reader.channels.discard(channel)  # the slot moved away from this node
                    del self._home[channel]
                    self._recheck.set()
                continue
            if kind != "smessage":
                continue
            wakeup = parse_wakeup(message["data"], self._store.origin)
            if wakeup is not None:
                self.deliver(wakeup)

    async def _watch(self) -> None:
        """Keep every followed channel on its slot's current primary; a move is a gap."""
        while not self.closed:
            unplaced = len(self._home) < len(self.groups)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.RETRY_S if unplaced else self.RECHECK_S):
                    await self._recheck.wait()
            self._recheck.clear()
            try:
                if await self._reconcile():
                    self.on_gap()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # keep watching: the next pass may find the cluster back
                _log.warning("wakeups_watch_failed", error=str(exc)[:200])
                await asyncio.sleep(self.RECHECK_S)

    async def _reconcile(self) -> bool:
        """Move channels whose node broke or no longer owns their slot; True if any moved."""
        async with self._lock:
            broken = [r for r in self._readers.values() if r.broken]
            if broken or len(self._home) < len(self.groups):
                with contextlib.suppress(*_UNPLACEABLE):
                    await refresh_topology(self._store.cluster)
            for reader in broken:
                await self._drop(reader)
            cluster = self._store.cluster
            wanted = {self._store.channel(group) for group in self.groups}
            moved = False
            for channel in sorted(wanted):
                home = self._home.get(channel)
                try:
                    owner = node_for(cluster, channel).name
                except _UNPLACEABLE:
                    owner = None
                if home is not None and home == owner:
                    continue
                if home is not None:  # the slot moved on: leave the old node
                    old = self._readers.get(home)
                    if old is not None:
                        old.channels.discard(channel)
                        with contextlib.suppress(*TOPOLOGY_ERRORS):
                            await old.pubsub.sunsubscribe(channel)
                    del self._home[channel]
                if await self._place(channel):
                    moved = True
            for reader in [r for r in self._readers.values() if not r.channels]:
                await self._drop(reader)
            return moved or bool(broken)

    async def _shutdown(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(BaseException):
                await self._watcher
        for reader in list(self._readers.values()):
            await reader.aclose()
        self._readers.clear()
        self._store._subscriptions.discard(self)


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class ClusterFollower(Follower):
    """Follows streams on a Cluster: reads every stream after its cursor in one pipelined
    round trip, and when there is nothing new waits for a wake-up of one of their groups (or
    ``block_ms``, in case one was lost). Subscribed before reading, so no append slips between
    the read and the wait."""

    def __init__(
        self,
        store: RedisClusterEventStore,
        positions: Mapping[str, int],
        *,
        on_error: ErrorHandler | None,
    ) -> None:
        super().__init__(positions, on_error=on_error)
        self._store = store
        self._poke = asyncio.Event()
        self._subscription: Subscription | None = None
        self._backoff = 0.0

    async def _fetch(self) -> list[RawEntry]:
        if self._closed:
            return []
        try:
            return await self._fetch_or_wait()
        except BaseException:  # our caller was cancelled: leave no task or connection behind
            await self._drop_subscription()
            raise

    async def _fetch_or_wait(self) -> list[RawEntry]:
        groups = {stream_group(stream) for stream in self._cursor}
        self._poke.clear()
        if self._subscription is None:
            self._subscription = self._store.subscribe(
                lambda _wakeup: self._poke.set(), on_gap=self._poke.set
            )
        try:
            await self._subscription.unsubscribe(self._subscription.groups - groups)
            await self._subscription.subscribe(groups)
            entries = await self._read_after(dict(self._cursor))
        except TOPOLOGY_ERRORS as error:
            self._backoff = min(1.0, max(0.05, self._backoff * 2))
            _log.warning("follower_read_failed", error=str(error), retry_in=self._backoff)
            await self._wait(self._backoff)
            return []
        self._backoff = 0.0
        if entries:
            return entries
        await self._wait(self._store.block_ms / 1000)
        return []

    async def _drop_subscription(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            await subscription.aclose()

    async def _read_after(self, cursors: dict[str, int]) -> list[RawEntry]:
        if not cursors:
            return []
        streams = list(cursors)
        replies = await self._store._pipelined(
            lambda pipe: [
                pipe.xrange(
                    self._store.key(s), f"({cursors[s]}-0" if cursors[s] else "-", "+",
                    count=FOLLOW_BATCH,
                )
                for s in streams
            ]
        )  # fmt: skip
        return [
            raw_entry(stream, entry, fields)
            for stream, rows in zip(streams, replies, strict=True)
            for entry, fields in rows or ()
        ]

    async def _wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._poke.wait()

    def _changed(self) -> None:
        self._poke.set()

    async def _shutdown(self) -> None:
        await self._drop_subscription()
        self._store._followers.discard(self)
