"""Room commands: a request decided against the folded room, then appended by the room loop.

Commands never send to connections. Each binds a pure decision (``server.domain.decide``) to
its request and hands it to ``RoomLoop.run``, which syncs the room, decides at the time of the
append and decides again on a conflict. Game commands (moves, resignations, hints) are
``GameCommands`` (``self.games``); the indexes are the directory's and presence's.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Callable
from typing import Any

from server.domain import decide as d
from server.domain.accounts import fold_name
from server.domain.errors import (
    GameOver,
    NoSuchRoom,
    NotRacing,
    TooManyLobbies,
    TooManyRooms,
    WrongStatus,
)
from server.domain.events import PlayerJoined, RoomCreated, encode
from server.domain.lifecycle import RoomStatus
from server.domain.model import Room, room_stream, token_hash
from server.domain.placement import draw_room_id
from server.rooms.directory import Directory
from server.rooms.game_commands import GameCommands
from server.rooms.hub import Hub
from server.rooms.presence import Presence
from server.rooms.room_loop import RoomLoop
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.metrics import Metrics
from server.runtime.solver_pool import SolverPool
from server.store import EventStore
from shared.errors import ClientError, ServerError, WrongExpectedVersion
from shared.protocol import BadField

ROOM_ID = re.compile(r"^[a-z0-9]{1,32}$")
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"


def _fresh_id() -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))


log = get_logger("server.rooms.commands")


class Commands:
    """Every request that changes a room, and the queries that read the directory."""

    def __init__(
        self,
        store: EventStore,
        hub: Hub,
        clock: Clock,
        config: Config,
        *,
        process: str,
        metrics: Metrics | None = None,
        solver: Callable[[], SolverPool] | None = None,
        keep_finished: bool = False,
    ) -> None:
        self.hub = hub
        self.keep_finished = keep_finished  # finished races go to the archive, not expire
        self.clock = clock
        self.config = config
        self.metrics = metrics if metrics is not None else Metrics()
        self.directory = Directory(store, clock, hub.archive)
        self.presence = Presence(store, clock, process)
        self.loop = RoomLoop(store, hub, clock, self.directory, self.metrics)
        self.games = GameCommands(self.loop, hub, clock, config, solver)

    async def room(self, room_id: str) -> Room:
        """The loaded room; NoSuchRoom if there is none. Room codes are read case-blind."""
        room_id = room_id.strip().lower()
        room = await self.hub.room(room_id) if ROOM_ID.match(room_id) else None
        if room is None or room.meta is None or room.status is RoomStatus.CLOSED:
            raise NoSuchRoom(f"no room {room_id!r}")
        return room

    async def list_rooms(self) -> list[dict[str, Any]]:
        return await self.directory.list_rooms(self.hub.rooms)

    async def create_room(
        self, msg: dict[str, Any], *, creator: str, members: tuple[str, ...] = ()
    ) -> Room:
        cfg = self.config
        variant = msg["variant"]
        deal = d.read_create_request(
            msg, max_players=cfg.max_players_per_room, allow_custom_deck=cfg.allow_custom_deck
        )
        seed = deal.seed
        if seed is None and deal.deck is None and not deal.winnable:
            seed = secrets.token_hex(8)  # the usual room: a secret seed of the server's
        try:
            time_limit_ms = cfg.time_limit_ms(variant, msg.get("time_limit_ms"))
        except ValueError as exc:
            raise BadField(f"field 'time_limit_ms' must be {exc}", field="time_limit_ms") from None
        if await self.directory.live_count() >= cfg.max_rooms:
            raise TooManyRooms(f"this server already has {cfg.max_rooms} open rooms")
        mine = await self.directory.lobbies_of(creator)
        if mine >= cfg.max_lobbies_per_session:
            raise TooManyLobbies(f"you already have {mine} open lobbies: start or leave one first")
        if deal.winnable:
            # Last, after every cheap refusal: drawing deals takes the solver a while.
            found = await self.games.solver().winnable_seed(
                variant, cfg.winnable_max_nodes, attempts=cfg.solver_attempts
            )
            seed = found.seed
            log.info("winnable_deal", variant=variant, attempts=found.attempts)
        created = d.decide_create(
            msg,
            capacity=deal.capacity,
            deck=deal.deck,
            seed=seed,
            salt=secrets.token_hex(16),
            time_limit_ms=time_limit_ms,
            creator=creator,
            now=self.clock.now_ms(),
            members=members,
        )
        room = await self._append_created(created)
        log.info(RoomCreated.TYPE, room=room.id, variant=variant, capacity=deal.capacity)
        return room

    async def create_daily(
        self, variant: str, *, seed: str, salt: str, tag: str, creator: str
    ) -> Room:
        """A daily challenge attempt's solo room: the day's secret seed and salt (so its
        commitment is the day's), the variant's time limit, unrated, marked with the day."""
        msg = {"variant": variant, "countdown_ms": 0, "rated": False, "daily": tag}
        created = d.decide_create(
            msg,
            capacity=1,
            deck=None,
            seed=seed,
            salt=salt,
            time_limit_ms=self.config.time_limit_ms(variant, None),
            creator=creator,
            now=self.clock.now_ms(),
            # Its one seat is the attempt's: anyone else seated would play the day's deal
            # (the directory lists the room between its creation and the player's join).
            members=(creator,),
        )
        return await self._append_created(created)

    async def _append_created(self, created: RoomCreated) -> Room:
        """The new room's stream at a fresh id (a taken one is drawn again)."""
        for _ in range(5):
            # Homed on this worker (server.domain.placement): its players and spectators,
            # naming it when they connect, are then served here with its creator.
            room_id = draw_room_id(_fresh_id, self.config.worker_index, self.config.workers)
            # A hint first, as for every timed phase: the lobby TTL must run even if we die.
            await self.directory.recheck_soon(room_id)
            try:
                await self.loop.append(room_stream(room_id), [encode(created)], expected_version=0)
            except WrongExpectedVersion:
                continue
            room = await self.room(room_id)
            await self.directory.publish(room)
            return room
        raise ServerError("could not find a free room id")

    # ---- seats -------------------------------------------------------------------------------

    async def join(
        self,
        room: Room,
        player: str,
        *,
        name: str,
        token: str,
        connection: str,
        account: str | None = None,
    ) -> None:
        """Seat ``player`` (a session) on this connection; a seat it has already is kept, and
        taken over by this connection."""
        hashed = token_hash(token)
        # The seat's index entry goes first: a resume finds the room, then checks the seat.
        await self.directory.seat(hashed, room.id)
        if account is not None:
            await self.directory.seat_account(fold_name(account), room.id)
        await self.presence.hold(room.id)
        await self.loop.run(
            room,
            lambda now: d.decide_join(
                room,
                player,
                name=name,
                token_hash=hashed,
                connection=connection,
                now=now,
                account=account,
            ),
        )
        log.info(PlayerJoined.TYPE, room=room.id, player=player)

    async def racing(self, account: str) -> str | None:
        """The room ``account`` holds a seat in that is not over yet (on any process), if any."""
        room_id = await self.directory.room_of_account(fold_name(account))
        if room_id is None:
            return None
        try:
            room = await self.room(room_id)
        except NoSuchRoom:
            return None
        await self.hub.sync(room)
        if room.status in (RoomStatus.FINISHED, RoomStatus.CLOSED):
            return None
        seated = any(
            s.account is not None and fold_name(s.account) == fold_name(account)
            for s in room.seats.values()
        )
        return room_id if seated else None

    async def present(self, room: Room, player: str, connection: str) -> None:
        """A seat's connection is back (a resume): everyone sees the racer connected again."""
        await self.presence.hold(room.id)
        await self.loop.run(
            room, lambda now: d.decide_back(room, player, connection=connection, now=now)
        )

    async def away(
        self, room: Room, player: str, connection: str, *, at: int | None = None
    ) -> None:
        """A seat's connection went away; nothing if the seat has moved to another one."""
        await self.loop.run(
            room,
            lambda now: d.decide_away(
                room, player, connection=connection, at=now if at is None else at
            ),
        )

    async def gone(self, process: str, last_seen: int) -> None:
        """A server process stopped beating: its seats' connections went away when it did."""
        prefix = process + "."
        for room_id in await self.presence.held_by(process):
            room = await self.hub.room(room_id)
            if room is not None:
                await self.hub.sync(room)
                for seat in list(room.seats.values()):
                    if seat.connection is not None and seat.connection.startswith(prefix):
                        await self.away(room, seat.player, seat.connection, at=last_seen)
            await self.presence.release(process, room_id)
        await self.presence.forget(process)

    async def abandon(self, room: Room, player: str) -> None:
        """Resign a racer away longer than the grace (the race clock calls it when due)."""
        await self.hub.sync(room)
        grace_ms = int(self.config.abandon_grace_s * 1000)
        if not d.abandoned(room, player, grace_ms=grace_ms, now=self.clock.now_ms()):
            return
        with contextlib.suppress(NotRacing, GameOver):
            await self.games.resign(room, player, reason="abandoned")
            log.info("racer_abandoned", room=room.id, player=player)

    async def close_idle(self, room: Room) -> None:
        """Close a lobby nobody has been connected to for the lobby TTL."""
        ttl_ms = int(self.config.lobby_ttl_s * 1000)
        await self.loop.run(room, lambda now: d.decide_close_idle(room, ttl_ms=ttl_ms, now=now))

    async def close_unfilled(self, room: Room) -> None:
        """Close a formed room that not enough of its members sat down in."""
        await self.loop.run(room, lambda now: d.decide_close_unfilled(room, now=now))

    async def resume(self, token: str) -> tuple[Room, str] | None:
        """The room and player of a resume token's latest seat; None if it has none."""
        hashed = token_hash(token)
        room_id = await self.directory.room_of_seat(hashed)
        if room_id is None:
            return None
        room = await self.hub.room(room_id)
        if room is None:  # expired: the seat is gone with it
            await self.directory.drop_seat(hashed)
            return None
        await self.hub.sync(room)
        for seat in room.seats.values():
            if seat.token_hash == hashed:
                return room, seat.player
        return None

    async def leave(self, room: Room, player: str) -> None:
        """A seated player leaves: frees the seat before the race, resigns during it."""
        if room.status is RoomStatus.RACING:
            with contextlib.suppress(ClientError):
                await self.games.resign(room, player)
            return
        await self.loop.run(room, lambda now: d.decide_leave(room, player, now=now))

    async def rematch(self, room: Room, player: str, *, creator: str) -> str:
        """The room of ``room``'s rematch: the one offered already, or a new one like it that
        this request offers. Two racers asking at once may both make one: the one offered
        first is everyone's, and the other, which nobody has sat in, is closed."""
        await self.hub.sync(room)
        if room.archived:
            raise WrongStatus("this race is archived: it can be watched and replayed only")
        d.check_rematch(room, player)
        if room.rematch is None:
            made = await self.create_room(d.rematch_request(room), creator=creator)
            await self.loop.run(
                room, lambda now: d.decide_rematch(room, player, rematch=made.id, now=now)
            )
            if room.rematch != made.id:
                await self.loop.run(made, lambda now: d.decide_close_unused(made, now=now))
            log.info("rematch_offered", room=room.id, rematch=room.rematch, player=player)
        assert room.rematch is not None  # offered: by this request or one before it
        return room.rematch

    async def start(self, room: Room, player: str) -> None:
        await self.loop.run(room, lambda now: d.decide_start(room, player, now=now))

    # ---- what the race clock asks for ----------------------------------------------------------

    async def go(self, room: Room) -> None:
        """The countdown is over: the race starts (whichever process comes first)."""
        await self.loop.run(room, lambda now: d.decide_go(room, now=now))

    async def finish(self, room: Room, reason: str) -> None:
        await self.loop.run(room, lambda now: d.decide_finish(room, reason, now=now))

    async def finish_all_done(self, room: Room) -> None:
        await self.finish(room, "all_done")

    async def start_games(self, room: Room) -> None:
        """Every racer's game stream begins with game_started; whichever process comes first."""
        for player in list(room.seats):
            await self.games.start_game(room, player)

    async def retire(self, room: Room) -> None:
        """A finished room: its streams expire after the retention, unless the archive keeps
        finished races (the archiver then removes them once they are archived)."""
        if room.archived:
            return
        store = self.loop.store
        if not (self.keep_finished and room.finished is not None):
            for stream in (room.stream, *(g.stream for g in room.games.values())):
                await store.retire(stream)
        self.games.forget(room)
        await self.directory.publish(room)
