"""What the race clock asks of a room when a time comes: the race starts, ends, is retired.

None of these comes from a connection; each is decided against the folded room at the time of
the append, so whichever process fires first does it and the others find nothing to do.
"""

from __future__ import annotations

import asyncio
import contextlib

from server.kernel.errors import GameOver, NotRacing
from server.race.domain import decide as d
from server.race.domain.model import Room
from server.race.domain.progress import CLOCK
from server.race.services.directory import Directory
from server.race.services.game_commands import GameCommands
from server.race.services.hub import Hub
from server.race.services.loop import RoomLoop
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger

log = get_logger("server.race.services.timed_commands")


class TimedCommands:
    """The room's timed phases: countdown over, time limit, abandonment, idle and unfilled
    lobbies, the game streams begun, the finished room retired."""

    def __init__(
        self,
        loop: RoomLoop,
        hub: Hub,
        clock: Clock,
        config: Config,
        games: GameCommands,
        directory: Directory,
        *,
        keep_finished: bool = False,
    ) -> None:
        self.loop = loop
        self.keep_finished = keep_finished  # finished races go to the archive, not expire
        self.hub = hub
        self.clock = clock
        self.config = config
        self.games = games
        self.directory = directory

    async def go(self, room: Room) -> None:
        """The countdown is over: the race starts (whichever process comes first)."""
        await self.loop.run(room, lambda now: d.decide_go(room, now=now))

    async def finish(self, room: Room, reason: str) -> None:
        await self.loop.run(room, lambda now: d.decide_finish(room, reason, now=now))

    async def finish_all_done(self, room: Room) -> None:
        await self.finish(room, "all_done")

    async def start_games(self, room: Room) -> None:
        """Every racer's game stream begins with game_started; whichever process comes first.
        Side by side: the appends of one loop turn go to the store together."""
        await asyncio.gather(*(self.games.start_game(room, player) for player in list(room.seats)))

    async def retire(self, room: Room) -> None:
        """A finished room: its streams expire after the retention, unless the archive keeps
        finished races (the archiver then removes them once they are archived)."""
        if room.archived:
            return
        store = self.loop.store
        if not (self.keep_finished and room.finished is not None):
            for stream in (room.stream, *(g.stream for g in room.games.values())):
                await store.retire(stream)
        self.games.forget(room)
        await self.directory.publish(room)

    async def abandon(self, room: Room, player: str) -> None:
        """Resign a racer away longer than the grace (the race clock calls it when due)."""
        await self.hub.sync(room)
        grace_ms = int(self.config.abandon_grace_s * 1000)
        if not d.abandoned(room, player, grace_ms=grace_ms, now=self.clock.now_ms()):
            return
        with contextlib.suppress(NotRacing, GameOver):
            await self.games.resign(room, player, reason="abandoned")
            log.info("racer_abandoned", room=room.id, player=player)

    async def clock_out(self, room: Room, player: str) -> None:
        """A racer who berserked ran out of their own clock: their game ends (``clock``)."""
        await self.hub.sync(room)
        own_end = room.clock_ends_at(player)
        if own_end is None or self.clock.now_ms() < own_end:
            return
        with contextlib.suppress(NotRacing, GameOver):
            await self.games.resign(room, player, reason=CLOCK)
            log.info("racer_clocked_out", room=room.id, player=player)

    async def close_idle(self, room: Room) -> None:
        """Close a lobby nobody has been connected to for the lobby TTL."""
        ttl_ms = int(self.config.lobby_ttl_s * 1000)
        await self.loop.run(room, lambda now: d.decide_close_idle(room, ttl_ms=ttl_ms, now=now))

    async def close_unfilled(self, room: Room) -> None:
        """Close a formed room that not enough of its members sat down in."""
        await self.loop.run(room, lambda now: d.decide_close_unfilled(room, now=now))
