"""A connection's daily challenge requests: `daily` plays today's deal once per account (a solo
room the server makes, seats and starts), `daily_results` shows a day's standings
(server/rooms/daily_challenge.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.domain import daily as d
from server.domain.errors import AlreadyInRoom, NotLoggedIn
from server.net.audience import Role
from server.net.room_requests import RoomRequests, Session
from server.rooms.daily_challenge import DailyChallenge
from shared import protocol as p


class DailyRequests:
    """The daily requests of one connection."""

    def __init__(
        self, session: Session, daily: DailyChallenge, account_id: Callable[[], str | None]
    ) -> None:
        self.s = session
        self.daily = daily
        self.account_id = account_id
        self.rooms = RoomRequests(session)

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {p.DAILY: self.on_daily, p.DAILY_RESULTS: self.on_daily_results}

    async def on_daily(self, msg: dict[str, Any]) -> None:
        account = self.account_id()
        if account is None:
            raise NotLoggedIn("the daily challenge is for accounts: log in first")
        if self.s.delivery.member(self.s) is not None:
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
        await self.s.commands.start(room, self.s.session)

    async def on_daily_results(self, msg: dict[str, Any]) -> None:
        now = self.s.commands.clock.now_ms()
        day = d.parse_day(msg["date"]) if "date" in msg else d.day_of(now)
        standings = await self.daily.standings(msg.get("variant", "swiss"), day, self.account_id())
        self.s.reply(msg, {"type": p.DAILY_STANDINGS, **standings})
