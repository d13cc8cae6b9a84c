"""What settles challenges without anyone asking: an attempt's race that ends (a hub listener:
everyone may have played now) and, every so often, the open challenges whose window has closed
(which also rates what a process that died right after settling left unrated)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from typing import Any

from server.challenges.domain import challenge as c
from server.challenges.services.challenges import Challenges
from server.kernel.errors import NoSuchChallenge
from server.race.domain.events import RaceFinished
from server.race.domain.fold import Change as RoomChange
from server.race.domain.fold import RoomChanged
from server.race.domain.model import Room
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from shared.errors import ArenaError

log = get_logger("server.challenges.services.sweep")


class ChallengeSweep:
    """Settles challenges when an attempt ends, and every ``sweep_s`` those due."""

    def __init__(self, challenges: Challenges, clock: Clock, *, sweep_s: float = 30.0) -> None:
        self.challenges = challenges
        self.clock = clock
        self.sweep_ms = int(sweep_s * 1000)
        self._task: asyncio.Task[None] | None = None
        self._spawned: set[asyncio.Task[Any]] = set()

    def on_change(self, room: Room, changes: Sequence[RoomChange]) -> None:
        """An attempt's race ended: the challenge may be settled now (all played)."""
        code = room.settings.challenge if room.meta is not None else ""
        if not code:
            return
        for change in changes:
            if isinstance(change, RoomChanged) and isinstance(change.event, RaceFinished):
                self._spawn(self.challenges.settle(code))

    def _spawn(self, work: Awaitable[Any]) -> None:
        async def logged() -> None:
            try:
                await work
            except ArenaError as exc:  # the store down: the sweep settles it later
                log.warning("challenge_settle_deferred", code=exc.code, reason=exc.reason)

        task = asyncio.get_running_loop().create_task(logged())
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._sweeping(), name="challenges")

    async def aclose(self) -> None:
        await stop_tasks([self._task, *self._spawned])

    async def _sweeping(self) -> None:
        while True:
            try:
                await self.sweep()
            except ArenaError as exc:
                log.warning("challenge_sweep_failed", code=exc.code, reason=exc.reason)
            await self.clock.sleep_until(self.clock.now_ms() + self.sweep_ms)

    async def sweep(self) -> None:
        """Settle every open challenge whose window has closed (and rate what a process that
        died after settling left unrated)."""
        due = await self.challenges.store.index_range(c.OPEN_INDEX, max_score=self.clock.now_ms())
        for entry in due:
            with contextlib.suppress(NoSuchChallenge):
                await self.challenges.settle(entry.member)
