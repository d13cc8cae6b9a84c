"""The tournaments this process's connections follow: their standings, throttled and paged;
their presence, renewed in the store; and their pairings, seated on their own connection.

Throttle: once a second at most, per tournament, each follower is sent the tournament's state
if it changed and its page of the standings with its own row if they changed (a page's frame
is encoded once for all its followers, each row spliced in). A follower never gets the whole
table (docs/protocol.md, "Tournaments"). A change this process appended is pushed as soon as
the throttle allows; the others are found by looking every second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.race.domain.lifecycle import ENDED
from server.race.wire.audience import Role
from server.race.wire.requests import Race, RoomRequests, Session
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.runtime.tasks import Background, gather_bounded
from server.tournaments.domain.events import RaceScored, TournamentEvent
from server.tournaments.domain.fold import Tournament
from server.tournaments.domain.standings import me_row, page_message, page_of, state
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.presence import STALE_MS, Placement, TournamentPresence
from shared import protocol as p
from shared.errors import ArenaError

log = get_logger("server.tournaments.wire.feed")

_ME = p.pack("me")  # the field each follower's own row is spliced in as

RENEW_MS = STALE_MS // 3  # a presence is written again this often even if nothing changed


class Follower(Session, Protocol):
    """A connection that follows a tournament."""


@dataclass(eq=False)
class Following:
    """One connection's follow: as which account (None: a guest), which page (0: the one
    with its own row), since when."""

    follower: Follower
    account: str | None
    tournament: str
    page: int
    since: int
    noted: tuple[int, bool] | None = None  # when its presence was last written, and busy


def standings_frame(tournament: Tournament, following: Following, pages: dict[int, bytes]) -> bytes:
    """A follower's ``tournament_standings`` frame: its page (built and packed once per page,
    in ``pages``) and its own row."""
    account = following.account
    page = following.page or page_of(tournament, account)
    head = pages.get(page)
    if head is None:
        head = pages[page] = p.open_map(page_message(tournament, page))
    return b"".join((head, _ME, p.pack(me_row(tournament, account))))


class TournamentFeed:
    """Followers here, by tournament; the loops that tell them and note their presence."""

    def __init__(
        self,
        book: TournamentBook,
        presence: TournamentPresence,
        clock: Clock,
        race: Race,
        *,
        seated: Callable[[str], Awaitable[None]],
        push_s: float = 1.0,
        place_s: float = 0.2,
    ) -> None:
        self.book = book
        self.presence = presence
        self.clock = clock
        self.race = race  # a paired follower is seated in its race through the race's requests
        self.seated = seated  # a racer sat down: the last one starts the countdown
        self.push_s = push_s
        self.place_s = place_s
        self.by_tournament: dict[str, dict[Follower, Following]] = {}
        self.by_follower: dict[Follower, Following] = {}
        self.by_session: dict[str, Follower] = {}  # whom a placement names
        self._pushed: dict[str, tuple[int, dict[str, Any]]] = {}  # version, state sent
        self._pushed_at: dict[str, int] = {}  # when each tournament was last pushed
        self._push_due: set[str] = set()  # tournaments with a push waiting for the throttle
        self._dirty: set[str] = set()  # changed again while their push was under way
        self.pushes = 0  # standings frames sent, for the metrics
        self.background = Background()

    def start(self) -> None:
        self.book.listeners.append(self.changed)
        self.background.every(self.push_s, self.push, self._failed)
        self.background.every(self.push_s, self.note_presence, self._failed)
        self.background.every(self.place_s, self.place, self._failed)
        self.presence.local = self.place_one

    async def aclose(self) -> None:
        await self.background.aclose()

    @staticmethod
    def _failed(exc: ArenaError) -> None:  # the store may be down: next time
        log.warning("tournament_feed_failed", code=exc.code, reason=exc.reason)

    # ---- following ---------------------------------------------------------------------------

    async def follow(
        self,
        follower: Follower,
        tournament_id: str,
        page: int = 0,
        request: dict[str, Any] | None = None,
        *,
        account: str | None,
    ) -> None:
        """Follow (or change page); sent the state (the answer to ``request``, with its ref)
        and the page at once."""
        tournament = await self.book.get(tournament_id)
        old = self.by_follower.get(follower)
        if old is not None and old.tournament != tournament_id:
            await self.unfollow(follower)
            old = None
        since = old.since if old is not None else self.clock.now_ms()
        following = Following(follower, account, tournament_id, page, since)
        self.by_follower[follower] = following
        self.by_session[follower.session] = follower
        self.by_tournament.setdefault(tournament_id, {})[follower] = following
        view = {"type": p.TOURNAMENT, "tournament": state(tournament, self.clock.now_ms())}
        if request is not None:
            follower.reply(request, view)
        else:
            follower.send(view)
        follower.send(standings_frame(tournament, following, {}))
        await self._note(following)

    async def unfollow(self, follower: Follower) -> str | None:
        """Stop following; the tournament it followed, if any."""
        following = self.by_follower.pop(follower, None)
        if following is None:
            return None
        if self.by_session.get(follower.session) is follower:
            del self.by_session[follower.session]
        followers = self.by_tournament.get(following.tournament, {})
        followers.pop(follower, None)
        if not followers:
            self.by_tournament.pop(following.tournament, None)
            self._pushed.pop(following.tournament, None)
            self._pushed_at.pop(following.tournament, None)
        if following.account is not None:
            await self.presence.drop(following.tournament, following.account, follower.session)
        return following.tournament

    def followed(self, follower: Follower) -> str | None:
        following = self.by_follower.get(follower)
        return following.tournament if following is not None else None

    # ---- the loops ---------------------------------------------------------------------------

    async def push(self) -> None:
        """Every followed tournament that changed: its state and standings to its followers,
        now or, if pushed less than a second ago, once the second is up."""
        for tournament_id in list(self.by_tournament):
            self.changed(tournament_id)

    def changed(self, tournament_id: str, events: Sequence[TournamentEvent] = ()) -> None:
        """The tournament may have changed: a push, as soon as the throttle allows. Racers
        whose race was just scored get their standings at once: they look for their result
        the moment their race ends, and the throttle would keep it from them for a second."""
        if tournament_id not in self.by_tournament:
            return
        scored = {r["account"] for e in events if isinstance(e, RaceScored) for r in e.results}
        if scored:
            self.background.spawn(self._push_scored(tournament_id, scored))
        if tournament_id in self._push_due:  # one is coming: it looks again when it is done
            self._dirty.add(tournament_id)
            return
        self._push_due.add(tournament_id)
        self.background.spawn(self._push_when_allowed(tournament_id))

    async def _push_when_allowed(self, tournament_id: str) -> None:
        try:
            while True:
                last = self._pushed_at.get(tournament_id)
                if last is not None:
                    wait_ms = last + int(self.push_s * 1000) - self.clock.now_ms()
                    if wait_ms > 0:
                        await asyncio.sleep(wait_ms / 1000)
                self._dirty.discard(tournament_id)
                try:
                    await self.push_one(tournament_id)
                except ArenaError as exc:
                    self._failed(exc)
                if tournament_id not in self._dirty:
                    return
        finally:
            self._push_due.discard(tournament_id)
            self._dirty.discard(tournament_id)

    async def _push_scored(self, tournament_id: str, accounts: set[str]) -> None:
        """Their standings to the followers here of ``accounts``, now."""
        followers = self.by_tournament.get(tournament_id, {})
        scored = [f for f in list(followers.values()) if f.account in accounts]
        if not scored:
            return
        self._send_standings(await self.book.get(tournament_id), scored)

    def _send_standings(self, tournament: Tournament, followings: list[Following]) -> None:
        """Each follower's standings frame, a page built once for all who see it."""
        pages: dict[int, bytes] = {}
        for following in followings:
            following.follower.send(standings_frame(tournament, following, pages))
            self.pushes += 1

    async def push_one(self, tournament_id: str) -> None:
        """The tournament's state and standings to its followers here, if they changed."""
        followers = self.by_tournament.get(tournament_id)
        if not followers:
            return
        tournament = await self.book.get(tournament_id)
        now = self.clock.now_ms()
        view = state(tournament, now)
        version, sent = self._pushed.get(tournament_id, (-1, {}))
        if version == tournament.version and sent == view:
            return
        self._pushed[tournament_id] = (tournament.version, view)
        if sent != view:
            frame = p.encode_unchecked({"type": p.TOURNAMENT, "tournament": view})
            for follower in followers:
                follower.send(frame)
        if version != tournament.version:
            self._send_standings(tournament, list(followers.values()))
        # The throttle counts from the frames' sending, done now, not from the start of the
        # push: building the pages took milliseconds, which would come off the next wait.
        self._pushed_at[tournament_id] = self.clock.now_ms()

    async def note_presence(self) -> None:
        """Presence written where it changed (busy or not) or is due for renewal, side by side
        (the store pipelines them): not a write per follower per second."""
        now = self.clock.now_ms()
        due = [
            f
            for f in list(self.by_follower.values())
            if f.noted is None
            or f.noted[1] != self._busy(f.follower, f.tournament)
            or now - f.noted[0] >= RENEW_MS
        ]
        await gather_bounded((self._note(f) for f in due), 8)

    async def _note(self, following: Following) -> None:
        follower, account = following.follower, following.account
        if account is None:
            return
        busy = self._busy(follower, following.tournament)
        following.noted = (self.clock.now_ms(), busy)
        await self.presence.note(
            following.tournament, account, follower.session, following.since, busy
        )

    def _busy(self, follower: Follower, tournament_id: str) -> bool:
        """Seated in an unfinished room that is not one of this tournament's races."""
        found = self.race.delivery.member(follower)
        if found is None:
            return False
        room, member = found
        if member.role != Role.PLAYER or room.status in ENDED:
            return False
        return room.meta is None or room.meta.tournament != tournament_id

    async def place(self) -> None:
        """Seat this process's paired racers on their connections (with no follower here,
        nobody is paired here: the store is not asked)."""
        if not self.by_session:
            return
        placements = await self.presence.placements()
        if not placements:
            return
        for placement in placements:
            self.place_one(placement)

    def place_one(self, placement: Placement) -> None:
        """Seat a paired racer of this process (told by the pairer itself when it runs here)."""
        follower = self.by_session.get(placement.session)
        if follower is not None:  # None: the connection has closed since
            self.background.spawn(self.seat(follower, placement))

    async def seat(self, follower: Follower, placement: Placement) -> None:
        """``tournament_paired``, out of a room whose race is over, into the race's seat."""
        if self._busy(follower, placement.tournament):
            return  # racing elsewhere since: the race starts without them
        follower.send(
            {
                "type": p.TOURNAMENT_PAIRED,
                "tournament": placement.tournament,
                "room": placement.room,
                "race": placement.race,
                "players": list(placement.players),
            }
        )
        rooms = RoomRequests(follower, self.race)
        try:
            await rooms.leave_current()
            await rooms.join(placement.room, Role.PLAYER)
            await self.seated(placement.room)
        except ArenaError as exc:
            log.warning("tournament_not_seated", room=placement.room, code=exc.code)
            follower.send(p.error_message(exc.code, exc.reason, None))
