"""Indexes on Redis: each index spread over ``INDEX_SHARDS`` sorted sets (member -> score) with
a hash beside each (member -> value), so a Cluster shares the load; docs/storage.md, "Indexes".
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

from server.store import redis_scripts
from server.store.group_commit import GroupCommit
from server.store.indexes import IndexEntry, Indexes, check_index
from server.store.redis_topology import RedisTopology, edge

INDEX_SHARDS = 16
"""Each index is spread over this many keys (slots), so a Cluster shares the load."""

WRITE_BATCH = 256
"""Most index writes one group-commit pipeline carries."""

IndexWrite = tuple[str, str, str, str, int, bytes]
"""(op, sorted set key, hash key, member, score, value) of one index write."""


class RedisIndexes(Indexes):
    """The indexes of the keys under ``prefix``, through ``topology``. Writes asked for in one
    loop turn go in one pipeline (a burst of resumes wrote several each, one round trip at a
    time, bench.recovery profile)."""

    def __init__(self, topology: RedisTopology, prefix: str) -> None:
        self._topology = topology
        self.prefix = prefix
        self.writes: GroupCommit[IndexWrite, None] = GroupCommit(
            self._send_writes, max_batch=WRITE_BATCH
        )

    def shard_keys(self, index: str, shard: int) -> tuple[str, str]:
        base = f"{self.prefix}ix:{{{index}:{shard}}}"
        return base + ":z", base + ":h"

    def _keys(self, index: str, member: str) -> tuple[str, str]:
        return self.shard_keys(index, zlib.crc32(member.encode()) % INDEX_SHARDS)

    async def index_put(self, index: str, member: str, score: int, value: bytes = b"") -> None:
        check_index(index, member)
        zkey, hkey = self._keys(index, member)
        with edge():
            await self.writes.submit(("put", zkey, hkey, member, int(score), value))

    async def index_remove(self, index: str, member: str) -> None:
        check_index(index, member)
        zkey, hkey = self._keys(index, member)
        with edge():
            await self.writes.submit(("remove", zkey, hkey, member, 0, b""))

    async def index_claim(
        self, index: str, member: str, score: int, value: bytes = b"", *, expired_at: int
    ) -> bool:
        """One script on the member's shard (its sorted set and hash share a slot)."""
        check_index(index, member)
        zkey, hkey = self._keys(index, member)
        command = redis_scripts.INDEX_CLAIM.call(
            [zkey, hkey], [member, int(score), bytes(value), int(expired_at)]
        )
        with edge():
            ((reply, _),) = await redis_scripts.with_scripts(self._topology, [command])
            if isinstance(reply, BaseException):
                raise reply
        return bool(int(reply))

    async def _send_writes(self, items: Sequence[IndexWrite]) -> list[BaseException | None]:
        """One loop turn's index writes in one round trip (per node on a Cluster), in order;
        each caller gets its own error, if any."""
        commands = [
            redis_scripts.INDEX.call([zkey, hkey], [op, member, score, value])
            for op, zkey, hkey, member, score, value in items
        ]
        answers = await redis_scripts.with_scripts(self._topology, commands)
        return [reply if isinstance(reply, BaseException) else None for reply, _ in answers]

    async def index_get(self, index: str, member: str) -> IndexEntry | None:
        check_index(index, member)
        zkey, hkey = self._keys(index, member)
        with edge():
            score, value = await self._topology.pipelined(
                lambda pipe: (pipe.zscore(zkey, member), pipe.hget(hkey, member))
            )
        if score is None:
            return None
        return IndexEntry(member, int(score), value or b"")

    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        check_index(index, "-")
        top = "+inf" if max_score is None else int(max_score)
        shards = [self.shard_keys(index, shard) for shard in range(INDEX_SHARDS)]
        with edge():
            ranges: list[Any] = await self._topology.pipelined(
                lambda pipe: [
                    pipe.zrangebyscore(z, "-inf", top, withscores=True) for z, _ in shards
                ]
            )
            values = iter(
                await self._topology.pipelined(
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
        shards = [self.shard_keys(index, shard)[0] for shard in range(INDEX_SHARDS)]
        with edge():
            counts = await self._topology.pipelined(lambda pipe: [pipe.zcard(z) for z in shards])
        return sum(int(count) for count in counts)

    async def aclose(self) -> None:
        await self.writes.aclose()
