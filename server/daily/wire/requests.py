"""A connection's daily challenge requests: `daily` plays today's deal once per account (a solo
room the server makes, seats and starts), `daily_results` shows a day's standings
(server/daily/services/challenge.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.daily.domain import days as d
from server.daily.services.challenge import DailyChallenge
from server.kernel.errors import AlreadyInRoom, NotLoggedIn
from server.race.wire.audience import Role
from server.race.wire.requests import Race, RoomRequests, Session
from shared import protocol as p


class DailyRequests:
    """The daily requests of one connection."""

    def __init__(self, session: Session, race: Race, daily: DailyChallenge) -> None:
        self.s = session
        self.race = race
        self.daily = daily
        self.rooms = RoomRequests(session, race)

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {p.DAILY: self.on_daily, p.DAILY_RESULTS: self.on_daily_results}

    async def on_daily(self, msg: dict[str, Any]) -> None:
        account = self.s.account_id
        if account is None:
            raise NotLoggedIn("the daily challenge is for accounts: log in first")
        if self.race.delivery.member(self.s) is not None:
            raise AlreadyInRoom("you are in a room: leave it first")
        variant = msg.get("variant", "swiss")
        room = await self.daily.attempt(variant, account, self.s.name, self.s.session)
        tag = room.settings.daily
        self.s.reply(
            msg,
            {
                "type": p.DAILY_STARTED,
                "room": room.id,
                "variant": variant,
                "date": tag.split(":", 1)[1],
                "commitment": room.settings.commitment,
                "results_at": d.tag_end_ms(tag),
            },
        )
        await self.rooms.join(room.id, Role.PLAYER)
        await self.race.commands.start(room, self.s.session)

    async def on_daily_results(self, msg: dict[str, Any]) -> None:
        now = self.race.commands.clock.now_ms()
        day = d.parse_day(msg["date"]) if "date" in msg else d.day_of(now)
        standings = await self.daily.standings(msg.get("variant", "swiss"), day, self.s.account_id)
        self.s.reply(msg, {"type": p.DAILY_STANDINGS, **standings})
