"""The bot runner: a task per bot seat this process holds, playing it through the commands.

Thin on purpose: what to play and how long to think are ``server.bots.domain.player``'s pure
decisions; the task waits out the think time, then moves through ``GameCommands.move`` as a
person's connection would (the move is an event like any, so fairness, spectators, restart and
the race's end hold for it unchanged). A hub listener starts the task when a bot seat names
this process (seated here, or claimed), and wakes it when its room changes. Every heartbeat the
runner also looks at the ``bots`` index for bots whose process stopped beating, and claims them
(``BotSeats.claim``: one claim wins at the room's version), so a bot's game goes on after its
process died, on another process, or on this one after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import random
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from server.bots.domain.player import (
    Memory,
    Pace,
    choose,
    level_of,
    recall,
    remember,
    think_ms,
    wants_solver,
    with_solution,
)
from server.kernel.placement import home_worker
from server.race.domain.bot_seats import bot_connection, process_of
from server.race.domain.fold import Change, GameAdvanced
from server.race.domain.lifecycle import ENDED, RoomStatus
from server.race.domain.model import Game, Room
from server.race.services.commands import Commands
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.solver_pool import SolverPool
from server.runtime.tasks import stop_tasks
from shared import fold_event
from shared.errors import ArenaError
from shared.state import GameState

log = get_logger("server.bots.services.runner")

_RECHECK_S = 5.0  # a waiting bot looks at its room this often even without a wake-up
_RETRY_S = 1.0  # after a failed move (the store down, say)

BotKey = tuple[str, str]  # (room id, player)


def people_racing(room: Room) -> bool:
    """Whether a person (not a bot) in the room still plays their game."""
    for player, seat in room.seats.items():
        game = room.games.get(player)
        if not seat.bot and game is not None and not game.progress.status.done:
            return True
    return False


class BotRunner:
    """This process's bots: one task each, and the scan that takes over orphaned ones."""

    def __init__(
        self,
        commands: Commands,
        clock: Clock,
        config: Config,
        solver: Callable[[], SolverPool],
        *,
        rng: Callable[[], random.Random] = random.Random,
    ) -> None:
        self.commands = commands
        self.hub = commands.hub
        self.seats = commands.bot_seats
        self.clock = clock
        self.config = config
        self.solver = solver
        self.rng = rng  # a fresh random source per bot task (tests pass seeded ones)
        self.pace = Pace(config.bot_floor_ms, config.bot_think_scale)
        self.process = commands.presence.process
        self.moves = 0  # bot moves this process made (metrics, bench)
        self._tasks: dict[BotKey, asyncio.Task[None]] = {}
        self._wakes: dict[BotKey, asyncio.Event] = {}
        self._rooms: dict[str, set[BotKey]] = {}
        self._scanner: asyncio.Task[None] | None = None

    @property
    def playing(self) -> int:
        """Bot seats this process plays now."""
        return len(self._tasks)

    def start(self) -> None:
        self._scanner = self._spawn(self._scan_loop(), name="bot-scan")

    async def aclose(self) -> None:
        await stop_tasks([self._scanner, *self._tasks.values()])

    def _spawn(self, coro: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(
            coro, name=name, context=contextvars.Context()
        )

    # ---- the hub's listener ------------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        """Wake this room's bots; start a task for a bot seat that names this process."""
        for key in self._rooms.get(room.id, ()):
            self._wakes[key].set()
        if room.status in ENDED or all(isinstance(c, GameAdvanced) for c in changes):
            return
        for seat in room.bots():
            key = (room.id, seat.player)
            mine = seat.connection == bot_connection(self.process, seat.player)
            if mine and key not in self._tasks:
                self._start(room, seat.player)

    def _start(self, room: Room, player: str) -> None:
        key = (room.id, player)
        self._wakes[key] = asyncio.Event()
        self._rooms.setdefault(room.id, set()).add(key)
        task = self._spawn(self._play(room, player), name=f"bot-{room.id}-{player}")
        task.add_done_callback(_report)
        self._tasks[key] = task

    def _done(self, key: BotKey) -> None:
        self._tasks.pop(key, None)
        self._wakes.pop(key, None)
        seats = self._rooms.get(key[0])
        if seats is not None:
            seats.discard(key)
            if not seats:
                del self._rooms[key[0]]

    # ---- one bot -----------------------------------------------------------------------------

    async def _play(self, room: Room, player: str) -> None:
        key = (room.id, player)
        wake = self._wakes[key]
        rng = self.rng()
        memory: Memory | None = None
        last_at = 0  # when this bot last moved (the floor counts from it)
        try:
            while True:
                wake.clear()
                seat = room.seats.get(player)
                if (
                    room.status in ENDED
                    or seat is None
                    or seat.connection != bot_connection(self.process, player)
                ):
                    break
                game = room.games.get(player)
                ready = (
                    room.status is RoomStatus.RACING and game is not None and game.state is not None
                )
                if ready and game is not None and game.progress.status.done:
                    break
                if not ready or game is None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(wake.wait(), _RECHECK_S)
                    continue
                if memory is None:
                    memory, last_at = await self._recall(game)
                try:
                    memory, last_at = await self._turn(room, game, seat.bot, memory, rng, last_at)
                except ArenaError as exc:  # the race ended meanwhile, the store is down, ...
                    log.info("bot_move_failed", room=room.id, player=player, code=exc.code)
                    memory = None  # read again: the fold may have moved on
                    await asyncio.sleep(_RETRY_S)
                    with contextlib.suppress(ArenaError):
                        await self.hub.sync(room)
        finally:
            self._done(key)
        if room.status in ENDED:
            with contextlib.suppress(ArenaError):
                await self.seats.drop(room.id)

    async def _recall(self, game: Game) -> tuple[Memory, int]:
        """The bot's memory from its game's events (after a restart or a claim, the game may
        be well on), and when it last moved."""
        positions: list[GameState] = []
        state: GameState | None = None
        last_at = 0
        for event in await self.commands.loop.store.read(game.stream):
            state = fold_event(state, event.data)
            positions.append(state)
            last_at = int(event.data["at"])
        return recall(positions), last_at

    async def _turn(
        self,
        room: Room,
        game: Game,
        level_number: int,
        memory: Memory,
        rng: random.Random,
        last_at: int,
    ) -> tuple[Memory, int]:
        """Think, then make one move (or resign); the memory after it, and when it moved."""
        level = level_of(level_number)
        state = game.state
        assert state is not None
        version = game.version
        if wants_solver(level, memory, state):
            memory = with_solution(memory, await self.solver().solve(state, level.solver_nodes))
        company = people_racing(room)
        choice = choose(state, level, memory, rng, company=company)
        await self.clock.sleep_until(last_at + think_ms(level, self.pace, rng))
        # The fold, not a store round trip: a stale one shows up as a refused move (synced
        # then by the command), and the race's end as a wake-up.
        current = room.games.get(game.player)
        if (
            room.status is not RoomStatus.RACING
            or current is None
            or current.version != version
            or room.seats.get(game.player) is None
        ):
            return memory, last_at  # something moved on meanwhile: decide again
        if choice.move is None:
            if company:
                # Nothing new to try, but a person still races: keep them company until
                # their end (or the race's clock); the room's next change looks again.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakes[(room.id, game.player)].wait(), _RECHECK_S)
                return memory, last_at
            await self.commands.games.resign(room, game.player)
            log.info("bot_resigned", room=room.id, player=game.player)
            return memory, self.clock.now_ms()
        await self.commands.games.move(room, game.player, version + 1, choice.move)
        self.moves += 1
        after = room.games[game.player].state
        assert after is not None
        return remember(memory, state, choice.move, after), self.clock.now_ms()

    # ---- bots of processes that died ---------------------------------------------------------

    async def _scan_loop(self) -> None:
        while True:
            try:
                await self.scan()
            except ArenaError as exc:
                log.warning("bot_scan_failed", code=exc.code, reason=exc.reason)
            await asyncio.sleep(self.config.heartbeat_s)

    async def scan(self) -> None:
        """Claim the bots of rooms not over whose seat no live process holds; forget the rooms
        that are over."""
        silent = self.clock.now_ms() - int(self.config.heartbeat_s * 3000)
        live = await self.commands.presence.beating_after(silent)
        workers, index = self.config.workers, self.config.worker_index
        for room_id, holder in await self.seats.rooms():
            if holder != self.process and holder in live:
                continue  # played by a live process: not loaded here for nothing
            if holder != self.process and home_worker(room_id, workers) != index:
                continue  # with --workers, the room's home worker takes its bots over
            room = await self.hub.room(room_id)
            if room is None:
                await self.seats.drop(room_id)
                continue
            await self.hub.sync(room)
            if room.status in ENDED:
                await self.seats.drop(room_id)
                continue
            for seat in room.bots():
                mine = bot_connection(self.process, seat.player)
                if seat.connection == mine:
                    if (room.id, seat.player) not in self._tasks:
                        self._start(room, seat.player)
                elif seat.connection is None or process_of(seat.connection) not in live:
                    await self.seats.claim(room, seat.player, live)
                    log.info("bot_claimed", room=room.id, player=seat.player)


def _report(task: asyncio.Task[None]) -> None:
    """A bot task that ended on a bug says so in the log (the next scan starts it again)."""
    if not task.cancelled() and task.exception() is not None:
        log.error("bot_crashed", task=task.get_name(), exc_info=task.exception())
