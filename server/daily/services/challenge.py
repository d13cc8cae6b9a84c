"""The daily challenge's I/O: the day's committed deal (opened once, by whichever process asks
first), one attempt per account (claimed at version 0 of its own stream, so a second attempt from
any process is refused), the attempt's solo room, and the standings folded from the rooms. The rules
are pure (server/daily/domain/days.py); fairness is the room's: a daily room is not watched and its
seed not shown until the day is over (server/race/wire/requests.py, the room's ``finished``
message)."""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
from typing import Any

from server.daily.domain import days as d
from server.daily.domain.attempts import Attempt, Outcome, attempt_in, ranked, standing_row
from server.kernel.errors import DailyPlayed
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.services.commands import Commands
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import ClientError, WrongExpectedVersion

log = get_logger("server.daily.services.challenge")

ORPHAN_AFTER_MS = 30_000
"""An attempt claimed this long ago whose room nobody sat in was left by a process that died
between the claim and the player's seat (it takes milliseconds): it gets a new room."""


class DailyChallenge:
    """Days, attempts and standings, on the shared store."""

    def __init__(self, store: EventStore, commands: Commands, clock: Clock) -> None:
        self.store = store
        self.commands = commands
        self.clock = clock

    async def deal(self, variant: str, day: dt.date) -> d.DailyDeal:
        """The day's deal: opened (seed drawn, committed to) by the first process to ask."""
        stream = d.daily_stream(variant, day)
        events = await self.store.read(stream, limit=1)
        if not events:
            opened = d.decide_open(
                variant,
                day,
                seed=secrets.token_hex(8),
                salt=secrets.token_hex(16),
                now=self.clock.now_ms(),
            )
            try:
                await self.store.append(stream, [d.encode(opened)], expected_version=0)
                log.info("daily_opened", variant=variant, day=day.isoformat())
                return d.deal_of(opened)
            except WrongExpectedVersion:  # another process opened it first: theirs stands
                events = await self.store.read(stream, limit=1)
        first = d.decode(events[0].data)
        assert isinstance(first, d.DayOpened)
        return d.deal_of(first)

    async def attempt(self, variant: str, account: str, name: str, creator: str) -> Room:
        """Claim today's attempt for ``account`` and make its solo room; DailyPlayed if it
        has one already (on any process). An attempt whose room nobody ever sat in (its
        process died first) is given a new room: the player never saw its deal."""
        now = self.clock.now_ms()
        day = d.day_of(now)
        deal = await self.deal(variant, day)
        stream = d.attempt_stream(variant, day, account)
        claimed = d.AttemptClaimed(now, account, name, secrets.token_hex(8))
        try:
            await self.store.append(stream, [d.encode(claimed)], expected_version=0)
            version = 1
        except WrongExpectedVersion:
            version = await self._unplayed(stream, now, variant, day)
        room = await self.commands.create_daily(
            variant, seed=deal.seed, salt=deal.salt, tag=d.daily_tag(variant, day), creator=creator
        )
        try:
            await self.store.append(
                stream, [d.encode(d.AttemptRoom(now, room.id))], expected_version=version
            )
        except WrongExpectedVersion:  # another connection of the account got there first
            raise self._played(variant, day) from None
        await self.store.index_put(d.attempts_index(variant, day), account, now, room.id.encode())
        await self.store.index_put(
            d.history_index(account),
            f"{day.isoformat()}:{variant}",
            d.day_start_ms(day) // d.DAY_MS,
            room.id.encode(),
        )
        log.info("daily_attempt", variant=variant, day=day.isoformat(), room=room.id)
        return room

    async def _unplayed(self, stream: str, now: int, variant: str, day: dt.date) -> int:
        """The attempt stream's version, if its attempt may be given a new room: claimed at
        least ``ORPHAN_AFTER_MS`` ago and no room of it ever had a seat. Else DailyPlayed."""
        stored = await self.store.read(stream)
        events = [d.decode(e.data) for e in stored]
        rooms = [e.room for e in events if isinstance(e, d.AttemptRoom)]
        if now - events[0].at < ORPHAN_AFTER_MS:
            raise self._played(variant, day)
        for room_id in rooms:  # each must still be a lobby nobody sat in; a room gone counts
            with contextlib.suppress(ClientError):
                room = await self.commands.room(room_id)
                await self.commands.hub.sync(room)
                if not room.seats and room.status is RoomStatus.LOBBY:
                    continue
            raise self._played(variant, day)
        log.warning("daily_attempt_orphaned", stream=stream, rooms=len(rooms))
        return len(stored)

    @staticmethod
    def _played(variant: str, day: dt.date) -> DailyPlayed:
        return DailyPlayed(
            f"you have played today's {variant} daily already ({day.isoformat()}, UTC): "
            "see 'solitaire daily results'"
        )

    async def _attempt_of(self, account: str, room_id: str) -> Attempt | None:
        with contextlib.suppress(ClientError):
            room = await self.commands.room(room_id)
            await self.commands.hub.sync(room)
            return attempt_in(room, account, now=self.clock.now_ms())
        return None

    async def standings(self, variant: str, day: dt.date, reader: str | None) -> dict[str, Any]:
        """The day's standings as the wire shows them: results only while the day runs; the
        seed and each attempt's room once it is over."""
        now = self.clock.now_ms()
        revealed = now >= d.day_end_ms(day)
        attempts = []
        for entry in await self.store.index_range(d.attempts_index(variant, day)):
            found = await self._attempt_of(entry.member, entry.value.decode())
            if found is not None:
                attempts.append(found)
        rows = [
            standing_row(a, place, revealed=revealed) for place, a in enumerate(ranked(attempts), 1)
        ]
        deal = await self.deal(variant, day) if day <= d.day_of(now) else None
        return {
            "variant": variant,
            "date": day.isoformat(),
            "revealed": revealed,
            "commitment": deal.commitment if deal is not None else None,
            "seed": deal.seed if deal is not None and revealed else None,
            "salt": deal.salt if deal is not None and revealed else None,
            "rows": rows,
            "me": next((r for r in rows if r["account"] == reader), None),
        }

    async def streaks(self, account: str) -> d.Streaks:
        """Days in a row the account played, and won, a daily (any variant)."""
        history = []
        for entry in await self.store.index_range(d.history_index(account)):
            day = dt.date.fromisoformat(entry.member.split(":", 1)[0])
            found = await self._attempt_of(account, entry.value.decode())
            history.append((day, found.outcome if found is not None else Outcome.OVER))
        return d.streaks(history, d.day_of(self.clock.now_ms()))
