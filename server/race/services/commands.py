"""Room commands: a request decided against the folded room, then appended by the room loop.

Commands never send to connections. Each binds a pure decision (``server.race.domain.decide``) to
its request and hands it to ``RoomLoop.run``, which syncs the room, decides at the time of the
append and decides again on a conflict. Game commands (moves, resignations, hints) are
``GameCommands`` (``self.games``), making a room is ``RoomCreation`` (``self.creation``), and
what the race clock asks for when a time comes is ``TimedCommands`` (``self.timed``); the
indexes are the directory's and presence's.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from typing import Any

from server.kernel.errors import (
    NoSuchRoom,
    WrongStatus,
)
from server.kernel.names import fold_name
from server.race.domain import decide as d
from server.race.domain.events import PlayerJoined
from server.race.domain.lifecycle import ENDED, RoomStatus
from server.race.domain.model import Room, token_hash
from server.race.services.bot_seats import BotSeats
from server.race.services.creation import RoomCreation
from server.race.services.directory import Directory
from server.race.services.game_commands import GameCommands
from server.race.services.hub import Hub
from server.race.services.loop import RoomLoop
from server.race.services.presence import Presence
from server.race.services.timed_commands import TimedCommands
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.metrics import Metrics
from server.runtime.solver_pool import SolverPool
from server.store import EventStore
from shared.errors import ClientError

ROOM_ID = re.compile(r"^[a-z0-9]{1,32}$")


log = get_logger("server.race.services.commands")


class Commands:
    """Every request of a connection that changes a room (seats, start, leave, rematch), and
    the queries that read the directory; its parts do the rest."""

    def __init__(
        self,
        store: EventStore,
        hub: Hub,
        clock: Clock,
        config: Config,
        *,
        process: str,
        metrics: Metrics | None = None,
        solver: Callable[[], SolverPool] | None = None,
        keep_finished: bool = False,
    ) -> None:
        self.hub = hub
        self.clock = clock
        self.config = config
        self.metrics = metrics if metrics is not None else Metrics()
        self.directory = Directory(store, clock, hub.archive)
        self.presence = Presence(store, clock, process)
        self.loop = RoomLoop(store, hub, clock, self.directory, self.metrics)
        self.games = GameCommands(self.loop, hub, clock, config, solver)
        self.timed = TimedCommands(
            self.loop, hub, clock, config, self.games, self.directory, keep_finished=keep_finished
        )
        self.bot_seats = BotSeats(self.loop, self.presence, store)
        self.creation = RoomCreation(
            self.loop, clock, config, self.directory, self.games, hub, self.bot_seats
        )
        # The ways a room is made, called by requests, the matchmaker and the daily challenge.
        self.create_room = self.creation.create_room
        self.create_daily = self.creation.create_daily
        self.create_attempt = self.creation.create_attempt

    async def room(self, room_id: str) -> Room:
        """The loaded room; NoSuchRoom if there is none. Room codes are read case-blind."""
        room_id = room_id.strip().lower()
        room = await self.hub.room(room_id) if ROOM_ID.match(room_id) else None
        if room is None or room.meta is None or room.status is RoomStatus.CLOSED:
            raise NoSuchRoom(f"no room {room_id!r}")
        return room

    async def list_rooms(self) -> list[dict[str, Any]]:
        return await self.directory.list_rooms(self.hub.rooms)

    # ---- seats -------------------------------------------------------------------------------

    async def join(
        self,
        room: Room,
        player: str,
        *,
        name: str,
        token: str,
        connection: str,
        account: str | None = None,
    ) -> None:
        """Seat ``player`` (a session) on this connection; a seat it has already is kept, and
        taken over by this connection."""
        hashed = token_hash(token)
        # The seat's index entries go first (a resume finds the room, then checks the seat), and
        # the room is noted as held here: together, in one round trip.
        notes = [self.directory.seat(hashed, room.id), self.presence.hold(room.id)]
        if account is not None:
            notes.append(self.directory.seat_account(fold_name(account), room.id))
        await asyncio.gather(*notes)
        await self.loop.run(
            room,
            lambda now: d.decide_join(
                room,
                player,
                name=name,
                token_hash=hashed,
                connection=connection,
                now=now,
                account=account,
            ),
        )
        log.info(PlayerJoined.TYPE, room=room.id, player=player)

    async def racing(self, account: str) -> str | None:
        """The room ``account`` holds a seat in that is not over yet (on any process), if any."""
        room_id = await self.directory.room_of_account(fold_name(account))
        if room_id is None:
            return None
        try:
            room = await self.room(room_id)
        except NoSuchRoom:
            return None
        await self.hub.sync(room)
        if room.status in (RoomStatus.FINISHED, RoomStatus.CLOSED):
            return None
        seated = any(
            s.account is not None and fold_name(s.account) == fold_name(account)
            for s in room.seats.values()
        )
        return room_id if seated else None

    async def present(self, room: Room, player: str, connection: str) -> None:
        """A seat's connection is back (a resume): everyone sees the racer connected again."""
        await self.presence.hold(room.id)
        await self.loop.run(
            room, lambda now: d.decide_back(room, player, connection=connection, now=now)
        )

    async def away(
        self, room: Room, player: str, connection: str, *, at: int | None = None
    ) -> None:
        """A seat's connection went away; nothing if the seat has moved to another one."""
        if room.status in ENDED:  # an ended room records no more comings and goings
            return
        await self.loop.run(
            room,
            lambda now: d.decide_away(
                room, player, connection=connection, at=now if at is None else at
            ),
        )

    async def gone(self, process: str, last_seen: int) -> None:
        """A server process stopped beating: its seats' connections went away when it did."""
        prefix = process + "."
        for room_id in await self.presence.held_by(process):
            room = await self.hub.room(room_id)
            if room is not None:
                await self.hub.sync(room)
                for seat in list(room.seats.values()):
                    if seat.connection is not None and seat.connection.startswith(prefix):
                        await self.away(room, seat.player, seat.connection, at=last_seen)
            await self.presence.release(process, room_id)
        await self.presence.forget(process)

    async def resume(self, token: str) -> tuple[Room, str] | None:
        """The room and player of a resume token's latest seat; None if it has none."""
        hashed = token_hash(token)
        room_id = await self.directory.room_of_seat(hashed)
        if room_id is None:
            return None
        room = await self.hub.room(room_id)
        if room is None:  # expired: the seat is gone with it
            await self.directory.drop_seat(hashed)
            return None
        await self.hub.sync(room)
        for seat in room.seats.values():
            if seat.token_hash == hashed:
                return room, seat.player
        return None

    async def leave(self, room: Room, player: str) -> None:
        """A seated player leaves: frees the seat before the race, resigns during it."""
        if room.status is RoomStatus.RACING:
            with contextlib.suppress(ClientError):
                await self.games.resign(room, player)
            return
        if room.status in ENDED:  # its seats are its results now: nothing to free
            return
        await self.loop.run(room, lambda now: d.decide_leave(room, player, now=now))

    async def rematch(self, room: Room, player: str, *, creator: str) -> str:
        """The room of ``room``'s rematch: the one offered already, or a new one like it that
        this request offers. Two racers asking at once may both make one: the one offered
        first is everyone's, and the other, which nobody has sat in, is closed."""
        await self.hub.sync(room)
        if room.archived:
            raise WrongStatus("this race is archived: it can be watched and replayed only")
        d.check_rematch(room, player)
        if room.rematch is None:
            made = await self.create_room(d.rematch_request(room), creator=creator)
            await self.loop.run(
                room, lambda now: d.decide_rematch(room, player, rematch=made.id, now=now)
            )
            if room.rematch != made.id:
                await self.loop.run(made, lambda now: d.decide_close_unused(made, now=now))
            else:  # the race's bots race again too, at their levels
                for bot in room.bots():
                    await self.bot_seats.add(made, by=None, level=bot.bot)
            log.info("rematch_offered", room=room.id, rematch=room.rematch, player=player)
        assert room.rematch is not None  # offered: by this request or one before it
        return room.rematch

    async def start(self, room: Room, player: str) -> None:
        await self.loop.run(room, lambda now: d.decide_start(room, player, now=now))

    async def berserk(self, room: Room, player: str) -> None:
        """A tournament racer halves their own clock (the tournament allowed it)."""
        await self.loop.run(room, lambda now: d.decide_berserk(room, player, now=now))
