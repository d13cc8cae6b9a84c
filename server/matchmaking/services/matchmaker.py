"""Quick races: this process's waiting players, and the loop that forms rooms from the queues.

The queues are the store's (``Queues``), shared by every process: a player is queued by the process
of their connection, which also forms rooms for the queues it has players in. Forming reads a queue,
decides the groups with the pure rules (``server.matchmaking.domain.queues``) and takes each group
with one atomic ``queue_take``: whoever takes a group creates its room and tells each member's
process where to sit them, through a per-process placement index; that process seats the member on
their own connection. Who left (or whose connection closed, or whose process stopped beating) is out
of the queue, so no group with them can be taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from server.bots.domain.player import level_for_rating
from server.kernel.errors import AlreadyQueued
from server.matchmaking.domain.queues import QueueKey, Waiting, form_groups, range_text
from server.race.domain.decide import people_needed, people_seated
from server.race.domain.lifecycle import RoomStatus
from server.race.services.commands import Commands
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from server.store import EventStore, QueueEntry
from shared.errors import ArenaError, ClientError

log = get_logger("server.matchmaking.services.matchmaker")


def placed_index(process: str) -> str:
    """Where the process that formed a room tells ``process`` to seat one of its members."""
    return f"mm-placed.{process}"


@dataclass
class Ticket:
    """A player of this process waiting in a queue, and how to reach their connection."""

    key: QueueKey
    member: str
    rating: int
    joined_ms: int
    on_placed: Callable[[str], Coroutine[Any, Any, None]]
    on_status: Callable[[dict[str, Any]], None]
    value: bytes  # its queue entry's value, to queue it again as it was
    missing_since: int | None = None  # when its entry was first found gone from the queue


class Matchmaker:
    """This process's tickets, and forming rooms for the queues they wait in."""

    def __init__(
        self,
        store: EventStore,
        commands: Commands,
        clock: Clock,
        config: Config,
        *,
        process: str,
        tick_s: float = 0.2,
        status_every_ms: int = 1000,
    ) -> None:
        self.store = store
        self.commands = commands
        self.clock = clock
        self.config = config
        # A formed room whose members have not all sat down by then starts with those who have.
        self.join_wait_ms = int(config.seat_wait_s * 1000)
        self.process = process
        self.tick_s = tick_s
        self.status_every_ms = status_every_ms
        self.tickets: dict[str, Ticket] = {}
        self.waiting: dict[QueueKey, int] = {}  # how many the last read of a queue found
        self.formed = 0
        self._last_status = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._loop = self._spawn(self._run())

    async def aclose(self) -> None:
        await stop_tasks([self._loop, *self._tasks])

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---- a connection's requests -----------------------------------------------------------

    async def enqueue(
        self,
        key: QueueKey,
        member: str,
        rating: int,
        *,
        name: str,
        account: str | None = None,
        on_placed: Callable[[str], Coroutine[Any, Any, None]],
        on_status: Callable[[dict[str, Any]], None],
    ) -> dict[str, Any]:
        """Queue ``member`` (a session, logged in as ``account``); the first status.
        AlreadyQueued if it waits already."""
        if member in self.tickets:
            raise AlreadyQueued("you are in a queue already: leave it first")
        now = self.clock.now_ms()
        value = msgpack.packb({"j": now, "p": self.process, "n": name, "a": account})
        if not await self.store.queue_join(key.name, member, rating, value):
            raise AlreadyQueued("you are in this queue already")
        ticket = Ticket(key, member, rating, now, on_placed, on_status, value)
        self.tickets[member] = ticket
        # The first status counts the queue as it is (a read), not this process's last look.
        self.waiting[key] = len(await self.store.queue_entries(key.name))
        log.info("queued", queue=key.name, rating=rating)
        return self.status(ticket, now)

    async def leave(self, member: str) -> bool:
        """Take ``member`` out of its queue; False if it was waiting in none here, or if a room
        was formed with it first: its ticket stays, so the placement seats it (answering
        "left" then would leave the room it was taken into a seat short, and the player
        believing they were out)."""
        ticket = self.tickets.get(member)
        if ticket is None:
            return False
        if not await self.store.queue_leave(ticket.key.name, member):
            return False
        self.tickets.pop(member, None)
        return True

    async def gone(self, member: str) -> None:
        """The member's connection closed: out of its queue, and never seated (a formed room
        that was waiting for it starts without it, ``_start_late``)."""
        ticket = self.tickets.pop(member, None)
        if ticket is not None:
            await self.store.queue_leave(ticket.key.name, member)

    def status(self, ticket: Ticket, now: int) -> dict[str, Any]:
        waited = now - ticket.joined_ms
        after_ms = int(self.config.quick_bot_after_s * 1000)
        return {
            "variant": ticket.key.variant,
            "players": ticket.key.players,
            "rated": ticket.key.rated,
            "waiting": max(self.waiting.get(ticket.key, 1), 1),
            "waited_ms": waited,
            "range": range_text(waited) if ticket.key.rated else "any",
            # When a bot races them if no person is found first (None: never, on this server).
            "bot_in_ms": max(0, after_ms - waited) if after_ms > 0 else None,
        }

    # ---- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except ArenaError as exc:  # the store may be down: try again next tick
                log.warning("matchmaking_failed", code=exc.code, reason=exc.reason)
            await asyncio.sleep(self.tick_s)

    async def tick(self) -> None:
        """Form rooms in the queues this process has players in, seat those placed here, and
        tell the waiting how it goes (every ``status_every_ms``)."""
        for key in {t.key for t in self.tickets.values()}:
            await self.form(key)
        if self.tickets:  # a room is only ever formed for a ticket: nobody here, nothing to seat
            await self.deliver()
        now = self.clock.now_ms()
        if now - self._last_status >= self.status_every_ms:
            self._last_status = now
            for ticket in list(self.tickets.values()):
                ticket.on_status(self.status(ticket, now))

    async def _live_processes(self) -> set[str]:
        silent = self.clock.now_ms() - int(self.config.heartbeat_s * 3000)
        return await self.commands.presence.beating_after(silent)

    async def form(self, key: QueueKey) -> None:
        """Read the queue, decide its groups, take each and make its room."""
        entries = await self.store.queue_entries(key.name)
        live = await self._live_processes() if entries else set()
        waiting = []
        for entry in entries:
            info = msgpack.unpackb(entry.value)
            if info["p"] not in live:  # its process stopped: its connection is gone with it
                await self.store.queue_leave(key.name, entry.member)
                continue
            waiting.append(Waiting(entry.member, entry.score, info["j"], info.get("a")))
        self.waiting[key] = len(waiting)
        by_member = {e.member: e for e in entries}
        await self._requeue_lost(key, by_member)
        groups = form_groups(waiting, key.players, self.clock.now_ms())
        taken = await asyncio.gather(*(self.store.queue_take(key.name, list(g)) for g in groups))
        made = [[by_member[m] for m in g] for g, ok in zip(groups, taken, strict=True) if ok]
        self.waiting[key] -= sum(len(g) for g in made)
        # The rooms are made side by side: each is a few round trips of its own.
        await asyncio.gather(*(self._make_room(key, group) for group in made))
        grouped = {m for g in groups for m in g}
        for waiter in waiting:
            if (
                waiter.member not in grouped
                and self._bot_due(waiter)
                and await self.store.queue_take(key.name, [waiter.member])
            ):
                self.waiting[key] -= 1
                await self._make_room(key, [by_member[waiter.member]], bots=True)

    def _bot_due(self, waiter: Waiting) -> bool:
        """Nobody was found for ``waiter`` within ``--quick-bot-after-s``: a bot races them."""
        after_ms = int(self.config.quick_bot_after_s * 1000)
        return after_ms > 0 and self.clock.now_ms() - waiter.joined_ms >= after_ms

    async def _requeue_lost(self, key: QueueKey, queued: Mapping[str, QueueEntry]) -> None:
        """A ticket of ours whose entry left the queue is normally being placed (taken into a
        group, its room told to us within milliseconds). One gone for ``--seat-wait-s`` with no
        placement was lost: its room was never made (the store failed after the take), or a
        process that thought ours stopped dropped it. It is queued again, in its old place,
        so nobody waits forever in a queue that no longer holds them."""
        now = self.clock.now_ms()
        for ticket in list(self.tickets.values()):
            if ticket.key != key:
                continue
            if ticket.member in queued:
                ticket.missing_since = None
            elif ticket.missing_since is None:
                ticket.missing_since = now
            elif now - ticket.missing_since >= self.join_wait_ms:
                ticket.missing_since = None
                await self.store.queue_join(key.name, ticket.member, ticket.rating, ticket.value)
                log.warning("queue_entry_restored", queue=key.name, member=ticket.member)

    async def _make_room(
        self, key: QueueKey, group: list[QueueEntry], *, bots: bool = False
    ) -> None:
        """The group's room; with ``bots``, the one player's, its other seats bots near their
        rating (and unrated: docs/ratings.md)."""
        msg = {"variant": key.variant, "capacity": key.players, "rated": key.rated and not bots}
        try:
            room = await self.commands.create_room(
                msg, creator=group[0].member, members=tuple(e.member for e in group)
            )
            if bots:
                level = level_for_rating(group[0].score)
                for _ in range(key.players - len(group)):
                    await self.commands.bot_seats.add(room, by=None, level=level)
        except ClientError as exc:  # too many rooms, say: back in the queue, in their places
            log.warning("match_not_made", queue=key.name, code=exc.code)
            for entry in group:
                await self.store.queue_join(key.name, entry.member, entry.score, entry.value)
            return
        self.formed += 1
        now = self.clock.now_ms()
        placed = (
            self.store.index_put(
                placed_index(msgpack.unpackb(e.value)["p"]), e.member, now, room.id.encode()
            )
            for e in group
        )
        await asyncio.gather(*placed)  # each member's process told, in one round trip
        log.info("matched", queue=key.name, room=room.id, players=len(group), bots=bots)
        self._spawn(self._start_late(room.id, now + self.join_wait_ms))

    async def deliver(self) -> None:
        """Seat the members of this process that a formed room is waiting for."""
        index = placed_index(self.process)
        for entry in await self.store.index_range(index):
            await self.store.index_remove(index, entry.member)
            ticket = self.tickets.pop(entry.member, None)
            if ticket is not None:  # else: it left (or its connection closed) meanwhile
                self._spawn(ticket.on_placed(entry.value.decode()))

    async def seated(self, room_id: str) -> None:
        """A member sat down here: the last one starts the countdown. The join folded every
        seat taken before it (it appended at the version it synced to): no read is needed."""
        room = await self.commands.room(room_id)
        if room.status is RoomStatus.LOBBY and len(room.seats) >= room.settings.capacity:
            with contextlib.suppress(ClientError):
                await self.commands.start(room, next(iter(room.seats)))

    async def _start_late(self, room_id: str, at: int) -> None:
        """Members who never sat down (their connection closed meanwhile): the others race,
        or, fewer than two, the room closes and whoever sat down may queue again."""
        await self.clock.sleep_until(at)
        with contextlib.suppress(ArenaError):
            room = await self.commands.room(room_id)
            await self.commands.hub.sync(room)
            if room.status is not RoomStatus.LOBBY:
                return
            if people_seated(room) >= people_needed(room):
                await self.commands.start(room, next(iter(room.seats)))
            else:
                await self.commands.timed.close_unfilled(room)
                log.info("match_unfilled", room=room_id, seated=len(room.seats))
