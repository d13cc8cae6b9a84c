"""Event streams in Redis: one Redis stream per event stream, the entry id IS the version.

Compare-and-append is one Lua script on one key (atomic, Cluster-safe) that also publishes a
wake-up on the stream group's shard channel (SPUBLISH, so it stays within the slot on a Cluster);
appends are sent in group commits, one round trip per loop turn. docs/storage.md has the key
schema and reasons.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any

import redis.exceptions as redis_errors

from server.store import codec, redis_scripts
from server.store.base import validate_delete_at
from server.store.errors import CorruptEntry, NotReplicated
from server.store.group_commit import GroupCommit, Outcome
from server.store.redis_topology import Answer, Command, RedisTopology, edge
from server.store.redis_wakeups import RedisSubscription
from server.store.streams import (
    EventStreams,
    Row,
    StoredEvent,
    check_stream,
    decode_run,
    parse_entry_id,
    validate_append,
    validate_read,
)
from server.store.wakeups import LocalSubscriptions, stream_group
from shared.errors import WrongExpectedVersion

READ_MANY_BATCH = 256
"""Streams read in one pipelined round trip by ``read_many``: bounds one reply's size."""
APPEND_BATCH = 256
"""Most appends one group-commit pipeline carries."""
APPEND_HEADS = 4096
"""Most streams whose append command heads are kept (then forgotten all at once)."""

AppendResult = tuple[int, int, int | None]
"""The script's status and version, and how many replicas hold it (None: not asked)."""


