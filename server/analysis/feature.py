"""The analysis on each connection: `analysis`."""

from __future__ import annotations

from server.analysis.services.book import AnalysisBook
from server.analysis.wire.requests import AnalysisRequests
from server.net.router import Part, Requests
from server.race.wire.requests import Race, Session


class AnalysisFeature:
    """The router's entry for games' analyses."""

    def __init__(self, race: Race, book: AnalysisBook) -> None:
        self.race = race
        self.book = book

    def attach(self, link: Session) -> Part:
        return Requests(lambda: AnalysisRequests(link, self.race, self.book).handlers())
