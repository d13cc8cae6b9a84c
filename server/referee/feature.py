"""The referee on each connection: reports, and the moderators' requests."""

from __future__ import annotations

from server.net.router import Part, Requests
from server.race.wire.requests import Session
from server.referee.services.referee import RefereeService
from server.referee.wire.requests import RefereeRequests


class RefereeFeature:
    """The router's entry for the referee."""

    def __init__(self, referee: RefereeService) -> None:
        self.referee = referee

    def attach(self, link: Session) -> Part:
        return Requests(lambda: RefereeRequests(link, self.referee).handlers())
