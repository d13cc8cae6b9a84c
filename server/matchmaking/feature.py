"""Quick races on each connection: `quick` and `leave_queue`, and out of the queue when the
connection goes."""

from __future__ import annotations

from server.matchmaking.services.matchmaker import Matchmaker
from server.matchmaking.wire.requests import QueueRequests, RatingOf
from server.race.wire.requests import Race, Session


class MatchmakingFeature:
    """The router's entry for quick races."""

    def __init__(self, race: Race, matchmaker: Matchmaker, rating_of: RatingOf) -> None:
        self.race = race
        self.matchmaker = matchmaker
        self.rating_of = rating_of

    def attach(self, link: Session) -> QueueRequests:
        return QueueRequests(link, self.race, self.matchmaker, self.rating_of)
