"""The Redis Streams event store: one Redis stream per event stream, the entry id IS the version.

Compare-and-append is one Lua script on one key (atomic, Cluster-safe) that also publishes a
wake-up on the stream group's shard channel (SPUBLISH, so it stays within the slot on a Cluster);
one subscription connection per process receives them for every group it follows. Indexes are
sorted sets sharded over a few slots. docs/storage.md has the key schema and the reasons.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import weakref
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

import msgpack
import redis.asyncio as aioredis
import redis.exceptions as redis_errors
import structlog
from redis.driver_info import DriverInfo
from redis.exceptions import NoScriptError

from server.store import codec
from server.store.base import (
    CorruptEntry,
    ErrorHandler,
    EventStore,
    Follower,
    IndexEntry,
    NotReplicated,
    RawEntry,
    StoredEvent,
    StoreUnavailable,
    Subscription,
    Wakeup,
    WakeupHandler,
    check_index,
    check_stream,
    decode_run,
    stream_group,
    validate_append,
    validate_read,
)
from server.store.group_commit import GroupCommit
from server.store.redis_adapter import QuickPool, one_deadline, raw_pipeline
from shared.errors import WrongExpectedVersion

DEFAULT_PREFIX = "sa:"
READ_MANY_BATCH = 256
"""Streams read in one pipelined round trip by ``read_many``: bounds one reply's size."""
APPEND_BATCH = 256
"""Most appends one group-commit pipeline carries."""
FOLLOW_BATCH = 1000
"""Most entries one XREAD takes per stream, so one busy stream cannot starve the others."""

_log = structlog.get_logger("server.store")

INDEX_SHARDS = 16
"""Each index is spread over this many keys (slots), so a Cluster shares the load."""

# KEYS[1]: the stream key; KEYS[2]: the wake-up channel of its group (same slot).
# ARGV[1]: the expected version; ARGV[2]: "<origin> <stream name>", for the wake-up (origin
# names the store object that appends, which skips its own wake-ups); ARGV[3..]: one
# envelope per event. The wake-up is msgpack [version, "<origin> <stream>", [envelope, ...]]:
# a subscriber whose fold is just before these events folds them without reading the stream.
# Returns {1, new version}, {0, current version}, or {2, new version} when the events after
# the expected version are exactly these (a retried append that had landed). The current
# version is the id of the last entry, "<version>-0"; each event is added with the explicit
# id of its version, so the ids themselves forbid a gap or a duplicate even if this check were
# bypassed.
APPEND_SCRIPT = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local current = 0
if #last > 0 then
  local ms, seq = string.match(last[1][1], '^(%d+)-(%d+)$')
  if seq ~= '0' then
    return redis.error_reply('CORRUPT ' .. last[1][1])
  end
  current = tonumber(ms)
end
local expected = tonumber(ARGV[1])
local count = #ARGV - 2
if current ~= expected then
  if current >= expected + count then
    -- A retry of an append whose reply was lost finds its own events: report success (2).
    local rows = redis.call('XRANGE', KEYS[1], (expected + 1) .. '-0', (expected + count) .. '-0')
    local same = #rows == count
    for i = 1, #rows do
      local fields = rows[i][2]
      if #fields ~= 2 or fields[1] ~= 'd' or fields[2] ~= ARGV[i + 2] then
        same = false
        break
      end
    end
    if same then
      return {2, expected + count}
    end
  end
  return {0, current}
end
for i = 3, #ARGV do
  redis.call('XADD', KEYS[1], string.format('%d-0', current + i - 2), 'd', ARGV[i])
end
local version = current + #ARGV - 2
local payloads = {}
for i = 3, #ARGV do
  payloads[i - 2] = ARGV[i]
