"""Presence across processes: heartbeats, and the rooms where each process holds seats.

Every process beats into the ``processes`` index; one silent for three beats is gone, and the
rooms it noted in ``held.<process>`` are where its seats' connections went away with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from server.runtime.clock import Clock
from server.store import IndexEntry, Indexes

PROCESSES_INDEX = "processes"  # server process id -> its last heartbeat


def held_index(process: str) -> str:
    """Rooms where ``process`` holds a seat's connection: what to look at if it dies."""
    return f"held.{process}"


class Presence:
    """This process's heartbeat and holdings, and the others' as the store has them."""

    def __init__(self, store: Indexes, clock: Clock, process: str) -> None:
        self.store = store
        self.clock = clock
        self.process = process

    async def hold(self, room_id: str) -> None:
        """Note that this process holds a seat's connection in the room."""
        await self.store.index_put(held_index(self.process), room_id, self.clock.now_ms())

    async def beat(self) -> None:
        await self.store.index_put(PROCESSES_INDEX, self.process, self.clock.now_ms())

    async def beating_after(self, after: int) -> set[str]:
        """Processes whose last beat is after ``after``, this one always. A process not among
        them is gone, whether it is still listed, silent, or already forgotten by the process
        that took over from it: an observer must not depend on seeing it silent first."""
        entries = await self.store.index_range(PROCESSES_INDEX)
        return {e.member for e in entries if e.score > after} | {self.process}

    async def silent_since(self, before: int) -> list[IndexEntry]:
        """Other processes whose last beat is at or before ``before``."""
        entries = await self.store.index_range(PROCESSES_INDEX, max_score=before)
        return [e for e in entries if e.member != self.process]

    async def held_by(self, process: str) -> list[str]:
        return [e.member for e in await self.store.index_range(held_index(process))]

    async def release(self, process: str, room_id: str) -> None:
        await self.store.index_remove(held_index(process), room_id)

    async def let_go(self, room_ids: Sequence[str]) -> None:
        """This process holds no seat in these rooms any more (they ended, nobody is here):
        their entries leave its ``held`` index, which would otherwise grow by every room it
        ever seated someone in."""
        held = held_index(self.process)
        await asyncio.gather(*(self.store.index_remove(held, room_id) for room_id in room_ids))

    async def forget(self, process: str) -> None:
        await self.store.index_remove(PROCESSES_INDEX, process)