class RedisStreams(EventStreams):
    """The streams of a Redis store: keys under ``prefix``, appends answered after
    ``ack_after_replicas`` replicas hold them, wake-ups to this process's ``subscriptions``
    delivered at once (``origin`` marks its own on the channel)."""

    def __init__(
        self,
        topology: RedisTopology,
        prefix: str,
        *,
        origin: str,
        subscriptions: LocalSubscriptions,
        ack_after_replicas: int = 0,
        ack_timeout_ms: int = 1000,
    ) -> None:
        self.topology = topology
        self.prefix = prefix
        self.origin = origin
        self.ack_after_replicas = ack_after_replicas
        self.ack_timeout_ms = ack_timeout_ms
        self._subscriptions = subscriptions
        self._commits: GroupCommit[Command, AppendResult] = GroupCommit(
            self._send_appends, send_now=self._send_appends_now, max_batch=APPEND_BATCH
        )
        self._append_heads: dict[str, tuple[Command, str, str]] = {}

    def key(self, stream: str) -> str:
        """A stream's key. Where every key needs a hash tag (a Cluster), a name without one
        gets its name as one (``{name}``), so that its key and its wake-up channel
        (``wake:{name}``) share a slot; a name that is itself ``{...}`` could then mean two
        streams, so it is refused there."""
        if self.topology.tags_every_key:
            if stream_group(stream) == stream:
                return f"{self.prefix}{{{stream}}}"
            if stream.startswith("{") and stream.endswith("}"):
                raise ValueError(f"on a Redis Cluster a stream name is not all braces: {stream!r}")
        return self.prefix + stream

    def _append_head(self, stream: str) -> tuple[Command, str, str]:
        """An append's script call up to its arguments, its origin argument and its wake-up
        channel: the same for every append to the stream, so kept per stream (a profile found
        rebuilding them a visible part of an append). Bounded: cleared when it holds
        APPEND_HEADS streams."""
        channel = self.channel(stream_group(stream))
        if len(self._append_heads) >= APPEND_HEADS:
            self._append_heads.clear()
        made = self._append_heads[stream] = (
            redis_scripts.APPEND.head([self.key(stream), channel]),
            f"{self.origin} {stream}",
            channel,
        )
        return made

    def _own_listeners(self, channel: str) -> int:
        """How many of the channel's subscribers Redis counts are this store's own: the script
        publishes a wake-up only if it has others. Never more than Redis holds (a subscribe not
        yet confirmed, or an unsubscribe under way, counts as none): an error here can only
        publish a wake-up nobody needed, never withhold one."""
        return sum(
            1
            for subscription in self._subscriptions.open
            if isinstance(subscription, RedisSubscription) and subscription.hears(channel)
        )

    def channel(self, group: str) -> str:
        """The shard channel a group's appends publish on: its hash tag keeps it in the slot of
        the group's streams (a Cluster refuses a script that crosses slots)."""
        return f"{self.prefix}wake:{{{group}}}"

    async def append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        payloads = validate_append(stream, events, expected_version)
        head, origin, channel = self._append_heads.get(stream) or self._append_head(stream)
        own = self._own_listeners(channel)
        with edge():
            try:
                ok, version, replicas = await self._commits.submit(
                    (*head, expected_version, origin, own, *payloads)
                )
            except redis_errors.ResponseError as exc:
                message = str(exc)
                if "CORRUPT" not in message:
                    raise
                entry = message.split("CORRUPT", 1)[1].strip()
                raise CorruptEntry(stream, entry, "the entry id is not <version>-0") from exc
        if not ok:
            raise WrongExpectedVersion(stream, expected_version, version)
        self._subscriptions.appended(stream, version, events)
        if replicas is not None and replicas < self.ack_after_replicas:
            raise NotReplicated(stream, version, replicas, self.ack_after_replicas)
        return version

    async def _send_appends(
        self, commands: Sequence[Command]
    ) -> list[AppendResult | BaseException]:
        """One loop turn's appends in one round trip (per node on a Cluster), and the replicas
        that hold them when acks wait for replicas."""
        acks = self.ack_after_replicas
        wait = (acks, self.ack_timeout_ms) if acks else None
        return _append_results(await redis_scripts.with_scripts(self.topology, commands, wait=wait))

    def _send_appends_now(
        self,
        commands: Sequence[Command],
        told: Callable[[Outcome[AppendResult]], None],
    ) -> bool:
        """The batch written at once, where acks do not wait for replicas and the topology
        can (its callers answered from the connection's callback: one loop turn sooner)."""
        if self.ack_after_replicas:
            return False

        def answered(
            outcome: list[Answer] | BaseException | Coroutine[Any, Any, list[Answer]],
        ) -> None:
            if isinstance(outcome, list):
                told(_append_results(outcome))
            elif isinstance(outcome, BaseException):
                told(outcome)
            else:
                told(_append_results_of(outcome))

        return redis_scripts.with_scripts_now(self.topology, commands, answered)

    async def read(
        self, stream: str, *, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        validate_read(stream, after, limit)
        if limit == 0:
            return []
        start = f"({after}-0" if after else "-"
        with edge():
            reply = await self.topology.client.xrange(
                self.key(stream), min=start, max="+", count=limit
            )
        return decode_run(stream, _rows(reply), after)

    async def read_many_raw(self, streams: Sequence[str]) -> dict[str, Any]:
        """One pipelined XRANGE per stream, READ_MANY_BATCH streams a round trip (a rebuild
        read 1,250 streams one command at a time, bench/recovery.py profile); the replies stay
        flat lists where the topology allows (no redis-py dict per entry: a sixth of a rebuild)."""
        for stream in streams:
            check_stream(stream)
        found: dict[str, Any] = {}
        for start in range(0, len(streams), READ_MANY_BATCH):
            batch = streams[start : start + READ_MANY_BATCH]

            def fill(pipe: Any, batch: Sequence[str] = batch) -> None:
                for stream in batch:
                    pipe.execute_command("XRANGE", self.key(stream), "-", "+")

            with edge():
                replies = await self.topology.pipelined(fill, raw=True)
            found.update(zip(batch, replies, strict=True))
        return found

    def decode_raw(self, stream: str, raw: Any) -> list[StoredEvent]:
        return decode_run(stream, _rows(raw), 0)

    async def last_version(self, stream: str) -> int:
        check_stream(stream)
        with edge():
            rows = await self.topology.client.xrevrange(self.key(stream), "+", "-", count=1)
        return _version(stream, rows[0][0]) if rows else 0

    async def last_versions(self, streams: Sequence[str]) -> dict[str, int]:
        """One small script call per batch of streams (the catch-up's XREVRANGE per stream
        was ~1,250 commands every 2 s at 250 rooms)."""
        batches = self.topology.key_batches(
            [check_stream(stream) for stream in streams], READ_MANY_BATCH
        )
        if not batches:
            return {}
        commands = [redis_scripts.LAST_IDS.call([self.key(s) for s in b]) for b in batches]
        with edge():
            answers = await redis_scripts.with_scripts(self.topology, commands)
            found: dict[str, int] = {}
            for batch, (ids, _) in zip(batches, answers, strict=True):
                if isinstance(ids, BaseException):
                    raise ids
                for stream, entry in zip(batch, ids, strict=True):
                    found[stream] = _version(stream, entry) if entry else 0
        return found

    async def streams(self, prefix: str = "") -> list[str]:
        """SCAN for stream keys (on a Cluster every primary, for the tagged and the wrapped
        untagged names that may start with ``prefix``)."""
        base = _glob_escape(self.prefix)
        patterns = {base + _glob_escape(prefix) + "*"}
        if self.topology.tags_every_key:
            patterns.add(base + "{" + _glob_escape(prefix) + "*")
        names: set[str] = set()
        with edge():
            for pattern in patterns:
                async for key in self._scan(pattern):
                    name = self._name(key)
                    if name.startswith(prefix):
                        names.add(name)
        return sorted(names)

    def _name(self, key: bytes) -> str:
        name = key[len(self.prefix.encode()) :].decode(errors="replace")
        wrapped = self.topology.tags_every_key and name.startswith("{") and name.endswith("}")
        return name[1:-1] if wrapped else name

    async def _scan(self, pattern: str) -> AsyncIterator[bytes]:
        scan = self.topology.client.scan_iter(match=pattern, count=1000, _type="stream")
        async for key in scan:
            yield key

    async def expire(self, stream: str, seconds: float) -> None:
        check_stream(stream)
        milliseconds = max(0, math.ceil(seconds * 1000))
        with edge():
            await self.topology.client.pexpire(self.key(stream), milliseconds)

    async def delete_at(self, versions: Mapping[str, int]) -> bool:
        """One script on the group's slot: the check and the delete are one step in Redis."""
        checked = validate_delete_at(versions)
        if not checked:
            return True
        streams = list(checked)
        command = redis_scripts.DELETE_AT.call(
            [self.key(s) for s in streams], [checked[s] for s in streams]
        )
        with edge():
            ((reply, _),) = await redis_scripts.with_scripts(self.topology, [command])
            if isinstance(reply, BaseException):
                raise reply
        return bool(int(reply))


def _append_results(answers: Sequence[Answer]) -> list[AppendResult | BaseException]:
    """The append script's replies as (ok, version, replicas), an error as itself."""
    return [
        reply if isinstance(reply, BaseException) else (int(reply[0]), int(reply[1]), n)
        for reply, n in answers
    ]


async def _append_results_of(
    answers: Coroutine[Any, Any, list[Answer]],
) -> list[AppendResult | BaseException]:
    return _append_results(await answers)


def _rows(reply: Any) -> Iterator[Row]:
    """XRANGE rows as (entry id, envelope): parsed by redis-py (``{field: value}``) or flat
    (``[field, value, ...]``, a pipeline without response callbacks)."""
    field = codec.FIELD
    for entry, fields in reply or ():
        if type(fields) is dict:
            yield entry, fields.get(field)
        elif len(fields) == 2 and fields[0] == field:
            yield entry, fields[1]
        else:
            yield entry, dict(zip(fields[::2], fields[1::2], strict=False)).get(field)


def _version(stream: str, entry: bytes | str) -> int:
    """The version of a stream's last entry id, or CorruptEntry naming it."""
    version = parse_entry_id(entry)
    if version is None:
        name = entry.decode(errors="replace") if isinstance(entry, bytes) else entry
        raise CorruptEntry(stream, name, "the entry id is not <version>-0")
    return version


def _glob_escape(text: str) -> str:
    return "".join("\\" + char if char in "*?[]\\" else char for char in text)
