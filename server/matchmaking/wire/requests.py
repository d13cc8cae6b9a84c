"""A connection's quick-race requests: `quick` queues it, `leave_queue` takes it out; while it
waits it is sent `queued` every second, and once a room is formed `matched`, then it is seated
as a `join` would seat it (server/matchmaking/services/matchmaker.py forms the rooms)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from server.kernel.errors import AlreadyInRoom, NotQueued
from server.matchmaking.domain.queues import queue_key
from server.matchmaking.services.matchmaker import Matchmaker
from server.net.router import Part
from server.race.wire.audience import Role
from server.race.wire.requests import Race, RoomRequests, Session
from server.runtime.logging import get_logger
from shared import protocol as p
from shared.errors import ArenaError

RatingOf = Callable[[str, str], Awaitable[int]]
"""An account's rating in a variant (the leaderboard's, or a new player's)."""

log = get_logger("server.matchmaking.wire.requests")


class QueueRequests(Part):
    """The queue requests of one connection."""

    def __init__(
        self,
        session: Session,
        race: Race,
        matchmaker: Matchmaker,
        rating_of: RatingOf,
    ) -> None:
        self.s = session
        self.race = race
        self.matchmaker = matchmaker
        self.rating_of = rating_of

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {p.QUICK: self.on_quick, p.LEAVE_QUEUE: self.on_leave_queue}

    async def on_quick(self, msg: dict[str, Any]) -> None:
        if self.race.delivery.member(self.s) is not None:
            raise AlreadyInRoom("you are in a room: leave it before you queue")
        account = self.s.account_id
        if account is not None:
            racing = await self.race.commands.racing(account)
            if racing is not None:
                raise AlreadyInRoom(f"you are in a race already (room {racing}): finish it first")
        key = queue_key(
            msg.get("variant", "swiss"), msg.get("players", 2), rated=account is not None
        )
        rating = await self.rating_of(account, key.variant) if account is not None else 0
        status = await self.matchmaker.enqueue(
            key,
            self.s.session,
            rating,
            name=self.s.name,
            account=account,
            on_placed=self._placed,
            on_status=lambda status: self.s.send({"type": p.QUEUED, **status}),
        )
        self.s.reply(msg, {"type": p.QUEUED, **status})

    async def on_leave_queue(self, msg: dict[str, Any]) -> None:
        if not await self.matchmaker.leave(self.s.session):
            raise NotQueued("you are in no queue")
        self.s.reply(msg, {"type": p.LEFT_QUEUE})

    async def gone(self) -> None:
        """The connection closed: out of the queue."""
        with contextlib.suppress(ArenaError):
            await self.matchmaker.gone(self.s.session)

    async def _placed(self, room_id: str) -> None:
        """A room was formed with this player: seat them, and start it if they are the last."""
        try:
            room = await self.race.commands.room(room_id)
            # Told at once when nobody was found in time and bots race them (docs/bots.md).
            self.s.send({"type": p.MATCHED, "room": room_id, "bots": len(room.bots())})
            await RoomRequests(self.s, self.race).join(room_id, Role.PLAYER)
            await self.matchmaker.seated(room_id)
        except ArenaError as exc:
            log.warning("not_seated", room=room_id, code=exc.code)
            self.s.send(p.error_message(exc.code, exc.reason, None))
