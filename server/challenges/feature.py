"""Challenges on each connection: create, play, show and list them."""

from __future__ import annotations

from server.accounts.services.accounts import Accounts
from server.challenges.services.challenges import Challenges
from server.challenges.wire.requests import ChallengeRequests
from server.net.router import Part, Requests
from server.race.wire.requests import Race, Session


class ChallengesFeature:
    """The router's entry for challenges."""

    def __init__(self, race: Race, challenges: Challenges, accounts: Accounts) -> None:
        self.race = race
        self.challenges = challenges
        self.accounts = accounts

    def attach(self, link: Session) -> Part:
        return Requests(
            lambda: ChallengeRequests(link, self.race, self.challenges, self.accounts).handlers()
        )
