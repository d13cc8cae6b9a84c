"""The race on each connection: its room requests, a seat taken back by ``hello.resume``, and
the seat marked away when the connection goes (the grace starts, for all to see)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from server.net.router import Handler, Part
from server.race.domain.model import Room, game_stream
from server.race.wire.audience import Role
from server.race.wire.requests import Race, Session, room_requests
from server.runtime.logging import bind, get_logger
from shared.errors import ArenaError

log = get_logger("server.race.feature")


class RaceFeature:
    """The router's entry for the race."""

    def __init__(self, race: Race) -> None:
        self.race = race

    def attach(self, link: Session) -> RacePart:
        return RacePart(link, self.race)


class RacePart(Part):
    """One connection's share of the race."""

    def __init__(self, link: Session, race: Race) -> None:
        self.link = link
        self.race = race
        self.resumed: tuple[Room, str] | None = None  # from greet to greeted only

    def handlers(self) -> Mapping[str, Handler]:
        return room_requests(self.link, self.race)

    async def greet(self, hello: dict[str, Any]) -> None:
        if "resume" not in hello:
            return
        seat = await self.race.commands.resume(hello["resume"])
        if seat is not None:
            room, player = seat
            self.link.token = hello["resume"]
            self.link.session = player
            self.link.name = room.seats[player].name
            self.resumed = seat

    def welcome(self, welcome: dict[str, Any]) -> None:
        if self.resumed is not None:
            welcome["resumed"] = True
            welcome["room"] = self.resumed[0].id

    async def greeted(self) -> None:
        if self.resumed is None:
            return
        (room, player), self.resumed = self.resumed, None
        bind(room=room.id, game=game_stream(room.id, player))
        self.race.delivery.attach(room, self.link, Role.PLAYER, player=player)
        await self.race.commands.present(room, player, self.link.connection_id)
        log.info("resumed", room=room.id)

    async def gone(self) -> None:
        delivery = self.race.delivery
        found = delivery.member(self.link)
        delivery.detach(self.link)
        if found is None:
            return
        room, member = found
        if member.role == Role.PLAYER and member.player is not None:
            try:
                await self.race.commands.away(room, member.player, self.link.connection_id)
            except ArenaError as exc:  # the store may be down: the heartbeat's takeover covers it
                log.warning("away_not_recorded", room=room.id, player=member.player, code=exc.code)
