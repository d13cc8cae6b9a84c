"""The spectator delay: what viewers get runs after the room's delay, in order."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable

from server.race.wire.audience import Audience
from server.runtime.clock import Clock
from server.runtime.logging import get_logger

log = get_logger("server.race.wire.delay")


class Delay:
    """One pump task per room while deliveries wait for their time."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def later(
        self, room_id: str, delay_ms: int, audience: Audience, deliver: Callable[[], None]
    ) -> None:
        """Run ``deliver`` after ``delay_ms``, in order with everything else of the room."""
        if delay_ms <= 0 and not audience.pending:
            deliver()
            return
        audience.pending.append((self.clock.now_ms() + delay_ms, deliver))
        if audience.pump is None or audience.pump.done():
            # A fresh context: the pump must not log with the session that happened to start it.
            audience.pump = asyncio.get_running_loop().create_task(
                self._pump(room_id, audience), name=f"pump-{room_id}", context=contextvars.Context()
            )

    async def _pump(self, room_id: str, audience: Audience) -> None:
        while audience.pending:
            due, deliver = audience.pending[0]
            await self.clock.sleep_until(due)
            audience.pending.popleft()
            try:
                deliver()
            except Exception:
                log.exception("spectator_delivery_failed", room=room_id)

    @staticmethod
    async def stop(audiences: list[Audience]) -> None:
        pumps = [a.pump for a in audiences if a.pump is not None]
        for pump in pumps:
            pump.cancel()
        for pump in pumps:
            with contextlib.suppress(BaseException):
                await pump
