"""A connection's referee requests: `report` for any logged-in player; `mod_queue`, `mod_log`,
`mod_show` and `mod_action` for moderators only (not_moderator for anyone else)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.kernel.errors import NotLoggedIn, NotModerator
from server.race.wire.requests import Session
from server.referee.domain import referee as r
from server.referee.services.referee import RefereeService
from shared import protocol as p


class RefereeRequests:
    """The referee requests of one connection."""

    def __init__(self, session: Session, referee: RefereeService) -> None:
        self.s = session
        self.referee = referee
        self.focus: dict[str, int] = {}  # focus lost this connection recorded, per room

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {
            p.REPORT: self.on_report,
            p.MOD_QUEUE: self.on_queue,
            p.MOD_LOG: self.on_log,
            p.MOD_SHOW: self.on_show,
            p.MOD_ACTION: self.on_action,
            p.FOCUS_LOST: self.on_focus_lost,
        }

    def _account(self) -> str:
        account = self.s.account_id
        if account is None:
            raise NotLoggedIn("reports and moderation are for accounts: log in first")
        return account

    def _moderator(self) -> str:
        account = self._account()
        if not self.referee.is_moderator(account):
            raise NotModerator("only a moderator may do that")
        return account

    async def on_report(self, msg: dict[str, Any]) -> None:
        filed = await self.referee.report(
            self._account(),
            msg["name"],
            msg["reason"],
            race=msg.get("race"),
            note=msg.get("note", ""),
        )
        self.s.reply(msg, {"type": p.REPORT_FILED, "name": filed.name, "reason": filed.reason})

    async def on_queue(self, msg: dict[str, Any]) -> None:
        self._moderator()
        rows = await self.referee.queue()
        self.s.reply(msg, {"type": p.MOD_QUEUE_ROWS, "rows": rows})

    async def on_log(self, msg: dict[str, Any]) -> None:
        self._moderator()
        actions = (await self.referee.state()).actions
        rows = [r.action_row(a) for a in reversed(actions)][: msg.get("last", 50)]
        self.s.reply(msg, {"type": p.MOD_LOG_ROWS, "rows": rows})

    async def on_show(self, msg: dict[str, Any]) -> None:
        self._moderator()
        shown = await self.referee.shown(msg["name"])
        self.s.reply(msg, {"type": p.MOD_ACCOUNT, **shown})

    async def on_action(self, msg: dict[str, Any]) -> None:
        acted = await self.referee.act(
            self._moderator(), msg["action"], msg["name"], msg["reason"], msg.get("new_name")
        )
        self.s.reply(msg, {"type": p.MOD_DONE, **r.action_row(acted)})

    async def on_focus_lost(self, msg: dict[str, Any]) -> None:
        """Counted into the racer's assessment, never answered nor shown: ignored for a guest,
        outside a rated race, and past ``MAX_FOCUS_PER_GAME`` a game."""
        account = self.s.account_id
        if account is None:
            return
        room_id = await self.referee.focus_lost(account, self.focus)
        if room_id is not None:
            self.focus[room_id] = self.focus.get(room_id, 0) + 1
