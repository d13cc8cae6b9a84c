"""Game commands: moves, resignations and hints, one at a time per seat.

Each is decided by ``server.race.domain.decide`` against the folded game and appended at the game's
version. What this process remembers for itself (its rejected move ids, the seat locks) lives
here, beside the model, never in it: the folded model is the same in every process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from server.kernel.errors import IdReused, NotRacing
from server.race.domain.decide import check_hint, decide_move, decide_resign, game_start_event
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Game, Room
from server.race.services.hub import Hub
from server.race.services.loop import RoomLoop
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.solver_pool import SolverPool
from shared.errors import ClientError, ServerError, WrongExpectedVersion
from shared.solver import Hint

_REJECT_MEMORY = 256  # rejected move ids kept per seat, so a resent id gets the same answer

Seat = tuple[str, str]  # (room id, player)


class GameCommands:
    """Every request that changes a racer's game."""

    def __init__(
        self,
        loop: RoomLoop,
        hub: Hub,
        clock: Clock,
        config: Config,
        solver: Callable[[], SolverPool] | None = None,
    ) -> None:
        self.loop = loop
        self.hub = hub
        self.clock = clock
        self.config = config
        self._solver = solver  # made on first use (its worker process costs memory)
        self._locks: dict[Seat, asyncio.Lock] = {}
        self._rejects: dict[Seat, OrderedDict[Any, tuple[ClientError, str]]] = {}

    def _lock(self, seat: Seat) -> asyncio.Lock:
        lock = self._locks.get(seat)
        if lock is None:  # not setdefault: that made a lock at every move, to throw away
            lock = self._locks[seat] = asyncio.Lock()
        return lock

    def forget(self, room: Room) -> None:
        """A finished room: its seats' locks and memories go."""
        for player in room.games:
            self._locks.pop((room.id, player), None)
            self._rejects.pop((room.id, player), None)

    async def start_game(self, room: Room, player: str) -> None:
        """The game stream begins with game_started; whichever process comes first (the append
        at version 0 of any other finds it taken: no read first)."""
        game = room.games.get(player)
        if game is None or game.version > 0:
            return
        event = game_start_event(room, now=self.clock.now_ms())
        with contextlib.suppress(WrongExpectedVersion):
            await self.loop.append(game.stream, [event], expected_version=0)

    async def _sync(self, room: Room, game: Game) -> Game:
        """Fold the game up to what the store holds (started first if need be); a refold makes
        new games, so the current one is returned."""
        if game.version == 0 and room.status is RoomStatus.RACING and game.player in room.seats:
            # `started` may reach a fast client before the game streams are written.
            await self.start_game(room, game.player)
        await self.hub.sync(room)
        return room.games.get(game.player, game)

    def _answered(self, seat: Seat, game: Game, cid: Any, move: str) -> int | None:
        """A move id seen before: its version, or its refusal again (IdReused for another move)."""
        if cid in game.cids:
            if game.cid_moves.get(cid, move) != move:
                raise IdReused(f"move id {cid!r} was already used for another move")
            return game.cids[cid]
        rejected = self._rejects.get(seat)
        if rejected is not None and cid in rejected:
            refused, asked = rejected[cid]
            if asked != move:
                raise IdReused(f"move id {cid!r} was already used for another move")
            raise refused
        return None

    def _remember(self, seat: Seat, cid: Any, refused: ClientError, move: str) -> None:
        rejected = self._rejects.setdefault(seat, OrderedDict())
        rejected[cid] = (refused, move)
        while len(rejected) > _REJECT_MEMORY:
            rejected.popitem(last=False)

    async def move(self, room: Room, player: str, cid: Any, move: str) -> int:
        """Apply one move of the player's game; the new version (also for a resent id)."""
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        seat = (room.id, player)
        async with self._lock(seat):
            # The fold is usually current (this process wrote the game's last event), so the
            # first try skips the store round trip; a stale fold shows up as a conflict on
            # append, and a reject is only given after syncing.
            synced = False
            for _ in range(4):
                known = self._answered(seat, game, cid, move)
                if known is not None:
                    return known
                try:
                    event = decide_move(room, game, move, cid=cid, now=self.clock.now_ms())
                except ClientError as exc:
                    if not synced:
                        game, synced = await self._sync(room, game), True
                        continue
                    self._remember(seat, cid, exc, move)
                    raise
                try:
                    return await self.loop.append(
                        game.stream, [event], expected_version=game.version
                    )
                except WrongExpectedVersion:
                    game, synced = await self._sync(room, game), True
        raise ServerError("your game is changing too fast; try again")

    async def resign(self, room: Room, player: str, *, reason: str | None = None) -> None:
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        async with self._lock((room.id, player)):
            for _ in range(3):
                game = await self._sync(room, game)
                event = decide_resign(room, game, reason=reason, now=self.clock.now_ms())
                try:
                    await self.loop.append(game.stream, [event], expected_version=game.version)
                except WrongExpectedVersion:
                    continue
                return
        raise ServerError("your game is changing too fast; try again")

    async def hint(self, room: Room, player: str) -> Hint:
        """A move from the player's real position (the solver's, or the heuristic's when it
        proves no line), in solo practice only."""
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        game = await self._sync(room, game)
        check_hint(room, game)
        assert game.state is not None
        return await self.solver().hint(game.state, self.config.solver_max_nodes)

    def solver(self) -> SolverPool:
        if self._solver is None:
            raise ServerError("this server has no solver")
        return self._solver()
