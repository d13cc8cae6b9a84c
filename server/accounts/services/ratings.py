"""Ratings' I/O: record a finished rated race once, keep the projection and its leaderboard
index, rebuild them from the log.

``record`` is idempotent and may be called by anyone who saw a race finish (every process's hub
listener, the pending sweep after a restart, a racer asking for the change): it folds the
variant's ratings stream, and appends the race's ``race_rated`` at the version it folded unless
the race is already there; a conflict folds again and looks again. So a race is rated exactly
once however many processes saw it finish, and whatever was killed in between. The races a
process is asked to record while its append is under way go in its next append, together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import msgpack

from server.accounts.domain.ratings import (
    NEW_RATING,
    VARIANTS,
    Change,
    FairPlayMarked,
    FairPlayUnmarked,
    RaceRated,
    RacerRenamed,
    RatingTable,
    decide_rating,
    encode,
    ratings_stream,
)
from server.race.domain.events import RaceFinished, RaceStarted
from server.race.domain.fold import Change as RoomChange
from server.race.domain.fold import RoomChanged, fold_stored
from server.race.domain.model import Room, room_stream
from server.runtime.batches import Answer, KeyedBatches
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.runtime.tasks import gather_bounded
from server.store import EventStore, IndexEntry
from shared.errors import ArenaError, ServerError, WrongExpectedVersion

log = get_logger("server.accounts.services.ratings")

PENDING_INDEX = "ratings-pending"  # rated rooms racing or finished, not yet recorded
BUILT_INDEX = "ratings-built"  # variant -> the ratings version the leaderboard index holds
_PAGE = 2_000
_TURN = 100  # races a refold folds between two turns of the event loop
_BATCH = 200  # races rated in one append
# Index writes asked for side by side: the store sends one loop turn's in one pipeline.
_WRITES_AT_ONCE = 256


def leaderboard_index(variant: str) -> str:
    return f"leaderboard:{variant}"


def unpack_row(entry: IndexEntry) -> dict[str, Any]:
    row: dict[str, Any] = msgpack.unpackb(entry.value)
    return row


class Ratings:
    """The ratings projection of this process, per variant, and the writes that keep the
    leaderboard index in step with the log."""

    def __init__(self, store: EventStore, clock: Clock, *, sweep_s: float = 30.0) -> None:
        self.store = store
        self.sweep_s = sweep_s
        self.clock = clock
        self.tables = {v: RatingTable(v) for v in VARIANTS}
        self._locks = {v: asyncio.Lock() for v in VARIANTS}
        self._appends = KeyedBatches(partial(rated_in_the_log, self), max_batch=_BATCH)
        self._tasks: set[asyncio.Task[Any]] = set()

    # ---- the projection ------------------------------------------------------------------------

    async def catch_up(self, variant: str) -> RatingTable:
        """Fold what the variant's ratings stream holds beyond this process's table."""
        async with self._locks[variant]:
            self.tables[variant] = await self._fold(self.tables[variant])
        return self.tables[variant]

    async def _fold(self, table: RatingTable) -> RatingTable:
        """Read and fold the stream beyond ``table``, a page at a time (one read of 100,000
        events outlasted the store's socket timeout); folded again from the start when a mark
        changed the marked accounts (a new table)."""
        stream = ratings_stream(table.variant)
        while True:
            page = await self.store.read(stream, after=table.version, limit=_PAGE)
            for event in page:
                table.apply(event.version, event.data)
            if table.refold_from_start:
                table = await self._refold(table)
            if len(page) < _PAGE:
                return table

    async def _refold(self, table: RatingTable) -> RatingTable:
        """``table``'s log folded again from the start into ``table.refolding()``, a page at a
        time, the event loop given a turn every ``_TURN`` races: a mark refolds every race of
        the log, seconds of CPU for tens of thousands, which must not stop the server."""
        fresh = table.refolding()
        stream = ratings_stream(table.variant)
        while fresh.version < table.version:
            limit = min(_PAGE, table.version - fresh.version)
            page = await self.store.read(stream, after=fresh.version, limit=limit)
            if not page:
                break
            for i, event in enumerate(page, 1):
                fresh.apply(event.version, event.data)
                if i % _TURN == 0:
                    await asyncio.sleep(0)
        fresh.replaying = False
        log.info("ratings_refolded", variant=table.variant, version=fresh.version)
        return fresh

    async def record(self, room: Room) -> tuple[Change, ...] | None:
        """Rate the room's finished race once; its changes (None: the race is not rated)."""
        event = decide_rating(room)
        if event is None:
            return None
        return await self.record_rated(event)

    async def record_rated(self, event: RaceRated) -> tuple[Change, ...]:
        """Append ``event`` once (keyed by its room: a race's, or a challenge's code); the
        changes it made. Races that end while their variant's append is under way go in the
        next one together: one append at a time per variant and process, where an append each
        raced the others for the same version (seconds of retries at a hundred races a second)."""
        return await self._appends.submit(event.variant, event.room, event)

    async def write_rows(self, variant: str, accounts: Sequence[str]) -> None:
        """Put the accounts' leaderboard rows as folded; again while the stream moved on, so a
        slower writer's older rows never stay over a newer one's."""
        table = self.tables[variant]
        while True:
            version = table.version
            rows = (self._write_row(table, account) for account in accounts)
            # The marker is read with the rows' writes: one round trip for both.
            _, entry = await asyncio.gather(
                gather_bounded(rows, _WRITES_AT_ONCE), self.store.index_get(BUILT_INDEX, variant)
            )
            if await self.store.last_version(ratings_stream(variant)) == version:
                break
            table = await self.catch_up(variant)
        if entry is None or entry.score < version:
            await self.store.index_put(BUILT_INDEX, variant, version)

    async def _write_row(self, table: RatingTable, account: str) -> None:
        index = leaderboard_index(table.variant)
        standing = table.players.get(account)
        if standing is None:  # a mark folded in meanwhile left this account out
            await self.store.index_remove(index, account)
            return
        row = msgpack.packb(standing.row(account))
        await self.store.index_put(index, account, -standing.rating, row)

    async def rebuild(self, variants: Sequence[str] = VARIANTS) -> dict[str, int]:
        """Fold each variant's log from the start and rewrite its leaderboard index; returns
        the races folded per variant."""
        folded = {}
        for variant in variants:
            table = await self._fold(RatingTable(variant))
            self.tables[variant] = table
            await self._rewrite_index(table)
            folded[variant] = table.version
        return folded

    async def _rewrite_index(self, table: RatingTable) -> None:
        """The variant's leaderboard index made to hold exactly the table's rows."""
        index = leaderboard_index(table.variant)
        for entry in await self.store.index_range(index):
            if entry.member not in table.players:
                await self.store.index_remove(index, entry.member)
        await self.write_rows(table.variant, list(table.players))
        await self.store.index_put(BUILT_INDEX, table.variant, table.version)

    async def mark(self, account: str, *, marked: bool = True) -> None:
        """A fair-play mark (or, ``marked`` False, its removal) in every variant's log, and the
        leaderboards rewritten from the ratings folded again: every process folds the same
        mark at the same place in the log, so every process has the same ratings."""
        now = self.clock.now_ms()
        event = FairPlayMarked(now, account) if marked else FairPlayUnmarked(now, account)
        for variant in VARIANTS:
            held = await in_the_log(self, variant, event, lambda t: (account in t.marked) == marked)
            await self._rewrite_index(held)
        log.info("fair_play_marked" if marked else "fair_play_unmarked", account=account)

    async def rename(self, account: str, name: str) -> None:
        """A rename in every variant's log, and the account's leaderboard rows rewritten: every
        process (and a rebuild) folds the new name at the same place."""
        event = RacerRenamed(self.clock.now_ms(), account, name)
        for variant in VARIANTS:
            await in_the_log(self, variant, event, lambda t: t.names.get(account) == name)
            await self.write_rows(variant, [account])
        log.info("racer_renamed", account=account)

    def marked(self) -> frozenset[str]:
        """The accounts a fair-play mark holds on, as this process has folded the log (every
        variant's log takes every mark; the periodic sweep folds what other processes wrote)."""
        return frozenset(self.tables[VARIANTS[0]].marked)

    def renamed(self) -> dict[str, str]:
        """The accounts a moderator renamed and their names now, as this process has folded
        the log (every variant's log takes every rename), for what shows names beside ratings."""
        return self.tables[VARIANTS[0]].names

    async def is_marked(self, account: str) -> bool:
        """Whether a fair-play mark holds on the account (as this process has folded it)."""
        table = await self.catch_up(VARIANTS[0])
        return account in table.marked

    async def start(self) -> None:
        """Rebuild a missing projection, fold the log, and rate what a killed process left."""
        for variant in VARIANTS:
            built = await self.store.index_get(BUILT_INDEX, variant)
            last = await self.store.last_version(ratings_stream(variant))
            if built is None and last > 0:
                log.info("ratings_rebuild", variant=variant, races=last)
                await self.rebuild([variant])
            else:
                await self.catch_up(variant)
        await self.sweep()
        self._spawn(self._every_so_often)

    async def _every_so_often(self) -> None:
        """Sweep now and then: a process killed after a finish that nobody else folded."""
        while True:
            await asyncio.sleep(self.sweep_s)
            try:
                await self.sweep()
                await self.catch_up(VARIANTS[0])  # marks another process appended
            except ArenaError as exc:  # the store's errors are ArenaErrors (StoreError)
                log.warning("ratings_sweep_failed", error=str(exc))

    async def sweep(self) -> None:
        """Rate every pending room whose race has finished (its process may have died first).
        Only the room stream is read and folded, here: a pending room still racing is not
        loaded into this process's hub (with its wake-ups) just to be looked at."""
        for entry in await self.store.index_range(PENDING_INDEX):
            events = await self.store.read(room_stream(entry.member))
            room = Room(entry.member)
            fold_stored(room, events)
            if room.finished is None and events:
                continue
            if events:
                await self.record(room)  # rated now (or before), or never: too few accounts
            # Done with either way; a room with no events has expired with the retention.
            await self.store.index_remove(PENDING_INDEX, entry.member)

    # ---- what the hub tells ----------------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[RoomChange]) -> None:
        """A rated room's race started: it is pending; it finished: rate it (every process that
        folds the finish tries; the append is once)."""
        if not room.rated:
            return
        for change in changes:
            if not isinstance(change, RoomChanged) or change.refused:
                continue
            if isinstance(change.event, RaceStarted):
                accounts = sum(1 for s in room.seats.values() if s.account is not None)
                if accounts >= 2:
                    put = self.store.index_put
                    self._spawn(partial(put, PENDING_INDEX, room.id, change.event.at))
            elif isinstance(change.event, RaceFinished):
                self._spawn(lambda: self.record(room))

    def _spawn(self, work: Callable[[], Awaitable[Any]]) -> None:
        task = asyncio.get_running_loop().create_task(self._logged(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _logged(work: Callable[[], Awaitable[Any]]) -> None:
        try:
            await work()
        except ArenaError as exc:  # the store down: the next sweep rates it
            log.warning("rating_deferred", error=str(exc))

    async def aclose(self) -> None:
        await self._appends.aclose()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ---- queries ---------------------------------------------------------------------------------

    async def rating_of(self, account: str, variant: str) -> int:
        """An account's rating in ``variant`` as the leaderboard has it; a new player's if it
        has none yet (matchmaking queues by it)."""
        entry = await self.store.index_get(leaderboard_index(variant), account)
        if entry is None:
            return NEW_RATING
        return int(unpack_row(entry)["rating"])

    async def leaderboard(self, variant: str) -> list[dict[str, Any]]:
        """Every row of the leaderboard index, best first, with its rank."""
        entries = await self.store.index_range(leaderboard_index(variant))
        return [{"rank": i, **unpack_row(e)} for i, e in enumerate(entries, 1)]


async def in_the_log(
    ratings: Ratings,
    variant: str,
    event: FairPlayMarked | FairPlayUnmarked | RacerRenamed,
    held: Callable[[RatingTable], bool],
) -> RatingTable:
    """``event`` appended to the variant's log at the version folded, unless what it says
    ``held`` already (appended before: a retry changes nothing); the table folded after."""
    for _ in range(50):
        table = await ratings.catch_up(variant)
        if held(table):
            return table
        try:
            await ratings.store.append(
                ratings_stream(variant), [encode(event)], expected_version=table.version
            )
        except WrongExpectedVersion:
            continue
        return await ratings.catch_up(variant)
    raise ServerError("the ratings are changing too fast; try again")


async def rated_in_the_log(
    ratings: Ratings, variant: str, events: Sequence[RaceRated], answer: Answer[tuple[Change, ...]]
) -> dict[str, tuple[Change, ...]]:
    """``events`` appended in one append at the version folded, less those already in the log;
    each race's changes, answered once in the log (a tournament's score waits for them), then
    its accounts' leaderboard rows written and its pending mark gone."""
    # Appended at the version folded here, which is the log's unless another process rated
    # meanwhile: then the append is refused, and the log is read before trying again.
    table = ratings.tables[variant]
    for _ in range(50):
        fresh = [e for e in events if e.room not in table.races]
        if fresh:
            try:
                appended = [encode(e) for e in fresh]
                stream, version = ratings_stream(variant), table.version
                await ratings.store.append(stream, appended, expected_version=version)
            except WrongExpectedVersion:
                table = await ratings.catch_up(variant)
                continue
            table = await ratings.catch_up(variant)
            for e in fresh:
                racers = len(table.races[e.room])
                log.info("race_rated", room=e.room, variant=variant, racers=racers)
        changes = {e.room: table.races[e.room] for e in events}
        answer(changes)  # the callers go on; the rows and marks follow, before the next batch
        done = (ratings.store.index_remove(PENDING_INDEX, e.room) for e in events)
        writes: list[Awaitable[Any]] = [gather_bounded(done, _WRITES_AT_ONCE)]
        if fresh:  # the rows beside the pending marks: their writes go to the store together
            accounts = {c.account for e in fresh for c in table.races[e.room]}
            writes.append(ratings.write_rows(variant, sorted(accounts)))
        await asyncio.gather(*writes)
        return changes
    raise ServerError("the ratings are changing too fast; try again")
