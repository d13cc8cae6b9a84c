"""Queues on Redis: one sorted set (member -> score) and a hash (member -> value) per queue,
under one hash tag (``q:{<queue>}``), so each queue is in one slot of a Cluster and its scripts
run on one node, atomically; docs/storage.md, "Queues"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.store import redis_scripts
from server.store.queues import QueueEntry, Queues, check_queue
from server.store.redis_topology import RedisTopology, edge


class RedisQueues(Queues):
    """The queues of the keys under ``prefix``, through ``topology``."""

    def __init__(self, topology: RedisTopology, prefix: str) -> None:
        self._topology = topology
        self.prefix = prefix

    def keys(self, queue: str) -> list[str]:
        base = f"{self.prefix}q:{{{queue}}}"
        return [base + ":z", base + ":h"]

    async def _script(self, script: redis_scripts.Script, keys: list[str], args: list[Any]) -> Any:
        with edge():
            [(reply, _)] = await redis_scripts.with_scripts(
                self._topology, [script.call(keys, args)]
            )
        if isinstance(reply, BaseException):
            raise reply
        return reply

    async def queue_join(self, queue: str, member: str, score: int, value: bytes = b"") -> bool:
        check_queue(queue, [member])
        reply = await self._script(
            redis_scripts.QUEUE_JOIN, self.keys(queue), [member, int(score), value]
        )
        return bool(int(reply))

    async def queue_take(self, queue: str, members: Sequence[str]) -> bool:
        check_queue(queue, members)
        return bool(
            int(await self._script(redis_scripts.QUEUE_TAKE, self.keys(queue), list(members)))
        )

    async def queue_leave(self, queue: str, member: str) -> bool:
        return await self.queue_take(queue, [member])

    async def queue_entries(self, queue: str) -> list[QueueEntry]:
        check_queue(queue, ["-"])
        zkey, hkey = self.keys(queue)
        with edge():
            members, values = await self._topology.pipelined(
                lambda pipe: (pipe.zrange(zkey, 0, -1, withscores=True), pipe.hgetall(hkey))
            )
        entries = [
            QueueEntry(member.decode(), int(score), values.get(member, b""))
            for member, score in members
        ]
        return sorted(entries, key=lambda e: (e.score, e.member))
