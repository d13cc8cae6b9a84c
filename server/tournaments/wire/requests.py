"""A connection's tournament requests: list, create, join, withdraw, follow, unfollow, berserk
(docs/protocol.md, "Tournaments"). Each checks who asks, decides through the tournament book,
and answers; the standings come from the feed, throttled."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.accounts.services.limits import AttemptLimiter
from server.kernel.errors import NotAllowed, NotAPlayer, NotInRoom, NotLoggedIn
from server.kernel.names import clean_name
from server.net.router import Part
from server.race.wire.audience import Role
from server.race.wire.requests import Race
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.tournaments.domain.decide import (
    CreationLimits,
    decide_create,
    decide_join,
    decide_withdraw,
)
from server.tournaments.domain.standings import state
from server.tournaments.services.book import TournamentBook, fresh_id
from server.tournaments.wire.feed import Follower, TournamentFeed
from shared import protocol as p
from shared.errors import ArenaError

log = get_logger("server.tournaments.wire.requests")

RatingOf = Callable[[str, str], Awaitable[int]]
LISTED = 50  # tournaments at most in each part of `tournaments`
FINISHED_LISTED = 20
NAME_COLUMNS = 30


def creation_limits(config: Config) -> CreationLimits:
    return CreationLimits(
        min_length_ms=int(config.tournament_min_length_s * 1000),
        max_owned=config.max_tournaments_per_account,
    )


class TournamentRequests(Part):
    """The tournament requests of one connection."""

    def __init__(
        self,
        follower: Follower,
        race: Race,
        book: TournamentBook,
        feed: TournamentFeed,
        limiter: AttemptLimiter,
        rating_of: RatingOf,
        config: Config,
    ) -> None:
        self.f = follower
        self.race = race
        self.book = book
        self.feed = feed
        self.limiter = limiter
        self.rating_of = rating_of
        self.limits = creation_limits(config)

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {
            p.LIST_TOURNAMENTS: self.on_list,
            p.CREATE_TOURNAMENT: self.on_create,
            p.JOIN_TOURNAMENT: self.on_join,
            p.WITHDRAW_TOURNAMENT: self.on_withdraw,
            p.FOLLOW_TOURNAMENT: self.on_follow,
            p.UNFOLLOW_TOURNAMENT: self.on_unfollow,
            p.BERSERK: self.on_berserk,
        }

    def _account(self, what: str) -> str:
        account = self.f.account_id
        if account is None:
            raise NotLoggedIn(f"{what} needs an account: log in first")
        return account

    def _now(self) -> int:
        return self.race.commands.clock.now_ms()

    async def on_list(self, msg: dict[str, Any]) -> None:
        now = self._now()
        upcoming, live, finished = [], [], []
        for listed in await self.book.listed():
            if listed.finished:
                finished.append(listed)
            elif listed.starts_at > now:
                upcoming.append(listed)
            else:
                live.append(listed)
        finished.sort(key=lambda t: -t.ends_at)
        live.sort(key=lambda t: -t.starts_at)

        async def views(part: list[Any], most: int) -> list[dict[str, Any]]:
            return [state(await self.book.get(t.id), now) for t in part[:most]]

        self.f.reply(
            msg,
            {
                "type": p.TOURNAMENTS,
                "upcoming": await views(upcoming, LISTED),
                "live": await views(live, LISTED),
                "finished": await views(finished, FINISHED_LISTED),
            },
        )

    async def on_create(self, msg: dict[str, Any]) -> None:
        account = self._account("creating a tournament")
        await self.limiter.attempt(account)
        now = self._now()
        created = decide_create(
            msg,
            tournament_id=fresh_id(),
            name=clean_name(msg["name"], columns=NAME_COLUMNS),
            creator=account,
            creator_name=self.f.account,
            owned=await self.book.owned(account, now),
            limits=self.limits,
            now=now,
        )
        tournament = await self.book.create(created)
        self.f.reply(msg, {"type": p.TOURNAMENT, "tournament": state(tournament, now)})

    async def on_join(self, msg: dict[str, Any]) -> None:
        account = self._account("joining a tournament")
        tournament = await self.book.get(msg["tournament"])
        await self.limiter.attempt(account)
        variant = tournament.settings.variant
        rating = await self.rating_of(account, variant)
        name = self.f.account or self.f.name
        await self.book.run(
            tournament.id, lambda t, now: decide_join(t, account, name, rating, now)
        )
        self.f.reply(msg, {"type": p.TOURNAMENT_JOINED, "tournament": tournament.id})
        following = self.feed.by_follower.get(self.f)
        page = following.page if following and following.tournament == tournament.id else 0
        await self.feed.follow(self.f, tournament.id, page, account=account)

    async def on_withdraw(self, msg: dict[str, Any]) -> None:
        account = self._account("withdrawing")
        tournament = await self.book.get(msg["tournament"])
        await self.limiter.attempt(account)
        await self.book.run(tournament.id, lambda t, now: decide_withdraw(t, account, now))
        self.f.reply(msg, {"type": p.TOURNAMENT_WITHDRAWN, "tournament": tournament.id})

    async def on_follow(self, msg: dict[str, Any]) -> None:
        account = self.f.account_id
        await self.feed.follow(self.f, msg["tournament"], msg.get("page", 0), msg, account=account)

    async def on_unfollow(self, msg: dict[str, Any]) -> None:
        tournament = await self.feed.unfollow(self.f)
        self.f.reply(msg, {"type": p.TOURNAMENT_UNFOLLOWED, "tournament": tournament or ""})

    async def on_berserk(self, msg: dict[str, Any]) -> None:
        found = self.race.delivery.member(self.f)
        if found is None:
            raise NotInRoom("you are in no room")
        room, member = found
        if room.meta is None or not room.meta.tournament:
            raise NotAllowed("berserk is for tournament races")
        if member.role != Role.PLAYER or member.player is None:
            raise NotAPlayer("only a racer can berserk")
        tournament = await self.book.get(room.meta.tournament)
        if not tournament.settings.berserk:
            raise NotAllowed("this tournament allows no berserk")
        await self.race.commands.berserk(room, member.player)

    async def gone(self) -> None:
        """The connection closed: it follows nothing, so it is no longer present (a store
        error is logged: the presence goes stale by itself within seconds)."""
        try:
            await self.feed.unfollow(self.f)
        except ArenaError as exc:
            log.warning("tournament_unfollow_failed", code=exc.code, reason=exc.reason)
