"""Commands: a request checked against the folded room, then appended with the expected version.

Commands never send to connections. Each reads the room from the hub (synced with the store
where a decision needs it), builds the events the rules allow, and appends them at the version
it decided on; a concurrent writer makes the append fail and the command decides again. The
hub folds the process's own appends on the spot, so a command returns with the room already
showing its effect. Besides the streams, commands keep the store's indexes: the room directory
(``list_rooms``), the seats of resume tokens, and a due-time hint the race clock corrects.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgpack

from server.clock import Clock
from server.config import Config
from server.errors import (
    CustomDeckDisabled,
    GameOver,
    IdReused,
    NoSuchRoom,
    NotAllowed,
    NotAPlayer,
    NotRacing,
    RoomFull,
    TooManyLobbies,
    TooManyRooms,
    WrongStatus,
)
from server.hub import Hub
from server.logging import get_logger
from server.metrics import Metrics
from server.names import unique_name
from server.projection import room_event
from server.race import RoomStatus, Trigger, commitment, deck_secret, next_status
from server.race import ranking as rank
from server.room import Game, Room, room_stream, token_hash
from server.solving import SolverPool
from server.store import EventStore
from shared import (
    DEAL_VERSION,
    canonical_seed,
    deal_deck,
    move_event,
    resign_event,
    start_event,
    validate_deck,
)
from shared.errors import ClientError, ServerError, WrongExpectedVersion
from shared.protocol import BadField
from shared.solver import Hint

ROOMS_INDEX = "rooms"  # room id -> created_at, value: the packed room summary
SEATS_INDEX = "seats"  # resume token hash -> joined at, value: the room id
DUE_INDEX = "due"  # room id -> when its next timer is due (a hint; the fold decides)
PROCESSES_INDEX = "processes"  # server process id -> its last heartbeat
LIVE_INDEX = "live"  # room id -> created_at, for every room not finished or closed


def lobbies_index(creator: str) -> str:
    """The lobbies a session has open: what ``--max-lobbies-per-session`` counts."""
    return f"lobbies.{creator}"


def held_index(process: str) -> str:
    """Rooms where ``process`` holds a seat's connection: what to look at if it dies."""
    return f"held.{process}"


ROOM_ID = re.compile(r"^[a-z0-9]{1,32}$")
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
_REJECT_MEMORY = 256
_RECHECK_MS = 5000  # a due hint written before a lifecycle append, in case we die right after
_LIFECYCLE = frozenset({"countdown_started", "race_started", "player_away"})
_ENDED = frozenset({RoomStatus.FINISHED.value, RoomStatus.CLOSED.value})
_ENDED_STATUSES = frozenset({RoomStatus.FINISHED, RoomStatus.CLOSED})