end
redis.call('SPUBLISH', KEYS[2], cmsgpack.pack({version, ARGV[2], payloads}))
return {1, version}
"""

# KEYS[1], KEYS[2]: an index shard's sorted set and hash (one hash tag, one slot). ARGV[1]:
# "put" or "remove"; ARGV[2]: the member; ARGV[3], ARGV[4]: its score and value (put). Both
# keys change together, as MULTI did, but as one command that a pipeline can batch.
INDEX_SCRIPT = """
if ARGV[1] == 'put' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
else
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HDEL', KEYS[2], ARGV[2])
end
return 1
"""

# KEYS: streams (on a Cluster, of one hash tag). Each one's last entry id, "" if it has none.
# One command per batch: the periodic catch-up's XREVRANGE per stream was ~1,250 commands
# every 2 s at 250 rooms, 25-37 ms of redis-py's packing and parsing in a few long loop turns.
LAST_IDS_SCRIPT = """
local out = {}
for i = 1, #KEYS do
  local last = redis.call('XREVRANGE', KEYS[i], '+', '-', 'COUNT', 1)
  out[i] = last[1] and last[1][1] or ''
end
return out
"""

IndexWrite = tuple[str, str, str, str, int, bytes]
"""(op, sorted set key, hash key, member, score, value) of one index write."""

_UNREACHABLE = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)

AppendArgs = tuple[list[str], list[Any]]
"""The script's KEYS and ARGV for one append."""
AppendResult = tuple[int, int, int | None]
"""The script's status and version, and how many replicas hold it (None: not asked)."""


def _append_result(reply: Any, replicas: int | None) -> AppendResult | BaseException:
    """One script reply of a pipeline as (status, version, replicas), or its error."""
    if isinstance(reply, BaseException):
        return reply
    ok, version = reply
    return int(ok), int(version), replicas


@contextlib.contextmanager
def _reachable() -> Iterator[None]:
    """Turn "Redis is down" into the product's StoreUnavailable."""
    try:
        yield
    except _UNREACHABLE as exc:
        raise StoreUnavailable(f"Redis is unreachable: {exc}") from exc


def parse_entry_id(entry: str) -> int | None:
    """The version an entry id "<version>-0" stands for, or None for any other id."""
    version, dash, seq = entry.partition("-")
    if dash and seq == "0" and version.isdigit() and int(version) > 0:
        return int(version)
    return None


def parse_wakeup(data: Any, origin: str) -> Wakeup | None:
    """A wake-up message (``APPEND_SCRIPT``) with the events it carries; None for this store's
    own appends (already delivered, with their events) and for a message that is not one
    (logged). Events that do not decode are left out: the subscriber then reads the stream."""
    try:
        version, head, payloads = msgpack.unpackb(data, raw=True)
        sender, stream = head.decode().split(" ", 1)
        wakeup = Wakeup(stream, int(version))
    except Exception:  # msgpack raises several unrelated types on garbage
        _log.warning("bad_wakeup", data=repr(data)[:80])
        return None
    if sender == origin:
        return None
    try:
        events = [codec.decode(payload) for payload in payloads]
    except (codec.DecodeError, TypeError):
        return wakeup
    return wakeup._replace(events=events) if events else wakeup


def raw_entry(stream: str, entry_id: bytes | str, fields: Mapping[bytes, bytes]) -> RawEntry:
    entry = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    payload = fields.get(codec.FIELD) if isinstance(fields, Mapping) else None
    return RawEntry(stream, entry, parse_entry_id(entry), payload)


def _glob_escape(text: str) -> str:
    return "".join("\\" + char if char in "*?[]\\" else char for char in text)


