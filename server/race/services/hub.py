"""The hub: one per process, it keeps the rooms this process uses folded from the store.

A room is loaded on first use (subscribe to its wake-ups first, then read its streams and fold
them), so a restart serves at once whatever the store holds. After that, wake-ups say a stream
moved on: the process's own appends arrive with their events and are folded on the spot;
anyone else's are read from the stream from the last folded version. A wake-up that is lost
costs latency, never an event: a periodic catch-up compares every loaded room with the store.
What the projection says changed goes to the listeners (delivery, the race clock), in order.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from server.archive import Archive
from server.race.domain.fold import Change, Loaded, fold_stored
from server.race.domain.model import Room
from server.race.services.causal_fold import fold_in_order, fold_ready
from server.race.services.reader import ArchiveReads, RoomRead, read_room
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from server.store import CorruptEntry, EventStore, StoredEvent, Subscription, Wakeup, stream_group
from shared.errors import ArenaError

log = get_logger("server.race.services.hub")

Listener = Callable[[Room, Sequence[Change]], None]
"""Told what changed in a room, right after the fold; must not block."""

_LOAD_CONCURRENCY = 32


class Hub:
    """Loaded rooms, their wake-ups and catch-up; the only path from the store to the model."""

    def __init__(self, store: EventStore, config: Config, archive: Archive | None = None) -> None:
        self.store = store
        self.archive = archive  # where finished rooms go once the store lets them go
        self.archive_reads = ArchiveReads()
        self.config = config
        self.rooms: dict[str, Room] = {}
        self.listeners: list[Listener] = []
        self.wakeups = 0  # wake-ups received for loaded rooms (metrics)
        self.catch_ups = 0  # stream reads a wake-up, gap or periodic check needed (metrics)
        self._loading: dict[str, asyncio.Future[Room | None]] = {}
        self._behind: dict[str, set[str]] = {}  # room -> streams known to be ahead of the fold
        self._reading: dict[str, asyncio.Task[None]] = {}
        self._subscription: Subscription | None = None
        self._periodic: asyncio.Task[None] | None = None
        self._closed = False

    # ---- life --------------------------------------------------------------------------------

    def start(self) -> None:
        """Subscribe to wake-ups and start the periodic catch-up; loads nothing."""
        self._subscription = self.store.subscribe(self._on_wakeup, on_gap=self._on_gap)
        self._periodic = asyncio.get_running_loop().create_task(
            self._every_so_often(), name="hub-catch-up"
        )

    async def aclose(self) -> None:
        self._closed = True
        await stop_tasks([self._periodic, *self._reading.values()])
        if self._subscription is not None:
            await self._subscription.aclose()

    def listen(self, listener: Listener) -> None:
        self.listeners.append(listener)

    # ---- loading -----------------------------------------------------------------------------

    async def room(self, room_id: str) -> Room | None:
        """The room, folded and followed from now on (a compacted one whole again), or None."""
        room = self.rooms.get(room_id)
        if room is not None and not room.compacted:
            return room
        loading = self._loading.get(room_id)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[Room | None] = asyncio.get_running_loop().create_future()
        self._loading[room_id] = future
        try:
            room = await (self._load(room_id) if room is None else self._fold_again(room))
            future.set_result(room)
            return room
        except asyncio.CancelledError:
            future.cancel()  # a Future cannot hold a CancelledError: waiters are cancelled
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters get it, nobody else must
            raise
        finally:
            del self._loading[room_id]

    async def _load(self, room_id: str) -> Room | None:
        assert self._subscription is not None, "Hub.start() first"
        # Subscribed before reading: whatever is appended from here on wakes us.
        await self._subscription.subscribe([room_id])
        try:
            read = await read_room(self.store, room_id, self.archive, self.archive_reads)
        except BaseException:
            await self._subscription.unsubscribe([room_id])
            raise
        if read is None:
            await self._subscription.unsubscribe([room_id])
            return None
        room = self.rooms[room_id] = Room(room_id)
        return await self._fold_again(room, read)

    async def _fold_again(self, room: Room, read: RoomRead | None = None) -> Room | None:
        """The room read whole (unless given) and folded in place (whoever holds it sees the new
        fold: a compacted room's games, a stream that went back); forgotten if nothing has it."""
        assert self._subscription is not None, "Hub.start() first"
        read = read or await read_room(self.store, room.id, self.archive, self.archive_reads)
        if read is None:  # neither the store nor the archive has it any more
            await self.unload([room])
            return None
        room.reset()  # no await from here to the fold: nobody sees the room half folded
        fold_stored(room, read.events)
        room.archived = read.archived
        self._notify(room, [Loaded()])
        if room.archived:  # read only, for good: nothing to be woken for
            await self._subscription.unsubscribe([room.id])
        else:  # appends made while we read woke nobody (the room was not here yet): look again
            self.mark_behind(room, room.streams())
        return room

    async def expect(self, room_id: str) -> None:
        """Follow a room this process is about to create, from before its first append: all
        appended after it wakes us, so ``adopt`` folds what we appended and reads nothing."""
        assert self._subscription is not None, "Hub.start() first"
        await self._subscription.subscribe([room_id])

    async def not_created(self, room_id: str) -> None:
        """The room ``expect`` announced was not made (its id was taken): followed no more."""
        if room_id not in self.rooms and self._subscription is not None:
            await self._subscription.unsubscribe([room_id])

    def adopt(self, room_id: str, events: Sequence[StoredEvent]) -> Room:
        """A room created here, folded from its events appended after ``expect`` (at 0)."""
        if room_id not in self.rooms:
            room = self.rooms[room_id] = Room(room_id)
            fold_stored(room, events)
            self._notify(room, [Loaded()])
        return self.rooms[room_id]

    def loading(self, room_id: str) -> bool:
        """A use of the room is loading it (or folding it whole again) right now."""
        return room_id in self._loading

    async def unload(self, rooms: Sequence[Room]) -> None:
        """Forget rooms (ended, nobody here): their wake-ups stop; a later use reloads them.
        They are forgotten before the first await, so a use meanwhile loads a fresh fold."""
        gone = []
        for room in rooms:
            if self.rooms.get(room.id) is room:
                del self.rooms[room.id]
                self._behind.pop(room.id, None)
                gone.append(room.id)
        if gone and self._subscription is not None:
            await self._subscription.unsubscribe(gone)

    # ---- keeping up --------------------------------------------------------------------------

    async def sync(self, room: Room) -> None:
        """Fold everything the store holds for the room now (a command about to decide)."""
        if room.compacted:  # folded whole again: everything the store holds
            await self.room(room.id)
            return
        streams = room.streams()
        # The fold as it was before the read: an append of ours that lands while the read is
        # in flight moves the fold on, and must not look like the store going back.
        before = {s: room.version_of(s) for s in streams}
        lasts = await self.store.last_versions(streams)
        if any(0 < lasts[s] < before[s] for s in streams):
            await self.refold(room)
            return
        behind = [s for s in streams if lasts[s] > room.version_of(s)]
        if behind:
            await self._read(room, behind)

    async def refold(self, room: Room) -> None:
        """The store holds less than we folded (a failover lost acknowledged events, which
        --ack-after-replicas prevents): the room is folded again from it, in place."""
        log.error("stream_went_back", room=room.id)
        await self._fold_again(room)

    def _on_wakeup(self, wakeup: Wakeup) -> None:
        room = self.rooms.get(stream_group(wakeup.stream))
        if room is None or room.compacted:  # a compacted room reads everything on its next use
            return
        self.wakeups += 1
        folded = room.version_of(wakeup.stream)
        if wakeup.version <= folded:
            return  # our own append, folded when it was made
        events = wakeup.events
        if events is not None and wakeup.version - len(events) == folded:
            first = folded + 1
            stored = [
                StoredEvent(wakeup.stream, first + i, event)  # type: ignore[arg-type]
                for i, event in enumerate(events)
            ]
            if wakeup.stream != room.stream:
                self._fold(room, stored)
            elif fold_ready(room, stored, self._notify):  # an end waits: its causes are read
                self.mark_behind(room, [room.stream])
            return
        self.mark_behind(room, [wakeup.stream])

    def _on_gap(self) -> None:
        """Wake-ups may have been lost: look at every loaded room."""
        for room in list(self.rooms.values()):
            self.mark_behind(room, room.streams())

    def mark_behind(self, room: Room, streams: Sequence[str]) -> None:
        """The streams hold more than the fold: read them (one reading task per room)."""
        self._behind.setdefault(room.id, set()).update(streams)
        task = self._reading.get(room.id)
        if task is None or task.done():
            self._reading[room.id] = asyncio.get_running_loop().create_task(
                self._catch_up(room), name=f"catch-up-{room.id}"
            )

    async def _catch_up(self, room: Room) -> None:
        """Read the streams marked behind until none is; one task per room at a time."""
        try:
            while not self._closed and self.rooms.get(room.id) is room and not room.compacted:
                streams = self._behind.pop(room.id, None)
                if not streams:
                    return
                try:
                    await self._read(room, sorted(streams, key=lambda s: s != room.stream))
                except ArenaError as exc:
                    log.warning("catch_up_failed", room=room.id, reason=exc.reason)
                    return  # the periodic catch-up tries again
        finally:
            if self._reading.get(room.id) is asyncio.current_task():
                del self._reading[room.id]

    async def _read(self, room: Room, streams: Sequence[str]) -> None:
        """Read and fold what each stream holds beyond the fold; the room stream first, since
        a game stream is only known once the room event that seats its player is folded."""
        for stream in streams:
            after = room.version_of(stream)
            self.catch_ups += 1
            try:
                events = await self.store.read(stream, after=after)
            except CorruptEntry as error:
                log.error("corrupt_event", stream=error.stream, entry=error.entry, reason=error.why)
                continue
            if events:
                await fold_in_order(room, events, self._notify, self._read)
            if stream == room.stream:
                known = {g.stream for g in room.games.values()}
                for new in sorted(known - set(streams)):
                    if room.version_of(new) == 0:
                        await self._read(room, [new])

    def _fold(self, room: Room, events: Sequence[StoredEvent]) -> None:
        changes = fold_stored(room, events)
        if changes:
            self._notify(room, changes)

    def _notify(self, room: Room, changes: Sequence[Change]) -> None:
        for listener in self.listeners:
            try:
                listener(room, changes)
            except Exception:
                log.exception("listener_failed", room=room.id)

    async def _every_so_often(self) -> None:
        """Compare every loaded room with the store now and then: bounds a lost wake-up's cost."""
        while not self._closed:
            await asyncio.sleep(self.config.catch_up_s)
            try:
                await compare_with_store(self)
            except ArenaError as exc:
                log.warning("periodic_catch_up_failed", code=exc.code, reason=exc.reason)

    def stats(self) -> dict[str, Any]:
        return {"rooms": len(self.rooms), "wakeups": self.wakeups, "catch_ups": self.catch_ups}


async def compare_with_store(hub: Hub) -> None:
    """Mark every loaded, unfinished room's streams that moved on behind (one round trip),
    and fold again the rooms whose streams went back."""
    live = [r for r in hub.rooms.values() if r.finished is None and not r.compacted]
    streams = {s: r for r in live for s in r.streams()}
    if not streams:
        return
    before = {s: r.version_of(s) for s, r in streams.items()}
    lasts = await hub.store.last_versions(list(streams))
    went_back = {streams[s].id for s, last in lasts.items() if 0 < last < before[s]}
    for stream, last in lasts.items():
        room = streams[stream]
        if room.id not in went_back and last > room.version_of(stream):
            hub.mark_behind(room, [stream])
    for room_id in went_back:
        behind = hub.rooms.get(room_id)
        if behind is not None:
            await hub.refold(behind)


async def load_many(hub: Hub, room_ids: Sequence[str]) -> None:
    """Load rooms a bounded number at a time (a warm-up after a restart)."""
    gate = asyncio.Semaphore(_LOAD_CONCURRENCY)

    async def load(room_id: str) -> None:
        async with gate:
            with contextlib.suppress(ArenaError):
                await hub.room(room_id)

    await asyncio.gather(*(load(r) for r in room_ids if r not in hub.rooms))
