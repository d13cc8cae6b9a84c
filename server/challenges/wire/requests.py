"""A connection's challenge requests (docs/protocol.md, "Challenges"): `challenge_create` deals a
challenge for those named (or anyone with its code), `challenge_play` plays it once (a solo
room the server makes, seats and starts, as the daily's), `challenge_show` its standings as the
reader may see them, `challenges` the reader's own (server/challenges/services/challenges.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.accounts.services.accounts import Accounts
from server.challenges.domain import challenge as c
from server.challenges.services.challenges import Challenges
from server.kernel.errors import AlreadyInRoom, NoSuchAccount, NotLoggedIn
from server.race.wire.audience import Role
from server.race.wire.requests import Race, RoomRequests, Session
from shared import protocol as p


class ChallengeRequests:
    """The challenge requests of one connection."""

    def __init__(
        self, session: Session, race: Race, challenges: Challenges, accounts: Accounts
    ) -> None:
        self.s = session
        self.race = race
        self.challenges = challenges
        self.accounts = accounts
        self.rooms = RoomRequests(session, race)

    def account_id(self) -> str | None:
        return self.s.account_id

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {
            p.CHALLENGE_CREATE: self.on_create,
            p.CHALLENGE_PLAY: self.on_play,
            p.CHALLENGE_SHOW: self.on_show,
            p.CHALLENGES: self.on_list,
        }

    def _account(self, doing: str) -> str:
        account = self.account_id()
        if account is None:
            raise NotLoggedIn(f"challenges are for accounts: log in to {doing}")
        return account

    async def on_create(self, msg: dict[str, Any]) -> None:
        creator = self._account("make one")
        request = c.read_create(msg)
        invited = []
        for name in request.invited:
            account = await self.accounts.named(name)
            if account is None:
                raise NoSuchAccount(f"no account {name!r} to invite")
            invited.append((account.id, account.name))
        challenge = await self.challenges.create(
            request, creator=creator, creator_name=self.s.account or creator, invited=invited
        )
        view = c.view(challenge, [], creator, now=self.race.commands.clock.now_ms())
        self.s.reply(msg, {"type": p.CHALLENGE, **view})

    async def on_play(self, msg: dict[str, Any]) -> None:
        account = self._account("play one")
        if self.race.delivery.member(self.s) is not None:
            raise AlreadyInRoom("you are in a room: leave it first")
        challenge, room = await self.challenges.play(
            msg["challenge"], account, self.s.name, self.s.session
        )
        self.s.reply(
            msg,
            {
                "type": p.CHALLENGE_STARTED,
                "room": room.id,
                "challenge": challenge.code,
                "variant": room.settings.variant,
                "commitment": room.settings.commitment,
                "closes_at": challenge.meta.closes_at,
            },
        )
        await self.rooms.join(room.id, Role.PLAYER)
        await self.race.commands.start(room, self.s.session)

    async def on_show(self, msg: dict[str, Any]) -> None:
        view = await self.challenges.view(msg["challenge"], self.account_id())
        self.s.reply(msg, {"type": p.CHALLENGE, **view})

    async def on_list(self, msg: dict[str, Any]) -> None:
        account = self._account("list yours")
        listed = await self.challenges.mine(account)
        self.s.reply(msg, {"type": p.CHALLENGE_LIST, "challenges": listed})
