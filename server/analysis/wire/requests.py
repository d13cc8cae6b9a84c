"""A connection's `analysis` request: one game's analysis, under the fairness that holds its
export (server.race.domain.export: the race over and the spectators' delay past, a daily's day
over) and the race's view check (a challenge until it is over). An analysis names cards of the
deck, so it is held back exactly as the deal is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.analysis.domain.report import analysis_message
from server.analysis.services.book import AnalysisBook
from server.kernel.errors import NoAnalysis
from server.race.domain.export import export_header, exportable_game
from server.race.wire.requests import Race, Session
from shared import protocol as p


class AnalysisRequests:
    """The analysis request of one connection."""

    def __init__(self, session: Session, race: Race, book: AnalysisBook) -> None:
        self.s = session
        self.race = race
        self.book = book

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {p.ANALYSIS: self.on_analysis}

    async def on_analysis(self, msg: dict[str, Any]) -> None:
        room = await self.race.commands.room(msg["room"])
        game = exportable_game(room, msg["player"], now=self.race.commands.clock.now_ms())
        reader = self.s.account_id
        await self.race.check_view(room, reader)
        event = await self.book.read(room.id, game.player)
        if event is None:
            raise NoAnalysis(
                f"room {room.id}: this game has no analysis yet (games are analysed after "
                "their race; ask again shortly)"
            )
        name = export_header(room, game).player
        self.s.reply(msg, analysis_message(event, name=name))