class RedisEventStore(EventStore):
    """Event streams in Redis, reached through ``url`` (redis.asyncio with hiredis).

    ``prefix`` goes before every stream name to make the key; it must not contain a brace, so
    the hash tag in the stream name (``{room}``) decides the Cluster slot. ``block_ms`` bounds
    a follower's blocking XREAD. Appends, reads and the one wake-up subscription share a pool of
    ``max_connections``, which bounds the process's connections however many rooms it follows;
    a follower (not used by the server) has a connection of its own.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        retention: float | None = None,
        block_ms: int = 1000,
        max_connections: int = 12,
        pool_timeout: float = 30.0,
        ping_timeout: float = 2.0,
        ack_after_replicas: int = 0,
        ack_timeout_ms: int = 1000,
        **redis_options: Any,
    ) -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"the key prefix {prefix!r} must not contain a hash tag brace")
        if redis_options.get("decode_responses"):
            raise ValueError("the event store reads bytes: decode_responses must be off")
        if block_ms <= 0:
            raise ValueError("block_ms must be positive: 0 would block forever")
        redis_options.setdefault("protocol", 2)
        # Named, so an operator (and a test) can count a server's connections in CLIENT LIST.
        redis_options.setdefault("client_name", "solitaire-arena")
        # Resolved once: redis-py otherwise reads package metadata for every new connection,
        # and every follower opens one (a tenth of a rebuild, bench/recovery.py profile).
        redis_options.setdefault("driver_info", DriverInfo())
        if ack_after_replicas < 0 or ack_timeout_ms <= 0:
            raise ValueError("ack_after_replicas is >= 0 and ack_timeout_ms > 0")
        self.url = url
        self.prefix = prefix
        self.retention = retention
        self.block_ms = block_ms
        self.ping_timeout = ping_timeout
        self.ack_after_replicas = ack_after_replicas
        self.ack_timeout_ms = ack_timeout_ms
        self._options = redis_options
        self._pool: QuickPool | None = None
        self._client = self._connect(url, max_connections, pool_timeout, redis_options)
        self._append = self._client.register_script(APPEND_SCRIPT)
        # Who appends: wake-ups carry it, so this store skips the channel's copy of its own
        # appends (delivered at once, with their events) instead of reading them back.
        self.origin = secrets.token_hex(6)
        self._commits: GroupCommit[AppendArgs, AppendResult] = GroupCommit(
            self._send_appends, max_batch=APPEND_BATCH
        )
        # Index writes are batched the same way: a burst of resumes wrote several each, one
        # MULTI round trip at a time through the pool (bench.recovery profile).
        self._index_script = self._client.register_script(INDEX_SCRIPT)
        self._last_ids_script = self._client.register_script(LAST_IDS_SCRIPT)
        self._index_writes: GroupCommit[IndexWrite, None] = GroupCommit(
            self._send_index_writes, max_batch=APPEND_BATCH
        )
        self._followers: weakref.WeakSet[Follower] = weakref.WeakSet()
        self._subscriptions: weakref.WeakSet[Subscription] = weakref.WeakSet()

    def _connect(
        self, url: str, max_connections: int, pool_timeout: float, options: dict[str, Any]
    ) -> Any:
        """The client every command goes through (a cluster store gives a cluster client)."""
        self._pool = QuickPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, **options
        )
        return aioredis.Redis(connection_pool=self._pool)

    def key(self, stream: str) -> str:
        """The Redis key of a stream."""
        return self.prefix + stream

    def channel(self, group: str) -> str:
        """The shard channel a group's appends publish on: its hash tag keeps it in the slot of
        the group's streams (a Cluster refuses a script that crosses slots)."""
        return f"{self.prefix}wake:{{{group}}}"

    def _index_keys(self, index: str, member: str) -> tuple[str, str]:
        return self._shard_keys(index, zlib.crc32(member.encode()) % INDEX_SHARDS)

    def _shard_keys(self, index: str, shard: int) -> tuple[str, str]:
        base = f"{self.prefix}ix:{{{index}:{shard}}}"
        return base + ":z", base + ":h"

    def _follow_client(self) -> aioredis.Redis:
        """A client with one connection of its own, for one follower's blocking reads."""
        options = dict(self._options)
        timeout = options.get("socket_timeout")
        if timeout is not None:  # a blocked XREAD must not look like a dead socket
            options["socket_timeout"] = max(timeout, self.block_ms / 1000 + 5)
        return aioredis.Redis.from_url(
            self.url, single_connection_client=True, max_connections=1, **options
        )

    async def append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        payloads = validate_append(stream, events, expected_version)
        keys = [self.key(stream), self.channel(stream_group(stream))]
        args = [expected_version, f"{self.origin} {stream}", *payloads]
        with _reachable():
            try:
                ok, version, replicas = await self._commits.submit((keys, args))
            except redis_errors.ResponseError as exc:
                message = str(exc)
                if "CORRUPT" not in message:
                    raise
                entry = message.split("CORRUPT", 1)[1].strip()
                raise CorruptEntry(stream, entry, "the entry id is not <version>-0") from exc
        if not ok:
            raise WrongExpectedVersion(stream, expected_version, version)
        if self._subscriptions:
            wakeup = Wakeup(stream, version, events)
            for subscription in list(self._subscriptions):
                subscription.deliver(wakeup)
        if replicas is not None and replicas < self.ack_after_replicas:
            raise NotReplicated(stream, version, replicas, self.ack_after_replicas)
        return version

    async def _send_appends(
        self, items: Sequence[AppendArgs]
    ) -> list[AppendResult | BaseException]:
        """One loop turn's appends in one pipeline, and one WAIT after them all when acks wait
        for replicas (WAIT counts the replicas holding every write of the connection so far)."""
        sha = self._append.sha

        async def send(batch: Sequence[AppendArgs]) -> list[Any]:
            commands: list[tuple[Any, ...]] = [
                ("EVALSHA", sha, len(keys), *keys, *args) for keys, args in batch
            ]
            if self.ack_after_replicas:
                commands.append(("WAIT", self.ack_after_replicas, self.ack_timeout_ms))
            return await self._commands_in_one_write(commands)

        replies = await send(items)
        replicas: int | None = None
        if self.ack_after_replicas:
            waited = replies.pop()
            replicas = waited if isinstance(waited, int) else 0
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if missing:  # a restarted or promoted Redis has no script cache: load it, send those
            await self._client.script_load(APPEND_SCRIPT)
            again = await send([items[i] for i in missing])
            if self.ack_after_replicas:
                waited = again.pop()
                replicas = min(replicas or 0, waited if isinstance(waited, int) else 0)
            for i, reply in zip(missing, again, strict=True):
                replies[i] = reply
        return [_append_result(reply, replicas) for reply in replies]

    async def _commands_in_one_write(self, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
        """The commands in one write on one pooled connection, and their replies in order,
        an error reply as its exception: a non-transactional pipeline, retried as redis-py
        retries one, without its reset, which hands the connection back through a task of its
        own (two loop turns before every append batch's callers were answered)."""
        pool = self._pool
        assert pool is not None  # the Cluster store sends its appends its own way
        connection = await pool.get_connection()
        try:

            async def attempt() -> list[Any]:
                replies: list[Any] = []
                async with one_deadline(connection):
                    await connection.send_packed_command(connection.pack_commands(commands))
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
            await pool.release(connection)

    async def read(
        self, stream: str, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        check_stream(stream)
        validate_read(after, limit)
        if limit == 0:
            return []
        start = f"({after}-0" if after else "-"
        with _reachable():
            rows = await self._client.xrange(self.key(stream), min=start, max="+", count=limit)
        return _decode_rows(stream, rows or (), after)

    async def read_many(self, streams: Sequence[str]) -> dict[str, list[StoredEvent]]:
        raw = await self.read_many_raw(streams)
        return {stream: self.decode_raw(stream, rows) for stream, rows in raw.items()}

    async def read_many_raw(self, streams: Sequence[str]) -> dict[str, Any]:
        """One pipelined XRANGE per stream, READ_MANY_BATCH streams a round trip (a rebuild
        read 1,250 streams one command at a time, bench/recovery.py profile)."""
        for stream in streams:
            check_stream(stream)
        found: dict[str, Any] = {}
        for start in range(0, len(streams), READ_MANY_BATCH):
            batch = streams[start : start + READ_MANY_BATCH]
            with _reachable():
                # No response callbacks: the replies stay flat lists ([id, [field, value]]),
                # whose conversion to dicts was a sixth of a rebuild, and decode_raw reads them.
                def fill(pipe: Any, batch: Sequence[str] = batch) -> None:
                    for stream in batch:
                        pipe.execute_command("XRANGE", self.key(stream), "-", "+")

                replies = await self._pipelined(fill, raw=True)
            found.update(zip(batch, replies, strict=True))
        return found

    def decode_raw(self, stream: str, raw: Any) -> list[StoredEvent]:
        """Flat XRANGE replies (``read_many_raw``) as events: well-formed ones in a tight loop,
        anything else through the checked path, which names the bad entry."""
        events = []
        unpack = msgpack.unpackb
        field = codec.FIELD
        readable = codec.READABLE
        rows = raw or ()
        if rows and type(rows[0][1]) is dict:  # parsed by redis-py's callbacks after all
            return _decode_rows(stream, rows, 0)
        for version, (entry, fields) in enumerate(rows, 1):
            if entry != b"%d-0" % version or len(fields) != 2 or fields[0] != field:
                break
            try:
                envelope = unpack(fields[1], raw=False, strict_map_key=False)
            except Exception:
                break
            if type(envelope) is not dict or type(envelope.get("v")) is not int:
                break
            event = envelope.get("e")
            if envelope["v"] not in readable or type(event) is not dict:
                break
            events.append(StoredEvent(stream, version, event))
        else:
            return events
        pairs = [(row[0], dict(zip(row[1][::2], row[1][1::2], strict=False))) for row in rows]
        return _decode_rows(stream, pairs, 0)

    async def last_version(self, stream: str) -> int:
        check_stream(stream)
        with _reachable():
            rows = await self._client.xrevrange(self.key(stream), max="+", min="-", count=1)
        if not rows:
            return 0
        raw = raw_entry(stream, *rows[0])
        if raw.version is None:
            raise CorruptEntry(stream, raw.entry, "the entry id is not <version>-0")
        return raw.version

    async def last_versions(self, streams: Sequence[str]) -> dict[str, int]:
        batches = self._key_batches([check_stream(stream) for stream in streams])
        sha = self._last_ids_script.sha

        def fill(pipe: Any) -> None:
            for batch in batches:
                keys = [self.key(stream) for stream in batch]
                pipe.execute_command("EVALSHA", sha, len(keys), *keys)

        with _reachable():
            try:
                replies = await self._pipelined(fill)
            except NoScriptError:  # a restarted or promoted Redis has no script cache
                await self._client.script_load(LAST_IDS_SCRIPT)
                replies = await self._pipelined(fill)
        found: dict[str, int] = {}
        for batch, ids in zip(batches, replies, strict=True):
            for stream, entry in zip(batch, ids, strict=True):
                entry = entry.decode() if isinstance(entry, bytes) else str(entry)
                version = parse_entry_id(entry) if entry else 0
                if version is None:
                    raise CorruptEntry(stream, entry, "the entry id is not <version>-0")
                found[stream] = version
        return found

    def _key_batches(self, streams: Sequence[str]) -> list[list[str]]:
        """Streams in batches a script may read together: any, on one Redis."""
        return [
            list(streams[start : start + READ_MANY_BATCH])
            for start in range(0, len(streams), READ_MANY_BATCH)
        ]

    async def _pipelined(
        self, fill: Callable[[Any], object], *, transaction: bool = False, raw: bool = False
    ) -> Any:
        """Commands queued by ``fill`` in one round trip; ``raw``: without response callbacks."""
        pipe = raw_pipeline(self._client) if raw else self._client.pipeline(transaction=transaction)
        async with pipe:
            fill(pipe)
            return await pipe.execute()

    def subscribe(
        self, on_wakeup: WakeupHandler, *, on_gap: Callable[[], None] | None = None
    ) -> Subscription:
        subscription = RedisSubscription(self, on_wakeup, on_gap)
        self._subscriptions.add(subscription)
        return subscription

    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        check_index(index, member)
        zkey, hkey = self._index_keys(index, member)
        with _reachable():
            await self._index_writes.submit(("put", zkey, hkey, member, int(score), value))

    async def index_remove(self, index: str, member: str) -> None:
        check_index(index, member)
        zkey, hkey = self._index_keys(index, member)
        with _reachable():
            await self._index_writes.submit(("remove", zkey, hkey, member, 0, b""))

    async def _send_index_writes(self, items: Sequence[IndexWrite]) -> list[None]:
        """One loop turn's index writes in one pipeline (per node on a Cluster), in order.
        Each write is idempotent, so after a NOSCRIPT the whole batch is simply sent again."""
        sha = self._index_script.sha

        def fill(pipe: Any) -> None:
            for op, zkey, hkey, member, score, value in items:
                pipe.execute_command("EVALSHA", sha, 2, zkey, hkey, op, member, score, value)

        try:
            await self._pipelined(fill)
        except NoScriptError:
            await self._client.script_load(INDEX_SCRIPT)
            await self._pipelined(fill)
        return [None] * len(items)

    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        check_index(index, member)
        zkey, hkey = self._index_keys(index, member)
        with _reachable():
            score, value = await self._pipelined(
                lambda pipe: (pipe.zscore(zkey, member), pipe.hget(hkey, member))
            )
        if score is None:
            return None
        return IndexEntry(member, int(score), value or b"")

    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        check_index(index, "-")
        top = "+inf" if max_score is None else int(max_score)
        shards = [self._shard_keys(index, shard) for shard in range(INDEX_SHARDS)]
        with _reachable():
            ranges = await self._pipelined(
                lambda pipe: [
                    pipe.zrangebyscore(z, "-inf", top, withscores=True) for z, _ in shards
                ]
            )
            values = iter(
                await self._pipelined(
                    lambda pipe: [
                        pipe.hmget(hkey, [member for member, _ in members])
                        for (_, hkey), members in zip(shards, ranges, strict=True)
                        if members
                    ]
                )
            )
        entries = []
        for members in ranges:
            if not members:
                continue
            for (member, score), value in zip(members, next(values), strict=True):
                entries.append(IndexEntry(member.decode(), int(score), value or b""))
        return sorted(entries, key=lambda e: (e.score, e.member))

    async def index_count(self, index: str) -> int:
        check_index(index, "-")
        shards = [self._shard_keys(index, shard)[0] for shard in range(INDEX_SHARDS)]
        with _reachable():
            counts = await self._pipelined(lambda pipe: [pipe.zcard(z) for z in shards])
        return sum(int(count) for count in counts)

    def follow(
        self, positions: Mapping[str, int], *, on_error: ErrorHandler | None = None
    ) -> Follower:
        follower = RedisFollower(self, positions, on_error=on_error)
        self._followers.add(follower)
        return follower

    async def streams(self, prefix: str = "") -> list[str]:
        pattern = _glob_escape(self.key(prefix)) + "*"
        cut = len(self.prefix.encode())
        names: set[str] = set()
        with _reachable():
            async for key in self._scan(pattern):
                names.add(key[cut:].decode(errors="replace"))
        return sorted(names)

    async def _scan(self, pattern: str) -> AsyncIterator[bytes]:
        async for key in self._client.scan_iter(match=pattern, count=1000, _type="stream"):
            yield key

    async def expire(self, stream: str, seconds: float) -> None:
        check_stream(stream)
        milliseconds = max(0, math.ceil(seconds * 1000))
        with _reachable():
            await self._client.pexpire(self.key(stream), milliseconds)

    async def ping(self) -> bool:
        try:
            async with asyncio.timeout(self.ping_timeout):
                return bool(await self._client.ping())
        except Exception:  # "down" has many shapes; ping's whole job is to say no
            return False

    async def aclose(self) -> None:
        await self._commits.aclose()
        await self._index_writes.aclose()
        for follower in list(self._followers):
            await follower.aclose()
        for subscription in list(self._subscriptions):
            await subscription.aclose()
        await self._client.aclose()
        if self._pool is not None:
            await self._pool.aclose()


def _decode_rows(stream: str, rows: Sequence[Any], after: int) -> list[StoredEvent]:
    """XRANGE rows as events: a tight loop for well-formed entries (a rebuild reads every
    event), and the checked path, which names a bad entry, as soon as one is not."""
    events = []
    unpack = msgpack.unpackb
    for version, (entry, fields) in enumerate(rows, after + 1):
        payload = fields.get(codec.FIELD) if type(fields) is dict else None
        if entry != f"{version}-0".encode() or payload is None:
            break
        try:
            envelope = unpack(payload, raw=False, strict_map_key=False)
        except Exception:
            break
        if type(envelope) is not dict or type(envelope.get("v")) is not int:
            break
        if envelope["v"] not in codec.READABLE:
            break
        event = envelope.get("e")
        if type(event) is not dict:
            break
        events.append(StoredEvent(stream, version, event))
    else:
        return events
    return decode_run((raw_entry(stream, entry, fields) for entry, fields in rows), after)


def xread_rows(response: Any) -> Iterator[tuple[bytes, list[Any]]]:
    """(key, entries) pairs from an XREAD reply in any shape redis-py gives (RESP2 or 3)."""
    if not response:
        return
    pairs = response.items() if isinstance(response, dict) else response
    for key, rows in pairs:
        # RESP3 "legacy" replies wrap a stream's entries in one more list.
        nested = len(rows) == 1 and isinstance(rows[0], list) and rows[0]
        if nested and isinstance(rows[0][0], list | tuple):
            rows = rows[0]
        yield (key.encode() if isinstance(key, str) else key), rows


class RedisFollower(Follower):
    """Blocking XREAD over all its streams on its own connection; ``add`` interrupts the read.

    The read runs as a task so that ``add``/``discard``/``aclose`` can cancel it (redis-py then
    drops the connection, and the next read reconnects): what the cancelled read would have
    returned is read again from the unchanged cursors, so nothing is lost or doubled. When
    Redis is unreachable the follower retries with a backoff up to one second, and logs it.
    """

    def __init__(
        self,
        store: RedisEventStore,
        positions: Mapping[str, int],
        *,
        on_error: ErrorHandler | None,
    ) -> None:
        super().__init__(positions, on_error=on_error)
        self._store = store
        self._client: aioredis.Redis | None = None
        self._reading: asyncio.Task[Any] | None = None
        self._wake: asyncio.Event | None = None
        self._backoff = 0.0

    async def _fetch(self) -> list[RawEntry]:
        if self._closed:
            return []
        if not self._cursor:
            await self._wait(None)
            return []
        names = {self._store.key(stream).encode(): stream for stream in self._cursor}
        ids: dict[Any, Any] = {key: f"{self._cursor[stream]}-0" for key, stream in names.items()}
        if self._client is None:
            self._client = self._store._follow_client()
        read: asyncio.Task[Any] = asyncio.ensure_future(self._xread(self._client, ids))
        self._reading = read
        try:
            await asyncio.wait({read})
        except BaseException:  # our caller was cancelled: take the read down with it
            read.cancel()
            await asyncio.wait({read})
            raise
        finally:
            self._reading = None
        if read.cancelled():
            return []
        error = read.exception()
        if isinstance(error, _UNREACHABLE):
            self._backoff = min(1.0, max(0.05, self._backoff * 2))
            _log.warning("follower_read_failed", error=str(error), retry_in=self._backoff)
            await self._wait(self._backoff)
            return []
        if error is not None:
            raise error
        self._backoff = 0.0
        return [
            raw_entry(names[key], entry, fields)
            for key, rows in xread_rows(read.result())
            if key in names
            for entry, fields in rows
        ]

    async def _xread(self, client: aioredis.Redis, ids: dict[Any, Any]) -> Any:
        """The read, called inside its task: redis-py wraps XREAD's command in a coroutine of
        its own, and a read cancelled before its first step left that command never awaited."""
        return await client.xread(ids, count=FOLLOW_BATCH, block=self._store.block_ms)

    async def _wait(self, seconds: float | None) -> None:
        """Sleep until ``_changed`` (or ``seconds`` pass), without a task of its own."""
        wake = self._wake = asyncio.Event()
        try:
            async with asyncio.timeout(seconds):
                await wake.wait()
        except TimeoutError:
            pass
        finally:
            self._wake = None

    def _changed(self) -> None:
        if self._reading is not None and not self._reading.done():
            self._reading.cancel()
        if self._wake is not None:
            self._wake.set()

    async def _shutdown(self) -> None:
        reading = self._reading
        if reading is not None:
            await asyncio.wait({reading})
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()
        self._store._followers.discard(self)


class RedisSubscription(Subscription):
    """Shard-channel wake-ups on one pub/sub connection of this store's pool, read by a task.

    Every append through this store object is also delivered at once, with its events (see
    ``RedisEventStore.append``); the channel brings everyone else's. A broken connection is
    reconnected with a backoff (redis-py subscribes again on connect) and reported as a gap,
    since what was published meanwhile is gone: the subscriber reads the streams instead.
    """

    def __init__(
        self,
        store: RedisEventStore,
        on_wakeup: WakeupHandler,
        on_gap: Callable[[], None] | None,
    ) -> None:
        super().__init__(on_wakeup, on_gap)
        self._store = store
        self._pubsub = store._client.pubsub()
        self._cut = len(store.prefix) + len("wake:")
        self._subscribed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # redis-py's PubSub takes its connection from the pool on first use without a lock:
        # rooms loading side by side each took one, and all but the last were never given
        # back (the pool ran dry: "No connection available", bench.load setup).
        self._lock = asyncio.Lock()

    async def _subscribe(self, groups: list[str]) -> None:
        with _reachable():
            async with self._lock:
                await self._pubsub.ssubscribe(*(self._store.channel(g) for g in groups))
        self._subscribed.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._read(), name="store-wakeups")

    async def _unsubscribe(self, groups: list[str]) -> None:
        with contextlib.suppress(*_UNREACHABLE):
            async with self._lock:
                await self._pubsub.sunsubscribe(*(self._store.channel(g) for g in groups))

    async def _read(self) -> None:
        backoff = 0.0
        while not self.closed:
            try:
                # Blocking: a timeout made and cancelled a timer for every wake-up read, and
                # close() cancels this task anyway.
                message = await self._pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=None
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # redis-py's many shapes of "the connection broke"
                backoff = min(1.0, max(0.05, backoff * 2))
                _log.warning("wakeups_read_failed", error=str(exc), retry_in=backoff)
                await asyncio.sleep(backoff)
                self.on_gap()
                continue
            if backoff:
                backoff = 0.0
                self.on_gap()  # reconnected: what was published meanwhile is lost
            if message is None or message.get("type") != "smessage":
                continue
            wakeup = parse_wakeup(message["data"], self._store.origin)
            if wakeup is not None:
                self.deliver(wakeup)

    async def _shutdown(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()
        self._store._subscriptions.discard(self)
