"""The archiver: a finished room leaves the live store for the archive, once, and never is lost.

A room that finished ``--archive-after-s`` ago is read whole from the store, written to the
archive (insert-if-absent: racing processes write once, a second run is a no-op), read back
and checked (its record folds to the same room and games as the store's events), and only
then deleted from the store, its streams all at once and only if none moved on since they were
read (``delete_at``, the fence): from that instant every reader goes to the archive, and an
event appended at any moment before it is kept for the next sweep. A crash between any two
steps leaves the room in the store,
in the archive, or in both, and the next sweep (of any process) finishes the job, since the
room stays in the ``archive-due`` index until its streams are gone. An archive that fails
(unreachable, disk full) deletes nothing; the sweep backs off and tries again.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from server.archive import Archive, ArchivedRoom
from server.race.domain.events import RaceFinished
from server.race.domain.fold import Change, Loaded, RoomChanged, fold_stored
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room, room_stream
from server.race.services.directory import Directory
from server.race.services.reader import stored_events
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from server.store import EventStore, StoredEvent
from shared.errors import ArenaError, ServerError

log = get_logger("server.race.services.archiver")

ARCHIVE_DUE_INDEX = "archive-due"  # room id -> when its race finished (ms), until archived
ARCHIVE_CLAIMS_INDEX = "archive-claims"  # room id -> when its archiver's lease runs out (ms)
CLAIM_MS = 10_000  # a lease on one room: archiving it takes milliseconds; a crash frees it then
_BATCH = 256  # rooms a sweep archives at most
_CONCURRENCY = 8  # rooms archived at once: their round trips overlap
_MAX_BACKOFF_S = 60.0

Step = Callable[[str, str], Awaitable[None]]
"""Called between the steps of archiving a room (step name, room id): tests inject a crash."""


async def _no_step(step: str, room_id: str) -> None:
    return None


SideStreams = Callable[[Room], Sequence[str]]
"""The streams kept with a room beside its games (its games' analyses, server/analysis): the
archiver moves them with the room. Named by the app, since the race knows no other wing."""


def _no_side_streams(room: Room) -> Sequence[str]:
    return ()


class Outcome(Enum):
    """What archiving one room came to."""

    ARCHIVED = "archived"  # written, checked, gone from the store: by this call
    CLEARED = "cleared"  # no longer due: what an earlier run left finished, or nothing to do
    WAITING = "waiting"  # still due: held (its rating), or it moved on meanwhile
    CLAIMED = "claimed"  # still due: another process is archiving it now


class ArchiveMismatch(ServerError):
    """The archived record does not fold to the room the store holds: nothing is deleted."""

    code = "archive_mismatch"


@dataclass
class ArchiverFigures:
    """What ``/metrics`` reports of the archiver (docs/operations.md)."""

    archived: int = 0  # rooms this process archived (and removed from the store)
    failures: int = 0  # rooms or sweeps that failed (archive down, a mismatch, a store error)
    waiting: int = 0  # finished rooms not archived yet, at the last sweep (every process's)
    oldest_waiting_s: float = 0.0  # how long the oldest of them has been finished


def fingerprint(room: Room) -> dict[str, Any]:
    """What a fold of a finished room must give whoever reads it: the room, its result, and
    each game's position, progress and version."""
    return {
        "summary": room.summary(),
        "finished": room.finished_message() if room.finished is not None else None,
        "version": room.version,
        "rematch": room.rematch,
        "games": {
            player: (game.version, game.state, game.progress) for player, game in room.games.items()
        },
    }


def folded(room_id: str, events: Sequence[StoredEvent]) -> Room:
    room = Room(room_id)
    fold_stored(room, events)
    return room


class Archiver:
    """Archives this store's finished rooms, in a loop of its own; any number of processes may
    run one on the same store and archive."""

    def __init__(
        self,
        store: EventStore,
        archive: Archive,
        clock: Clock,
        *,
        after_s: float,
        hold_indexes: Sequence[str] = (),
        interval_s: float = 5.0,
        step: Step = _no_step,
        process: str = "",
        side_streams: SideStreams = _no_side_streams,
    ) -> None:
        self.store = store
        self.archive = archive
        self.clock = clock
        self.directory = Directory(store, clock, archive)
        self.after_ms = int(after_s * 1000)
        self.hold_indexes = tuple(hold_indexes)  # a room in one of these waits (ratings-pending)
        self.interval_s = interval_s
        self.step = step
        self.side_streams = side_streams
        self.process = process.encode()  # who holds a claim (for whoever reads the index)
        self.figures = ArchiverFigures()
        self._task: asyncio.Task[None] | None = None
        self._marks: set[asyncio.Task[None]] = set()
        self._backlog = False  # the last sweep found a whole batch due, and moved some

    # ---- which rooms are due -------------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        """A hub listener: a race that finished (or a finished room loaded from the store) is
        put in the ``archive-due`` index, so whichever process sweeps first archives it."""
        if room.finished is None or room.archived:
            return
        if any(
            isinstance(c, Loaded)
            or (isinstance(c, RoomChanged) and isinstance(c.event, RaceFinished))
            for c in changes
        ):
            task = asyncio.get_running_loop().create_task(self.mark(room.id, room.finished.at))
            self._marks.add(task)
            task.add_done_callback(self._marks.discard)

    async def mark(self, room_id: str, finished_at: int) -> None:
        try:
            await self.store.index_put(ARCHIVE_DUE_INDEX, room_id, finished_at)
        except ArenaError as exc:  # the room's next load marks it again
            log.warning("archive_mark_failed", room=room_id, reason=exc.reason)

    # ---- the loop ----------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="archiver")

    async def aclose(self) -> None:
        await stop_tasks([self._task, *self._marks])

    async def _run(self) -> None:
        backoff = self.interval_s
        while True:
            try:
                failed = await self.sweep()
            except ArenaError as exc:
                self.figures.failures += 1
                log.warning("archive_sweep_failed", code=exc.code, reason=exc.reason)
                failed = True
            if not failed and self._backlog:
                continue  # a backlog: the next batch at once
            # Something failed (the archive down, say): wait longer each time, up to a minute.
            backoff = min(backoff * 2, _MAX_BACKOFF_S) if failed else self.interval_s
            await asyncio.sleep(backoff)

    async def sweep(self) -> bool:
        """Archive every room due now; True if any failed (they stay due)."""
        now = self.clock.now_ms()
        due = await self.store.index_range(ARCHIVE_DUE_INDEX)
        ready = [e.member for e in due if e.score + self.after_ms <= now]
        full = len(ready) >= _BATCH
        # Each process starts at a place of its own in the list: processes sweeping at once
        # meet at few claims.
        start = zlib.crc32(self.process) % len(ready) if ready else 0
        ready = (ready[start:] + ready[:start])[:_BATCH]
        gone: set[str] = set()
        failures: list[bool] = []
        gate = asyncio.Semaphore(_CONCURRENCY)

        async def one(room_id: str) -> None:
            async with gate:
                try:
                    outcome = await self.archive_room(room_id)
                    if outcome is Outcome.ARCHIVED:
                        self.figures.archived += 1
                    if outcome in (Outcome.ARCHIVED, Outcome.CLEARED):
                        gone.add(room_id)
                except ArenaError as exc:
                    self.figures.failures += 1
                    failures.append(True)
                    log.warning("archive_failed", room=room_id, code=exc.code, reason=exc.reason)

        await asyncio.gather(*(one(room_id) for room_id in ready))
        failed = bool(failures)
        self._backlog = full and bool(gone)  # more due, and this sweep moved some
        waiting = [e.score for e in due if e.member not in gone]
        self.figures.waiting = len(waiting)
        self.figures.oldest_waiting_s = (now - min(waiting)) / 1000 if waiting else 0.0
        return failed

    # ---- one room ----------------------------------------------------------------------------

    async def archive_room(self, room_id: str) -> Outcome:
        """Archive, check, delete, under a claim on the room: with several processes (each
        worker of ``--workers``) sweeping, one reads, encodes and writes each room. Safe to
        run again at any point, and (the claim aside) from several processes at once."""
        if await self._held(room_id):
            return Outcome.WAITING
        now = self.clock.now_ms()
        claimed = await self.store.index_claim(
            ARCHIVE_CLAIMS_INDEX, room_id, now + CLAIM_MS, self.process, expired_at=now
        )
        if not claimed:
            return Outcome.CLAIMED
        try:
            # Archived meanwhile by the process whose claim this one followed: nothing to do.
            if await self.store.index_get(ARCHIVE_DUE_INDEX, room_id) is None:
                outcome = Outcome.CLEARED
            else:
                outcome = await self._archive(room_id)
        except (ArenaError, asyncio.CancelledError):  # a failure, or the server stopping
            await self._release(room_id)
            raise
        await self._release(room_id)  # a process that died holding it: it runs out
        return outcome

    async def _release(self, room_id: str) -> None:
        try:
            await self.store.index_remove(ARCHIVE_CLAIMS_INDEX, room_id)
        except ArenaError as exc:  # it runs out on its own
            log.warning("archive_release_failed", room=room_id, reason=exc.reason)

    async def _archive(self, room_id: str) -> Outcome:
        stream = room_stream(room_id)
        room_events = await self.store.read(stream)
        if not room_events:
            return await self._finish_leftovers(room_id)
        live = folded(room_id, room_events)
        if live.status is not RoomStatus.FINISHED or live.finished is None:
            await self.store.index_remove(ARCHIVE_DUE_INDEX, room_id)  # marked by mistake
            return Outcome.CLEARED
        games = [g.stream for g in live.games.values()]
        side = list(self.side_streams(live))
        read = await self.store.read_many(games + side)  # CorruptEntry: the room stays, counted
        events = [e for g in games for e in read[g]]
        fold_stored(live, events)  # the games, onto the room folded above
        record = ArchivedRoom(
            room_id=room_id,
            finished_at=live.finished.at if live.finished else 0,
            summary={**live.summary(), "creator": live.settings.creator},
            room_events=[e.data for e in room_events],
            game_events={g: [e.data for e in read[g]] for g in games},
            analyses={s: [e.data for e in read[s]] for s in side if read[s]},
        )
        await self.step("read", room_id)
        await self.archive.put(record, now_ms=self.clock.now_ms())
        await self.step("written", room_id)
        await self._verify(live, record)
        await self.step("verified", room_id)
        # The fence: the room and its games go at once, and only if each is still at the
        # version archived; an event appended at any moment since the read survives, and the
        # next sweep writes the longer record.
        versions = {stream: len(room_events), **{g: len(read[g]) for g in games + side}}
        if not await self.store.delete_at(versions):
            log.info("archive_raced", room=room_id)  # moved on meanwhile: archived again later
            return Outcome.WAITING
        await self.step("streams_deleted", room_id)  # from here on, readers read the archive
        await self._forget(live)
        log.info("room_archived", room=room_id, streams=len(versions), games=len(games))
        return Outcome.ARCHIVED

    async def _verify(self, live: Room, written: ArchivedRoom) -> None:
        """The archived record folds to the same room as the store's events, and keeps the
        side streams read, or nothing is deleted (an encoder that lost something shows here,
        never in a replay)."""
        record = await self.archive.get(live.id)
        if record is None:
            raise ArchiveMismatch(f"room {live.id} is not in the archive after writing it")
        again = folded(live.id, stored_events(record))
        if fingerprint(again) != fingerprint(live):
            raise ArchiveMismatch(f"the archived room {live.id} does not fold as the live one")
        if any(record.analyses.get(s) != events for s, events in written.analyses.items()):
            raise ArchiveMismatch(f"the archived room {live.id} lost an analysis")

    async def _finish_leftovers(self, room_id: str) -> Outcome:
        """The room stream is gone: a run that deleted it died before the games or the index
        entry. Only the archive's record says which games there were."""
        record = await self.archive.get(room_id)
        if record is None:  # never archived and not in the store: nothing to keep or delete
            log.error("archive_room_missing", room=room_id)
            await self.store.index_remove(ARCHIVE_DUE_INDEX, room_id)
            return Outcome.CLEARED
        # Any game stream still there goes too (the fence deletes them with the room stream;
        # a missing one costs nothing).
        room = folded(room_id, stored_events(record))
        left = [*record.game_events, *self.side_streams(room)]
        await asyncio.gather(*(self.store.expire(stream, 0) for stream in left))
        await self._forget(room)
        return Outcome.CLEARED

    async def _forget(self, room: Room) -> None:
        """The rest of an archived room's place in the store: its directory entry and seats
        (indexes, in other slots than its streams), then its ``archive-due`` entry (the last:
        until it goes, a sweep finishes what a crash left)."""
        await self.directory.forget(room.id, [seat.token_hash for seat in room.seats.values()])
        await self.step("directory_left", room.id)
        await self.store.index_remove(ARCHIVE_DUE_INDEX, room.id)

    async def _held(self, room_id: str) -> bool:
        """A room an index still holds (its rating not recorded yet) waits for it."""
        for index in self.hold_indexes:
            if await self.store.index_get(index, room_id) is not None:
                return True
        return False

    def stats(self) -> Mapping[str, float]:
        f = self.figures
        return {
            "rooms_archived": f.archived,
            "archive_failures": f.failures,
            "archive_waiting": f.waiting,
            "archive_oldest_waiting_seconds": f.oldest_waiting_s,
        }
