"""The race clock: countdowns, time limits, abandonment, idle lobbies; a race always ends.

A listener of the hub: after every change it arms the room's one timer from the folded state
(so a room loaded after a restart arms its own) and writes the room's next due time to the
store's ``due`` index. Rooms nobody has loaded since a restart are found through that index,
polled every second, and loaded just before they are due: a countdown, time limit or grace
fires on time without folding every room at start. What fires goes through the commands,
which append. The clock also beats this process's heartbeat; a process that stops beating
(killed) is taken as gone by the others, and its racers as disconnected since its last beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from server.kernel.placement import home_worker
from server.race.domain.events import RaceFinished, RaceStarted
from server.race.domain.fold import Change, GameAdvanced, Loaded, RoomChanged
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.domain.progress import TIME_LIMIT
from server.race.domain.timers import Graces, abandoned_now, clocked_out_now, next_due, time_is_up
from server.race.services.commands import Commands
from server.race.services.hub import Hub
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.tasks import stop_tasks
from shared.errors import ArenaError

log = get_logger("server.race.services.clock")

_LOOKAHEAD_MS = 1500  # rooms due this soon are loaded, so their timers fire on time
_STANDBY_MS = 1000
"""With --workers, a room due soon is loaded ahead by its home worker only; another steps in
once it is this late (its home is down): a room loaded everywhere was folded everywhere."""


class RaceClock:
    """One timer per loaded room, and the due index for the rooms not loaded."""

    def __init__(
        self, clock: Clock, config: Config, hub: Hub, commands: Commands, *, poll_s: float = 1.0
    ) -> None:
        self.clock = clock
        self.config = config
        self.hub = hub
        self.commands = commands
        self.directory = commands.directory
        self.presence = commands.presence
        self.graces = Graces(
            abandon_ms=int(config.abandon_grace_s * 1000),
            lobby_ttl_ms=int(config.lobby_ttl_s * 1000),
        )
        self.poll_s = poll_s
        self._timers: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self._written: dict[str, int | None] = {}  # the due time last written to the index
        self._tasks: set[asyncio.Task[Any]] = set()
        self._poller: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        self._poller = self._spawn(self._poll(), name="race-clock-poll")
        self._spawn(self._beat(), name="heartbeat")

    async def _beat(self) -> None:
        """Say this process is alive; take over from processes that stopped saying so."""
        interval = self.config.heartbeat_s
        while not self._closed:
            try:
                await self.presence.beat()
                silent = self.clock.now_ms() - int(interval * 3000)
                for entry in await self.presence.silent_since(silent):
                    log.warning("process_gone", process=entry.member, last_seen=entry.score)
                    await self.commands.gone(entry.member, entry.score)
            except ArenaError as exc:
                log.warning("heartbeat_failed", code=exc.code, reason=exc.reason)
            await asyncio.sleep(interval)

    async def aclose(self) -> None:
        """Stop every timer and task of the clock."""
        self._closed = True
        await stop_tasks([*self._tasks, *(t for _, t in self._timers.values())])

    def _spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        # A fresh context: clock tasks must not log with the session that happened to start them.
        task = asyncio.get_running_loop().create_task(
            coro, name=name, context=contextvars.Context()
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---- the hub's listener ------------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        if room.id in self._written and all(_still_playing(c) for c in changes):
            return  # a move of a game still on: no action, and every timer as it was
        for change in changes:
            if (isinstance(change, RoomChanged) and isinstance(change.event, RaceStarted)) or (
                isinstance(change, Loaded)
                and room.status is RoomStatus.RACING
                and any(g.version == 0 for g in room.games.values())
            ):
                self._act(room, self.commands.timed.start_games, "games")
            if (
                isinstance(change, GameAdvanced | Loaded)
                and room.status is RoomStatus.RACING
                and room.all_done()
            ):
                self._act(room, self.commands.timed.finish_all_done, "finish")
            if room.finished is not None and (
                isinstance(change, Loaded)
                or (isinstance(change, RoomChanged) and isinstance(change.event, RaceFinished))
            ):
                self._act(room, self.commands.timed.retire, "retire")
        self._rearm(room)

    def _act(
        self, room: Room, action: Callable[[Room], Coroutine[Any, Any, Any]], what: str
    ) -> None:
        async def run() -> None:
            try:
                await action(room)
            except ArenaError as exc:
                log.warning("clock_action_failed", room=room.id, what=what, reason=exc.reason)

        self._spawn(run(), name=f"{what}-{room.id}")

    def _rearm(self, room: Room) -> None:
        due = next_due(room, self.graces)
        current = self._timers.get(room.id)
        if current is not None and current[0] != due:
            current[1].cancel()
            del self._timers[room.id]
            current = None
        if due is not None and current is None:
            task = asyncio.get_running_loop().create_task(
                self._fire_at(room, due), name=f"timer-{room.id}", context=contextvars.Context()
            )
            self._timers[room.id] = (due, task)
        if self._written.get(room.id, "unknown") != due:
            self._written[room.id] = due
            self._spawn(self._write_due(room.id, due), name=f"due-{room.id}")

    async def _write_due(self, room_id: str, due: int | None) -> None:
        try:
            await self.directory.set_due(room_id, due)
        except ArenaError as exc:  # best effort: the index is a hint, the stream the truth
            self._written.pop(room_id, None)
            log.warning("due_index_failed", room=room_id, reason=exc.reason)

    async def _fire_at(self, room: Room, due: int) -> None:
        await self.clock.sleep_until(due)
        if self._timers.get(room.id, (None,))[0] == due:
            del self._timers[room.id]
        try:
            now = self.clock.now_ms()
            if room.status is RoomStatus.COUNTDOWN:
                await self.commands.timed.go(room)
            elif room.status is RoomStatus.RACING:
                if time_is_up(room, now):
                    await self.commands.timed.finish(room, TIME_LIMIT)
                for player in abandoned_now(room, self.graces, now):
                    await self.commands.timed.abandon(room, player)
                for player in clocked_out_now(room, now):
                    await self.commands.timed.clock_out(room, player)
            elif room.status is RoomStatus.LOBBY:
                await self.commands.timed.close_idle(room)
        except ArenaError as exc:
            log.warning("timer_failed", room=room.id, code=exc.code, reason=exc.reason)

    def forget(self, room_id: str) -> None:
        """The room was unloaded: its timer, if any, and what was written of it go with it
        (an ended room has nothing due; a reload writes its due time again)."""
        current = self._timers.pop(room_id, None)
        if current is not None:
            current[1].cancel()
        self._written.pop(room_id, None)

    # ---- rooms not loaded --------------------------------------------------------------------

    async def _poll(self) -> None:
        while not self._closed:
            with contextlib.suppress(ArenaError):
                await self.poll_once()
            await asyncio.sleep(self.poll_s)

    async def poll_once(self) -> None:
        """Load the rooms due soon that this process has not loaded (their timers then arm);
        an entry whose room is gone or has nothing due is dropped."""
        now = self.clock.now_ms()
        try:
            due = await self.directory.due_before(now + _LOOKAHEAD_MS)
        except ArenaError as exc:
            log.warning("due_poll_failed", code=exc.code, reason=exc.reason)
            return
        workers, index = self.config.workers, self.config.worker_index
        for entry in due:
            if entry.member in self.hub.rooms:
                continue
            if home_worker(entry.member, workers) != index and entry.score > now - _STANDBY_MS:
                continue
            try:
                room = await self.hub.room(entry.member)
            except ArenaError as exc:
                log.warning("due_load_failed", room=entry.member, reason=exc.reason)
                continue
            if room is None:
                await self.directory.set_due(entry.member, None)


def _still_playing(change: Change) -> bool:
    """A game moved on and is not done: nothing a timer or an action reads has changed (a game
    that is done is what ends a race early and stops its racer's abandonment timer). Most
    changes are these, one a move; working the timers out again cost 2 % of a saturated server."""
    return isinstance(change, GameAdvanced) and not change.progress.status.done
