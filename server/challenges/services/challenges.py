"""Challenges' I/O: a challenge's stream (created, attempts, settled), each attempt's solo room,
who may see what, and settling: when an attempt's race ends (a hub listener), on a sweep of the open
challenges whose window closed, and whenever one is read. The rules are pure
(server/challenges/domain/challenge.py); an append at the version a decision read makes every
decision hold across processes (the last place, one attempt per account, one settlement).
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from server.challenges.domain import challenge as c
from server.challenges.services.archive import ChallengeArchive
from server.daily.domain.attempts import Attempt, attempt_in
from server.daily.services.challenge import ORPHAN_AFTER_MS
from server.kernel.errors import NoSuchChallenge, NotAllowed
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.services.commands import Commands
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import ArenaError, ClientError, ServerError, WrongExpectedVersion

log = get_logger("server.challenges.services.challenges")

_CODE_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
_CODE_LENGTH = 10
CODE = re.compile(rf"[{_CODE_ALPHABET}]{{{_CODE_LENGTH}}}")
_RETRIES = 20
LISTED = 50  # an account's latest challenges a list shows


def _fresh_code() -> str:
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))


Settled = Callable[[c.Challenge], Awaitable[None]]


class Challenges:
    """Challenges on the shared store; ``on_settled`` is told of each settled one (its
    rating), possibly more than once: it must be idempotent. What wakes settling is
    server/challenges/services/sweep.py."""

    def __init__(
        self,
        store: EventStore,
        commands: Commands,
        clock: Clock,
        *,
        on_settled: Settled | None = None,
        limit: Callable[[str], Awaitable[None]] | None = None,
        archive: ChallengeArchive | None = None,
    ) -> None:
        self.store = store
        self.commands = commands
        self.clock = clock
        self.on_settled = on_settled
        self.limit = limit  # counts an account's creations; raises once over its limit
        self.archive = archive  # where settled challenges go (none: they stay in the store)

    # ---- reading ---------------------------------------------------------------------------

    async def load(self, code: str) -> c.Challenge:
        """The challenge as its stream folds (from the archive once it has left the store);
        NoSuchChallenge for a code that names none."""
        challenge, _ = await self._read(code)
        return challenge

    async def _read(self, code: str) -> tuple[c.Challenge, list[dict[str, Any]]]:
        code = code.strip().lower()
        if not CODE.fullmatch(code):
            raise NoSuchChallenge(f"no challenge {code[:40]!r}")
        events = [e.data for e in await self.store.read(c.challenge_stream(code))]
        if not events and self.archive is not None:
            events = await self.archive.events(code)
        challenge = c.fold(code, events)
        if challenge.status is c.ChallengeStatus.NEW:
            raise NoSuchChallenge(f"no challenge {code!r}")
        return challenge, events

    async def _room(self, room_id: str) -> Room | None:
        with contextlib.suppress(ClientError):
            room = await self.commands.room(room_id)
            await self.commands.hub.sync(room)
            return room
        return None

    async def attempts(self, challenge: c.Challenge) -> list[Attempt]:
        """Each entry's attempt as its room stands (one nobody sat in is left out)."""
        now = self.clock.now_ms()
        found = []
        for entry in challenge.entries.values():
            room = await self._room(entry.room)
            attempt = attempt_in(room, entry.account, now=now) if room is not None else None
            if attempt is not None:
                found.append(attempt)
        return found

    async def view(self, code: str, reader: str | None) -> dict[str, Any]:
        """The ``challenge`` message for ``reader`` (settled first if it is due)."""
        challenge = await self.settle(code)
        attempts = await self.attempts(challenge)
        return c.view(challenge, attempts, reader, now=self.clock.now_ms())

    async def mine(self, account: str) -> list[dict[str, Any]]:
        """The account's latest challenges (made, invited to, played), newest first."""
        entries = await self.store.index_range(c.challenges_index(account))
        listed = []
        for entry in sorted(entries, key=lambda e: -e.score)[:LISTED]:
            with contextlib.suppress(NoSuchChallenge):
                listed.append(await self.view(entry.member, account))
        return listed

    async def finished(self, account: str) -> list[dict[str, Any]]:
        """The account's settled challenges, newest first, with its place in each: what its
        profile shows (to anyone: a settled challenge hides nothing)."""
        entries = await self.store.index_range(c.challenges_index(account))
        rows = []
        for entry in sorted(entries, key=lambda e: -e.score)[:LISTED]:
            with contextlib.suppress(NoSuchChallenge):
                challenge = await self.load(entry.member)
                if challenge.settled is not None:
                    rows.append(c.profile_row(challenge, account))
        return rows

    async def hidden_from(self, room: Room, reader: str | None) -> str | None:
        """Why ``reader`` may not watch, replay or export a game of ``room`` (None: they may):
        a challenge's attempt is shown once the reader finished their own, or once settled."""
        code = room.settings.challenge
        if not code:
            return None
        challenge = await self.load(code)
        if challenge.status is c.ChallengeStatus.SETTLED:
            return None
        if reader is not None and c.finished_own(await self.attempts(challenge), reader):
            return None
        return (
            f"room {room.id} is an attempt at challenge {code}: its games are shown once you "
            "have played yours, or once the challenge is over"
        )

    async def check_view(self, room: Room, reader: str | None) -> None:
        reason = await self.hidden_from(room, reader)
        if reason is not None:
            raise NotAllowed(reason)

    # ---- writing ---------------------------------------------------------------------------

    async def create(
        self,
        request: c.CreateRequest,
        *,
        creator: str,
        creator_name: str,
        invited: Sequence[tuple[str, str]],
    ) -> c.Challenge:
        """A new challenge at a fresh code, listed for its creator and those invited."""
        if self.limit is not None:
            await self.limit(creator)
        now = self.clock.now_ms()
        for _ in range(5):
            created = c.decide_create(
                request,
                code=_fresh_code(),
                creator=creator,
                creator_name=creator_name,
                invited=invited,
                seed=secrets.token_hex(8),
                salt=secrets.token_hex(16),
                now=now,
            )
            stream = c.challenge_stream(created.code)
            try:
                await self.store.append(stream, [c.encode(created)], expected_version=0)
            except WrongExpectedVersion:
                continue
            await self.store.index_put(c.OPEN_INDEX, created.code, created.closes_at)
            for account in (creator, *created.invited):
                await self.store.index_put(c.challenges_index(account), created.code, now)
            log.info("challenge_created", challenge=created.code, invited=len(created.invited))
            return c.fold(created.code, [c.encode(created)])
        raise ServerError("could not find a free challenge code")

    async def play(
        self, code: str, account: str, name: str, session: str
    ) -> tuple[c.Challenge, Room]:
        """Claim ``account``'s one attempt and make its solo room, for ``session`` alone to sit
        in; the challenge's refusals otherwise (closed, not invited, played, full)."""
        room: Room | None = None
        for _ in range(_RETRIES):
            challenge = await self.load(code)
            now = self.clock.now_ms()
            replaces = await self._unplayed(challenge, account, now)
            c.decide_attempt(  # the cheap refusals, before a room is made
                challenge, account=account, name=name, room="", now=now, replaces_unplayed=replaces
            )
            if room is None:
                meta = challenge.meta
                room = await self.commands.create_attempt(
                    meta.variant,
                    seed=meta.seed,
                    salt=meta.salt,
                    creator=session,
                    challenge=challenge.code,
                )
            started = c.decide_attempt(
                challenge,
                account=account,
                name=name,
                room=room.id,
                now=now,
                replaces_unplayed=replaces,
            )
            try:
                await self.store.append(
                    c.challenge_stream(challenge.code),
                    [c.encode(started)],
                    expected_version=challenge.version,
                )
            except WrongExpectedVersion:
                continue  # another attempt or the settlement came first: decide again
            await self.store.index_put(
                c.challenges_index(account), challenge.code, challenge.meta.at
            )
            log.info("challenge_attempt", challenge=challenge.code, room=room.id)
            return challenge, room
        raise ServerError("the challenge is changing too fast; try again")

    async def _unplayed(self, challenge: c.Challenge, account: str, now: int) -> bool:
        """Whether the account's earlier attempt may be replaced: made ``ORPHAN_AFTER_MS`` ago
        or more (another of its connections is not about to sit) in a room nobody sat in."""
        entry = challenge.entries.get(account)
        if entry is None or now - entry.at < ORPHAN_AFTER_MS:
            return False
        room = await self._room(entry.room)
        return room is None or (not room.seats and room.status is RoomStatus.LOBBY)

    async def settle(self, code: str) -> c.Challenge:
        """Settle the challenge if it is due (appended once, whoever else tries), and tell
        ``on_settled`` of a settled one; the challenge as it is then."""
        for _ in range(_RETRIES):
            challenge, events = await self._read(code)
            if challenge.status is c.ChallengeStatus.OPEN:
                now = self.clock.now_ms()
                settled = c.decide_settle(challenge, await self.attempts(challenge), now=now)
                if settled is None:
                    return challenge
                # Due now for the sweep: if this process dies before the rating (or the
                # archive), the next sweep anywhere finishes it, not the window's close.
                await self.store.index_put(c.OPEN_INDEX, challenge.code, now)
                try:
                    await self.store.append(
                        c.challenge_stream(challenge.code),
                        [c.encode(settled)],
                        expected_version=challenge.version,
                    )
                except WrongExpectedVersion:
                    continue
                challenge = c.apply(challenge, settled)
                events = [*events, c.encode(settled)]
                log.info("challenge_settled", challenge=challenge.code, reason=settled.reason)
            elif await self.store.index_get(c.OPEN_INDEX, challenge.code) is None:
                return challenge  # settled and rated before
            if self.on_settled is not None:
                await self.on_settled(challenge)
            if self.archive is not None:
                try:
                    await self.archive.keep(challenge, events)
                except ArenaError as exc:  # the archive down: the sweep archives it later
                    log.warning("challenge_archive_deferred", code=exc.code, reason=exc.reason)
                    return challenge
            await self.store.index_remove(c.OPEN_INDEX, challenge.code)
            return challenge
        raise ServerError("the challenge is changing too fast; try again")
