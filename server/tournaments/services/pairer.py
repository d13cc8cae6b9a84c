"""The loop that runs tournaments: on every process, for each open tournament whose lease it
holds (server/tournaments/services/lease.py), score the races that ended, pair the waiting, finish
it, send the finished one to the archive, and then delete its lease.

Every change is a decision appended at the tournament's version (``TournamentBook.run``), so
two processes pairing at once cannot both succeed; the lease only keeps them from trying.
A race is an ordinary room made for its racers (``members``), naming its tournament; each
racer's process seats them (server/tournaments/services/presence.py). The race's end is scored by
every process that folds it (``on_change``) and, should they all have died, by this loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence

from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.services.commands import Commands
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.tasks import Background, gather_bounded
from server.store import EventStore
from server.tournaments.domain.decide import (
    decide_finish,
    decide_paired,
    decide_pairing,
)
from server.tournaments.domain.events import RacePaired, TournamentEvent, TournamentFinished
from server.tournaments.domain.fold import Race, Tournament
from server.tournaments.domain.schedule import due, parse_schedule
from server.tournaments.services.book import Listed, TournamentBook
from server.tournaments.services.lease import TournamentLease
from server.tournaments.services.metrics import TournamentMetrics
from server.tournaments.services.presence import Here, Placement, TournamentPresence
from server.tournaments.services.scorer import TournamentScorer
from shared.errors import ArenaError, ClientError, ServerError

log = get_logger("server.tournaments.services.pairer")

BATCH = 64  # races of a round recorded (and started) together
AT_ONCE = 64  # rooms made (or racers told) side by side in a round: a share of the store's pool
ROUNDS_A_TICK = 3  # a round that made races is followed by another at once, so many a tick
OVERDUE_MS = 5_000  # a race this late past its clock is looked at by the loop itself
SWEEP_WINDOW_MS = 24 * 3_600_000  # archived tournaments whose leftover lease is looked for


class TournamentPairer:
    """This process's share of running the tournaments."""

    def __init__(
        self,
        store: EventStore,
        book: TournamentBook,
        commands: Commands,
        presence: TournamentPresence,
        clock: Clock,
        config: Config,
        metrics: TournamentMetrics,
        scorer: TournamentScorer,
        *,
        tick_s: float = 0.5,
    ) -> None:
        self.scorer = scorer
        self.store = store
        self.book = book
        self.commands = commands
        self.presence = presence
        self.clock = clock
        self.config = config
        self.metrics = metrics
        self.process = presence.process
        self.tick_s = tick_s
        self.leases = TournamentLease(
            store, clock, self.process, int(config.tournament_lease_s * 1000), metrics
        )
        self.join_wait_ms = int(config.seat_wait_s * 1000)
        self.background = Background()
        self._checked: dict[str, dict[str, int]] = {}  # per tournament: races looked at, when
        self._swept: set[str] = set()  # archived tournaments whose lease is known gone
        try:
            self.schedule = parse_schedule(config.tournament_schedule)
        except ValueError as exc:
            raise SystemExit(f"solitaire-server: --tournament-schedule: {exc}") from None

    def start(self) -> None:
        # Racers scored here are free: their next round need not wait for the next tick.
        woken = asyncio.Event()
        self.scorer.listeners.append(lambda _tournament: woken.set())
        self.background.every(self.tick_s, self.tick, self._failed, wake=woken)

    async def aclose(self) -> None:
        await self.background.aclose()

    @staticmethod
    def _failed(exc: ArenaError) -> None:  # the store may be down: next tick
        log.warning("tournament_tick_failed", code=exc.code, reason=exc.reason)

    async def tick(self) -> None:
        """Every open tournament that has begun: run it if this process holds its lease."""
        now = self.clock.now_ms()
        listed_all = await self.book.listed()
        await self.announce({t.id for t in listed_all}, now)
        await self.sweep_leases(listed_all, now)
        for listed in listed_all:
            if listed.starts_at > now or (listed.finished and not self._archiving(listed)):
                continue
            if not await self.leases.claim(listed.id, begin=not listed.finished):
                continue
            if listed.finished:  # finished here or elsewhere, and not yet archived: again
                await self.finished(await self.book.get(listed.id))
            else:
                await self.run_once(listed.id)

    async def sweep_leases(self, listed_all: Sequence[Listed], now: int) -> None:
        """The leases of tournaments archived in the last day that their holder did not delete
        (it died in between), gone once they ran out: each looked at until none is left, then
        no more by this process."""
        recent = {t.id for t in listed_all if t.archived and t.ends_at > now - SWEEP_WINDOW_MS}
        self._swept &= recent
        for tournament_id in sorted(recent - self._swept):
            if await self.leases.sweep(tournament_id):
                self._swept.add(tournament_id)

    def _archiving(self, listed: Listed) -> bool:
        """Whether a finished tournament still waits for the archive."""
        return self.book.archive is not None and not listed.archived

    async def announce(self, known: set[str], now: int) -> None:
        """Create the scheduled tournaments due (any process may: one creation wins)."""
        for created in due(self.schedule, now):
            if created.id not in known:
                with contextlib.suppress(ServerError):
                    await self.book.create(created)
                    log.info("tournament_scheduled", tournament=created.id, name=created.name)

    async def run_once(self, tournament_id: str) -> None:
        """Score what ended unseen, pair the waiting, finish when all is played."""
        tournament = await self.book.get(tournament_id)
        await self.check_races(tournament)
        for _ in range(ROUNDS_A_TICK):  # those who came free while a round was made: at once
            with self.metrics.pairing_seconds.time():
                if not await self.pair(tournament):
                    break
        if await self.book.run(tournament_id, lambda t, now: decide_finish(t, now)):
            await self.finished(tournament)

    async def pair(self, tournament: Tournament) -> bool:
        """One round: the races decided by rank, then made a batch at a time (best ranked
        first), so the first races start while the last rooms are still being made. A racer
        seated in another unfinished room (on any connection, any process) is left out, and
        the round decided again without them. Whether any race was decided."""
        present = await self.presence.present(tournament.id)
        busy = {a for a, here in present.items() if here.busy}
        since = {a: here.since for a, here in present.items()}
        now = self.clock.now_ms()
        groups = decide_pairing(tournament, since, busy, now)
        checked: set[str] = set()
        while groups:  # only the accounts about to be paired are looked up, each once
            fresh = {a for group in groups for a in group} - checked
            checked |= fresh
            found = {a for a in await self.racing_elsewhere(tournament, fresh) if a}
            if not found:
                break
            busy |= found
            groups = decide_pairing(tournament, since, busy, now)
        for first in range(0, len(groups), BATCH):
            await self.pair_batch(tournament, groups[first : first + BATCH], present)
        return bool(groups)

    async def racing_elsewhere(self, tournament: Tournament, accounts: set[str]) -> list[str]:
        """Of ``accounts``, those seated in an unfinished room other than this tournament's
        races, in play or over ("" for the others): the account's latest seat, if its room is
        live, confirmed in the room itself (a seat left in a lobby does not count)."""

        async def elsewhere(account: str) -> str:
            room_id = await self.commands.directory.room_of_account(account)
            if room_id is None or room_id in tournament.races or room_id in tournament.scored:
                return ""  # a race of this tournament: the fold knows whether it is over
            if not await self.commands.directory.is_live(room_id):
                return ""
            return account if await self.commands.racing(account) is not None else ""

        return await gather_bounded((elsewhere(a) for a in sorted(accounts)), AT_ONCE)

    async def pair_batch(
        self, tournament: Tournament, groups: Sequence[Sequence[str]], present: Mapping[str, Here]
    ) -> None:
        """Rooms made side by side, recorded in one append (a racer the tournament no longer
        has free is left out of it), and each racer's process told where to sit."""
        makes = (self.make_room(tournament, g, present) for g in groups)
        rooms = await gather_bounded(makes, AT_ONCE)
        made = [(room, group) for room, group in zip(rooms, groups, strict=True) if room]

        def decide(t: Tournament, now: int) -> list[TournamentEvent]:
            return [e for room, group in made for e in decide_paired(t, room.id, group, now)]

        events = await self.book.run(tournament.id, decide)
        paired = {e.room for e in events if isinstance(e, RacePaired)}
        placements = []
        for room, group in made:
            if room.id not in paired:  # another process paired them meanwhile
                self.metrics.pairing_conflicts.inc()
                with contextlib.suppress(ArenaError):
                    await self.commands.timed.close_unfilled(room)
                continue
            self.metrics.races_paired.inc()
            names = tuple(tournament.name_of(tournament.entrants[a]) for a in group)
            for account in group:
                race = len(tournament.entrants[account].sheet) + 1
                here = present[account]
                placement = Placement(here.session, tournament.id, room.id, race, names)
                placements.append(self.presence.place(here, placement))
        await gather_bounded(placements, AT_ONCE)
        log.info("tournament_races_paired", tournament=tournament.id, races=len(paired))

    async def make_room(
        self, tournament: Tournament, group: Sequence[str], present: Mapping[str, Here]
    ) -> Room | None:
        """A race's room, for its racers only; None if it cannot be made now (too many rooms:
        they wait for the next round)."""
        s = tournament.settings
        sessions = tuple(present[a].session for a in group)
        msg = {"variant": s.variant, "capacity": len(group), "rated": s.rated}
        msg["time_limit_ms"] = s.time_limit_ms
        try:
            return await self.commands.create_room(
                msg, creator=sessions[0], members=sessions, tournament=tournament.id
            )
        except ClientError as exc:
            log.warning("tournament_race_not_made", tournament=tournament.id, code=exc.code)
            return None

    def _due_check(self, checked: dict[str, int], race: Race, limit_ms: int, now: int) -> bool:
        """Whether a race's room is to be looked at now: once when its racers should all be
        seated, then once it is overdue, then every ``OVERDUE_MS``: never every tick."""
        seated_by = race.at + self.join_wait_ms
        overdue = seated_by + limit_ms + OVERDUE_MS
        last = checked.get(race.room)
        due = seated_by if last is None else overdue if last < overdue else last + OVERDUE_MS
        if now < due:
            return False
        checked[race.room] = now
        return True

    async def check_races(self, tournament: Tournament) -> None:
        """Races whose room should be under way or over by now: started late if their racers
        did not all sit down, scored if they ended and nobody scored them."""
        now = self.clock.now_ms()
        limit = tournament.settings.time_limit_ms
        checked = self._checked.setdefault(tournament.id, {})
        for room_id in [r for r in checked if r not in tournament.races]:
            del checked[room_id]  # scored
        for race in list(tournament.races.values()):
            if not self._due_check(checked, race, limit, now):
                continue
            try:
                room = await self.commands.room(race.room)
                await self.commands.hub.sync(room)
            except ArenaError:
                room = None
            if room is None or room.status in (RoomStatus.FINISHED, RoomStatus.CLOSED):
                await self.scorer.score(tournament.id, race.room, room)
            elif room.status is RoomStatus.LOBBY:
                await self.start_late(room)

    async def start_late(self, room: Room) -> None:
        """Racers who never sat down: the others race, or fewer than two, the room closes."""
        with contextlib.suppress(ClientError):
            if len(room.seats) >= 2:
                await self.commands.start(room, next(iter(room.seats)))
            else:
                await self.commands.timed.close_unfilled(room)

    async def finished(self, tournament: Tournament) -> None:
        """The end: the index says so, every racer's profile notes its place, the stream goes
        to the archive (one that fails is tried again on a later tick), and the lease last.
        Safe to repeat."""
        await self.book.publish(tournament.settings, finished=True)
        for rank, entrant in enumerate(tournament.standings(), 1):
            if entrant.sheet:
                await self.book.note_played(tournament, entrant.account, rank)
        log.info(TournamentFinished.TYPE, tournament=tournament.id)
        if self.book.archive is None:
            return
        try:
            await self.book.archive.keep(tournament.id)
        except ArenaError as exc:  # the archive down, or the stream moved on: a later tick
            log.warning("tournament_archive_deferred", tournament=tournament.id, code=exc.code)
            return
        await self.book.publish(tournament.settings, finished=True, archived=True)
        self._checked.pop(tournament.id, None)
        await self.leases.release(tournament.id)
