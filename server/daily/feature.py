"""The daily challenge on each connection: `daily` and `daily_results`."""

from __future__ import annotations

from server.daily.services.challenge import DailyChallenge
from server.daily.wire.requests import DailyRequests
from server.net.router import Part, Requests
from server.race.wire.requests import Race, Session


class DailyFeature:
    """The router's entry for the daily challenge."""

    def __init__(self, race: Race, daily: DailyChallenge) -> None:
        self.race = race
        self.daily = daily

    def attach(self, link: Session) -> Part:
        return Requests(lambda: DailyRequests(link, self.race, self.daily).handlers())
