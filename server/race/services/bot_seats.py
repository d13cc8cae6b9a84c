"""Bot seats: a bot seated in a lobby, or claimed by this process when the one running it died.

Both go through the room loop as any seat does (``server.race.domain.bot_seats`` decides); the
``bots`` index lists the rooms with bots not finished yet, so that every process's bot runner
(server/bots/services/runner.py) finds the bots no live process plays without folding every room.
"""

from __future__ import annotations

from server.kernel.names import bot_name
from server.race.domain.bot_seats import decide_add_bot, decide_claim_bot
from server.race.domain.events import RoomEvent
from server.race.domain.model import Room
from server.race.services.loop import RoomLoop
from server.race.services.presence import Presence
from server.runtime.logging import get_logger
from server.store import Indexes

BOTS_INDEX = "bots"  # room id -> when a bot sat down, value: the process that runs its bots

log = get_logger("server.race.services.bot_seats")


class BotSeats:
    """Seating and claiming bots; the index of the rooms that have them."""

    def __init__(self, loop: RoomLoop, presence: Presence, store: Indexes) -> None:
        self.loop = loop
        self.presence = presence
        self.store = store

    @property
    def process(self) -> str:
        return self.presence.process

    async def add(self, room: Room, *, by: str | None, level: int) -> str:
        """Seat a bot of ``level`` (asked by the creator ``by``, or None: the server); its
        player id. The index and the presence hint go first, as for a person's seat."""
        await self._held(room.id)
        player = ""

        def decide(now: int) -> list[RoomEvent]:
            nonlocal player
            player = f"bot{room.joined_count + 1}"
            name = bot_name(room.joined_count, level)
            return decide_add_bot(
                room,
                by=by,
                player=player,
                name=name,
                level=level,
                process=self.process,
                now=now,
            )

        await self.loop.run(room, decide)
        log.info("bot_joined", room=room.id, player=player, level=level)
        return player

    async def claim(self, room: Room, player: str, live: set[str]) -> None:
        """Take over the bot ``player`` if no live process holds it (the one that did died)."""
        await self._held(room.id)
        await self.loop.run(
            room,
            lambda now: decide_claim_bot(room, player, process=self.process, live=live, now=now),
        )

    async def _held(self, room_id: str) -> None:
        """Hints first: this process runs bots in the room (the index), and holds its seats'
        connections there (presence: if it dies, its bots go away like its people)."""
        now = self.loop.clock.now_ms()
        await self.store.index_put(BOTS_INDEX, room_id, now, self.process.encode())
        await self.presence.hold(room_id)

    async def rooms(self) -> list[tuple[str, str]]:
        """The rooms with bots, each with the process that last seated or claimed them."""
        return [(e.member, e.value.decode()) for e in await self.store.index_range(BOTS_INDEX)]

    async def drop(self, room_id: str) -> None:
        """The room is over: its bots have nothing left to play."""
        await self.store.index_remove(BOTS_INDEX, room_id)
