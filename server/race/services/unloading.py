"""Unloading: a room that ended (finished or closed) with nobody in it on this process keeps
only its summary (``Room.compact``) from the next sweep on, and is forgotten
``--unload-after-s`` after its end.

Without it, every room a process has served would stay folded and followed for the life of the
process, and a server that runs for days would hold every race it has ever seen. The store still
holds an unloaded room: its next use (a replay, a late spectator, ``list_rooms``) loads it
again, as after a restart. A compacted room is folded whole again (its events read from the
store, or the archive) by its next use; meanwhile it costs a few KiB, not every folded event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from server.race.domain.model import Room
from server.race.services.hub import Hub
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.heap import give_back
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from shared.errors import ArenaError

log = get_logger("server.race.services.unloading")

_MAX_SWEEP_S = 5.0  # ended rooms nobody is in are compacted this soon


def ended_at(room: Room) -> int | None:
    """When the room ended (its race finished, or its lobby closed); None while it is live."""
    if room.finished is not None:
        return room.finished.at
    return room.closed_at


class Unloader:
    """Sweeps the hub now and then for ended rooms that are no longer in use here."""

    def __init__(
        self,
        hub: Hub,
        clock: Clock,
        config: Config,
        *,
        in_use: Callable[[str], bool],
        forget: Sequence[Callable[[str], None]] = (),
        unloaded: Callable[[Sequence[str]], Awaitable[None]] | None = None,
    ) -> None:
        self.hub = hub
        self.clock = clock
        self.after_ms = int(config.unload_after_s * 1000)
        self.in_use = in_use  # someone here is in the room, or something waits to reach them
        self.forget = list(forget)  # what the other parts keep per room, dropped with it
        self.after_unload = unloaded  # told the rooms unloaded (what the store keeps of them)
        self.unloaded = 0  # rooms unloaded (metrics)
        self.compacted = 0  # rooms compacted (metrics)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.after_ms > 0:
            self._task = asyncio.get_running_loop().create_task(self._sweeping(), name="unload")

    async def aclose(self) -> None:
        await stop_tasks([self._task])

    def stats(self) -> dict[str, float]:
        return {"rooms_unloaded": self.unloaded, "rooms_compacted": self.compacted}

    async def _sweeping(self) -> None:
        every_ms = int(min(_MAX_SWEEP_S * 1000, max(1000, self.after_ms // 4)))
        while True:
            await self.clock.sleep_until(self.clock.now_ms() + every_ms)
            try:
                await self.sweep()
            except ArenaError as exc:  # a failed unsubscribe must not end the sweeping
                log.warning("unload_failed", code=exc.code, reason=exc.reason)

    async def sweep(self) -> list[str]:
        """Unload every room that ended long enough ago and is not in use here; compact the
        other ended rooms not in use."""
        if self.after_ms <= 0:
            return []
        now = self.clock.now_ms()
        idle, compact = [], []
        for room in self.hub.rooms.values():
            ended = ended_at(room)
            if ended is None or self.in_use(room.id) or self.hub.loading(room.id):
                continue
            if now - ended >= self.after_ms:
                idle.append(room)
            elif not room.compacted:
                compact.append(room)
        # The other parts forget first, in this turn with the hub's own forgetting: a viewer
        # joining while the unsubscribe is in flight reloads the room, and what delivery keeps
        # for that new fold must not be dropped after it. A compacted room tells its listeners
        # Loaded when it is folded whole again, as a reloaded one does.
        for room in (*compact, *idle):
            for forget in self.forget:
                forget(room.id)
        for room in compact:  # its wake-ups are ignored: its next use reads everything
            room.compact()
        self.compacted += len(compact)
        if not idle:
            if compact:
                give_back()  # their games' memory, to the system rather than kept by malloc
            return []
        await self.hub.unload(idle)
        if self.after_unload is not None:
            await self.after_unload([room.id for room in idle])
        self.unloaded += len(idle)
        give_back()
        log.info("rooms_unloaded", rooms=len(idle), loaded=len(self.hub.rooms))
        return [room.id for room in idle]