log = get_logger("server.commands")


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
    ) -> None:
        self.store = store
        # The solver pool, made on first use (its worker process costs memory): App owns it.
        self._solver = solver
        self.metrics = metrics if metrics is not None else Metrics()
        self.hub = hub
        self.clock = clock
        self.config = config
        self.process = process
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def _append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        """Every append goes through here: timed for ``arena_store_append_seconds``."""
        started = time.perf_counter()
        try:
            return await self.store.append(stream, events, expected_version=expected_version)
        finally:
            self.metrics.append_seconds.observe(time.perf_counter() - started)

    # ---- rooms -------------------------------------------------------------------------------

    async def room(self, room_id: str) -> Room:
        """The loaded room; NoSuchRoom if there is none. Room codes are read case-blind."""
        room_id = room_id.strip().lower()
        room = await self.hub.room(room_id) if ROOM_ID.match(room_id) else None
        if room is None or not room.meta or room.status is RoomStatus.CLOSED:
            raise NoSuchRoom(f"no room {room_id!r}")
        return room

    async def list_rooms(self) -> list[dict[str, Any]]:
        """The directory, finished rooms past their retention left out (and dropped)."""
        now = self.clock.now_ms()
        retention = self.store.retention
        summaries = []
        for entry in await self.store.index_range(ROOMS_INDEX):
            loaded = self.hub.rooms.get(entry.member)
            summary = (
                loaded.summary() if loaded is not None and loaded.meta else _unpack(entry.value)
            )
            if summary is None or summary["status"] == RoomStatus.CLOSED.value:
                continue
            finished_at = summary.get("finished_at")
            if (
                retention is not None
                and finished_at is not None
                and finished_at + retention * 1000 < now
            ):
                await self.store.index_remove(ROOMS_INDEX, entry.member)
                continue
            summary.pop("creator", None)
            summaries.append(summary)
        return summaries

    async def create_room(self, msg: dict[str, Any], *, creator: str) -> Room:
        cfg = self.config
        capacity = msg.get("capacity", min(4, cfg.max_players_per_room))
        if capacity > cfg.max_players_per_room:
            raise BadField(
                f"field 'capacity' must be <= {cfg.max_players_per_room}", field="capacity"
            )
        variant = msg["variant"]
        deck = msg.get("deck")
        winnable = bool(msg.get("winnable", False))
        if winnable and (deck is not None or "seed" in msg):
            chosen = "deck" if deck is not None else "seed"
            raise BadField(
                f"field 'winnable' asks for a secret seed: it cannot go with a {chosen}",
                field="winnable",
            )
        salt = secrets.token_hex(16)
        seed: str | None = None
        if deck is not None:
            if not cfg.allow_custom_deck:
                raise CustomDeckDisabled("this server does not accept explicit decks")
            deck = list(validate_deck(deck))
        elif "seed" in msg:
            seed = canonical_seed(msg["seed"])
        elif not winnable:
            seed = secrets.token_hex(8)
        try:
            time_limit_ms = cfg.time_limit_ms(variant, msg.get("time_limit_ms"))
        except ValueError as exc:
            raise BadField(f"field 'time_limit_ms' must be {exc}", field="time_limit_ms") from None
        # Counted, not read: reading the whole directory made each creation O(rooms) (a
        # 10,000-room fill did not finish, bench.recovery).
        if await self.store.index_count(LIVE_INDEX) >= cfg.max_rooms:
            raise TooManyRooms(f"this server already has {cfg.max_rooms} open rooms")
        mine = await self.store.index_range(lobbies_index(creator))
        if len(mine) >= cfg.max_lobbies_per_session:
            raise TooManyLobbies(
                f"you already have {len(mine)} open lobbies: start or leave one first"
            )
        if winnable:
            # Last, after every cheap refusal: drawing deals takes the solver a while.
            found = await self._solver_pool().winnable_seed(
                variant, cfg.solver_max_nodes, attempts=cfg.solver_attempts
            )
            seed = found.seed
            log.info("winnable_deal", variant=variant, attempts=found.attempts)
        secret = deck_secret(deck) if deck is not None else seed
        assert secret is not None
        event = room_event(
            "room_created",
            variant=variant,
            seed=seed,
            deck=deck,
            salt=salt,
            commitment=commitment(secret, salt),
            deal_version=DEAL_VERSION,
            capacity=capacity,
            countdown_ms=msg.get("countdown_ms", 3000),
            time_limit_ms=time_limit_ms,
            spectator_delay_ms=msg.get("spectator_delay_ms", 0),
            open_seed=deck is not None or "seed" in msg,
            winnable=winnable,
            creator=creator,
            at=self.clock.now_ms(),
        )
        for _ in range(5):
            room_id = "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))
            # A hint first, as for every timed phase: the lobby TTL must run even if we die.
            await self.store.index_put(DUE_INDEX, room_id, self.clock.now_ms() + _RECHECK_MS)
            try:
                await self._append(room_stream(room_id), [event], expected_version=0)
            except WrongExpectedVersion:
                continue
            room = await self.room(room_id)
            await self._publish(room)
            log.info("room_created", room=room_id, variant=variant, capacity=capacity)
            return room
        raise ServerError("could not find a free room id")

    def _solver_pool(self) -> SolverPool:
        if self._solver is None:
            raise ServerError("this server has no solver")
        return self._solver()

    async def _publish(self, room: Room) -> None:
        """Put the room's summary in the directory (after each of its room events)."""
        summary = room.summary()
        creator = room.meta.get("creator")
        summary["creator"] = creator
        created = int(room.meta["at"])
        store = self.store
        writes = [store.index_put(ROOMS_INDEX, room.id, created, msgpack.packb(summary))]
        if summary["status"] in _ENDED:
            writes.append(store.index_remove(LIVE_INDEX, room.id))
        else:
            writes.append(store.index_put(LIVE_INDEX, room.id, created))
        if creator:
            if summary["status"] == RoomStatus.LOBBY.value:
                writes.append(store.index_put(lobbies_index(creator), room.id, created))
            else:
                writes.append(store.index_remove(lobbies_index(creator), room.id))
        try:
            await asyncio.gather(*writes)  # one loop turn: one round trip (group commit)
        except Exception as exc:  # best effort: a stale directory entry heals on the next event
            log.warning("directory_failed", room=room.id, error=str(exc))

    async def _append_room(
        self, room: Room, build: Callable[[], list[dict[str, Any]]], attempts: int = 5
    ) -> int:
        """Append what ``build`` makes of the up-to-date room; decide again on a conflict."""
        for _ in range(attempts):
            await self.hub.sync(room)
            # What build decides on: the fold may move on during the await below (another
            # process's append, folded from its wake-up), and must not lend its version to a
            # decision made before it (two processes firing one countdown both appended
            # race_started).
            decided_on = room.version
            events = build()
            if not events:
                return room.version
            if any(e["type"] in _LIFECYCLE for e in events):
                await self.store.index_put(DUE_INDEX, room.id, self.clock.now_ms() + _RECHECK_MS)
            try:
                version = await self._append(room.stream, events, expected_version=decided_on)
            except WrongExpectedVersion:
                continue
            if room.version < version:
                await self.hub.sync(room)
            await self._publish(room)
            return version
        raise ServerError("the room is changing too fast; try again")

    # ---- seats -------------------------------------------------------------------------------

    async def join(
        self, room: Room, player: str, *, name: str, token: str, connection: str
    ) -> None:
        """Seat ``player`` (a session) on this connection; a seat it has already is kept, and
        taken over by this connection."""
        hashed = token_hash(token)

        def build() -> list[dict[str, Any]]:
            if player in room.seats:
                return self._back(room, player, connection)
            if room.status is not RoomStatus.LOBBY:
                raise WrongStatus(f"room {room.id} is {room.status.value}: join as a spectator")
            if len(room.seats) >= int(room.meta["capacity"]):
                raise RoomFull(f"room {room.id} is full")
            return [
                room_event(
                    "player_joined",
                    player=player,
                    name=unique_name(name, room.names()),
                    token_hash=hashed,
                    connection=connection,
                    at=self.clock.now_ms(),
                )
            ]

        # The seat's index entry goes first: a resume finds the room, then checks the seat.
        await self.store.index_put(SEATS_INDEX, hashed, self.clock.now_ms(), room.id.encode())
        await self._hold(room)
        await self._append_room(room, build)
        log.info("player_joined", room=room.id, player=player)

    def _back(self, room: Room, player: str, connection: str) -> list[dict[str, Any]]:
        seat = room.seats.get(player)
        if seat is None or seat.connection == connection or room.status in _ENDED_STATUSES:
            return []
        return [
            room_event("player_back", player=player, connection=connection, at=self.clock.now_ms())
        ]

    async def _hold(self, room: Room) -> None:
        """Note that this process holds a seat's connection in the room (see ``gone``)."""
        await self.store.index_put(held_index(self.process), room.id, self.clock.now_ms())

    async def present(self, room: Room, player: str, connection: str) -> None:
        """A seat's connection is back (a resume): everyone sees the racer connected again."""
        await self._hold(room)
        await self._append_room(room, lambda: self._back(room, player, connection))

    async def away(
        self, room: Room, player: str, connection: str, *, at: int | None = None
    ) -> None:
        """A seat's connection went away; nothing if the seat has moved to another one."""

        def build() -> list[dict[str, Any]]:
            seat = room.seats.get(player)
            if seat is None or seat.connection != connection or room.status in _ENDED_STATUSES:
                return []
            when = self.clock.now_ms() if at is None else at
            return [room_event("player_away", player=player, connection=connection, at=when)]

        await self._append_room(room, build)

    async def gone(self, process: str, last_seen: int) -> None:
        """A server process stopped beating: its seats' connections went away when it did."""
        prefix = process + "."
        for entry in await self.store.index_range(held_index(process)):
            room = await self.hub.room(entry.member)
            if room is not None:
                await self.hub.sync(room)
                for seat in list(room.seats.values()):
                    if seat.connection is not None and seat.connection.startswith(prefix):
                        await self.away(room, seat.player, seat.connection, at=last_seen)
            await self.store.index_remove(held_index(process), entry.member)
        await self.store.index_remove(PROCESSES_INDEX, process)

    async def abandon(self, room: Room, player: str) -> None:
        """Resign a racer away longer than the grace (the race clock calls it when due)."""
        await self.hub.sync(room)
        seat = room.seats.get(player)
        grace_ms = int(self.config.abandon_grace_s * 1000)
        if seat is None or seat.away_since is None or grace_ms <= 0:
            return
        if self.clock.now_ms() < seat.away_since + grace_ms:
            return
        with contextlib.suppress(NotRacing, GameOver):
            await self.resign(room, player, reason="abandoned")
            log.info("racer_abandoned", room=room.id, player=player)

    async def close_idle(self, room: Room) -> None:
        """Close a lobby nobody has been connected to for the lobby TTL."""
        ttl_ms = int(self.config.lobby_ttl_s * 1000)

        def build() -> list[dict[str, Any]]:
            now = self.clock.now_ms()
            if room.status is not RoomStatus.LOBBY or room.idle_since is None or ttl_ms <= 0:
                return []
            if now < room.idle_since + ttl_ms:
                return []
            return [room_event("room_closed", reason="idle", at=now)]

        await self._append_room(room, build)

    async def resume(self, token: str) -> tuple[Room, str] | None:
        """The room and player of a resume token's latest seat; None if it has none."""
        hashed = token_hash(token)
        entry = await self.store.index_get(SEATS_INDEX, hashed)
        if entry is None:
            return None
        room = await self.hub.room(entry.value.decode())
        if room is None:  # expired: the seat is gone with it
            await self.store.index_remove(SEATS_INDEX, hashed)
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
                await self.resign(room, player)
            return

        def build() -> list[dict[str, Any]]:
            if player not in room.seats or room.status not in (
                RoomStatus.LOBBY,
                RoomStatus.COUNTDOWN,
            ):
                return []
            now = self.clock.now_ms()
            events = [room_event("player_left", player=player, at=now)]
            if room.status is RoomStatus.COUNTDOWN and len(room.seats) == 1:
                events.append(room_event("countdown_cancelled", at=now))
            return events

        await self._append_room(room, build)

    async def start(self, room: Room, player: str) -> None:
        def build() -> list[dict[str, Any]]:
            next_status(room.status, Trigger.START)  # WrongStatus unless in the lobby
            if player not in room.seats:
                raise NotAPlayer("you have no seat in this room")
            now = self.clock.now_ms()
            go_at = now + int(room.meta["countdown_ms"])
            return [room_event("countdown_started", at=now, go_at=go_at)]

        await self._append_room(room, build)

    # ---- games -------------------------------------------------------------------------------

    def _lock(self, room: Room, player: str) -> asyncio.Lock:
        key = (room.id, player)
        lock = self._locks.get(key)
        if lock is None:  # not setdefault: that made a lock at every move, to throw away
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def _sync_game(self, room: Room, game: Game) -> None:
        """Fold the game up to what the store holds; a racer's game is started first if need be."""
        if game.version == 0 and room.status is RoomStatus.RACING and game.player in room.seats:
            # `started` may reach a fast client before the game streams are written.
            await self.start_game(room, game.player)
        await self.hub.sync(room)

    async def move(self, room: Room, player: str, cid: Any, move: str) -> int:
        """Apply one move of the player's game; the new version (also for a resent id)."""
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        async with self._lock(room, player):
            # The fold is usually current (this process wrote the game's last event), so the
            # first try skips the store round trip; a stale fold shows up as a conflict on
            # append, and a reject is only given after syncing.
            synced = False
            for _ in range(4):
                if cid in game.cids:
                    if game.cid_moves.get(cid, move) != move:
                        raise IdReused(f"move id {cid!r} was already used for another move")
                    return game.cids[cid]
                if cid in game.rejects:
                    refused, asked = game.rejects[cid]
                    if asked != move:
                        raise IdReused(f"move id {cid!r} was already used for another move")
                    raise refused
                try:
                    event = self._move_event(room, game, move)
                except ClientError as exc:
                    if not synced:
                        await self._sync_game(room, game)
                        game = room.games.get(player, game)  # a refold makes new games
                        synced = True
                        continue
                    game.rejects[cid] = (exc, move)
                    while len(game.rejects) > _REJECT_MEMORY:
                        game.rejects.popitem(last=False)
                    raise
                event["cid"] = cid
                try:
                    version = await self._append(
                        game.stream, [event], expected_version=game.version
                    )
                except WrongExpectedVersion:
                    await self._sync_game(room, game)
                    game = room.games.get(player, game)
                    synced = True
                    continue
                game.cids[cid] = version
                return version
        raise ServerError("your game is changing too fast; try again")

    def _move_event(self, room: Room, game: Game, move: str) -> dict[str, Any]:
        """The event of ``move`` in the game as folded, or why not."""
        now = self.clock.now_ms()
        if room.status is not RoomStatus.RACING or (
            room.ends_at is not None and now >= room.ends_at
        ):
            raise NotRacing(f"the race is {room.status.value}, not racing")
        if game.state is None:
            raise NotRacing("your game has not started yet")
        if game.progress.status.done:
            raise GameOver(f"your game is {game.progress.status.value}")
        return move_event(game.state, move, at=now)

    async def hint(self, room: Room, player: str) -> Hint:
        """A move from the player's real position (the solver's, or the heuristic's when it
        proves no line), in solo practice only: in a race a hint would be help the other
        racers do not get."""
        if int(room.meta["capacity"]) != 1:
            raise NotAllowed("hints are for solo practice")
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        await self._sync_game(room, game)
        if room.status is not RoomStatus.RACING or game.state is None:
            raise NotRacing(f"the race is {room.status.value}, not racing")
        if game.progress.status.done:
            raise GameOver(f"your game is {game.progress.status.value}")
        return await self._solver_pool().hint(game.state, self.config.solver_max_nodes)

    async def resign(self, room: Room, player: str, *, reason: str | None = None) -> None:
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        async with self._lock(room, player):
            for _ in range(3):
                await self._sync_game(room, game)
                game = room.games.get(player, game)
                now = self.clock.now_ms()
                if room.status is not RoomStatus.RACING or game.state is None:
                    raise NotRacing(f"the race is {room.status.value}, not racing")
                if game.progress.status.done:
                    raise GameOver(f"your game is {game.progress.status.value}")
                event = resign_event(at=now)
                if reason is not None:
                    event["reason"] = reason
                try:
                    await self._append(game.stream, [event], expected_version=game.version)
                except WrongExpectedVersion:
                    continue
                return
        raise ServerError("your game is changing too fast; try again")

    # ---- what the race clock asks for ----------------------------------------------------------

    async def go(self, room: Room) -> None:
        """The countdown is over: the race starts (whichever process comes first)."""

        def build() -> list[dict[str, Any]]:
            if room.status is not RoomStatus.COUNTDOWN:
                return []
            now = self.clock.now_ms()
            limit = int(room.meta["time_limit_ms"])
            return [room_event("race_started", at=now, ends_at=now + limit if limit else None)]

        await self._append_room(room, build)

    async def finish(self, room: Room, reason: str) -> None:
        def build() -> list[dict[str, Any]]:
            if room.status is not RoomStatus.RACING:
                return []
            if reason == "all_done" and not room.all_done():
                return []
            entrants = room.entrants()
            return [
                room_event(
                    "race_finished", at=self.clock.now_ms(), reason=reason, ranking=rank(entrants)
                )
            ]

        await self._append_room(room, build)

    async def finish_all_done(self, room: Room) -> None:
        await self.finish(room, "all_done")

    async def start_games(self, room: Room) -> None:
        """Every racer's game stream begins with game_started; whichever process comes first."""
        for player in list(room.seats):
            await self.start_game(room, player)

    async def start_game(self, room: Room, player: str) -> None:
        game = room.games.get(player)
        if game is None or game.version > 0:
            return
        if await self.store.last_version(game.stream) > 0:
            return
        meta = room.meta
        deck = meta.get("deck") or deal_deck(meta["variant"], meta["seed"])
        event = start_event(meta["variant"], deck, at=room.started_at or self.clock.now_ms())
        with contextlib.suppress(WrongExpectedVersion):
            await self._append(game.stream, [event], expected_version=0)

    async def retire(self, room: Room) -> None:
        """A finished room: its streams expire after the retention."""
        for stream in (room.stream, *(g.stream for g in room.games.values())):
            await self.store.retire(stream)
        for player in room.games:
            self._locks.pop((room.id, player), None)
        await self._publish(room)


def _unpack(value: bytes) -> dict[str, Any] | None:
    try:
        summary = msgpack.unpackb(value)
    except Exception:
        return None
    return summary if isinstance(summary, dict) and "id" in summary else None
