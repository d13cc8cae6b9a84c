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
from collections.abc import Callable
from typing import Any

import msgpack

from server.clock import Clock
from server.config import Config
from server.errors import (
    CustomDeckDisabled,
    GameOver,
    NoSuchRoom,
    NotAPlayer,
    NotRacing,
    RoomFull,
    TooManyRooms,
    WrongStatus,
)
from server.hub import Hub
from server.logging import get_logger
from server.projection import room_event
from server.race import RoomStatus, Trigger, commitment, deck_secret, next_status
from server.race import ranking as rank
from server.room import Game, Room, room_stream, token_hash
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

ROOMS_INDEX = "rooms"  # room id -> created_at, value: the packed room summary
SEATS_INDEX = "seats"  # resume token hash -> joined at, value: the room id
DUE_INDEX = "due"  # room id -> when its next timer is due (a hint; the fold decides)

ROOM_ID = re.compile(r"^[a-z0-9]{1,32}$")
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
_REJECT_MEMORY = 256
_RECHECK_MS = 5000  # a due hint written before a lifecycle append, in case we die right after
_LIFECYCLE = frozenset({"countdown_started", "race_started"})

log = get_logger("server.commands")


class Commands:
    """Every request that changes a room, and the queries that read the directory."""

    def __init__(self, store: EventStore, hub: Hub, clock: Clock, config: Config) -> None:
        self.store = store
        self.hub = hub
        self.clock = clock
        self.config = config
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    # ---- rooms -------------------------------------------------------------------------------

    async def room(self, room_id: str) -> Room:
        """The loaded room; NoSuchRoom if there is none."""
        room = await self.hub.room(room_id) if ROOM_ID.match(room_id) else None
        if room is None or not room.meta:
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
            if summary is None:
                continue
            finished_at = summary.get("finished_at")
            if (
                retention is not None
                and finished_at is not None
                and finished_at + retention * 1000 < now
            ):
                await self.store.index_remove(ROOMS_INDEX, entry.member)
                continue
            summaries.append(summary)
        return summaries

    async def live_rooms(self) -> int:
        """Rooms not finished, by the directory."""
        rooms = await self.list_rooms()
        return sum(1 for r in rooms if r["status"] != RoomStatus.FINISHED.value)

    async def create_room(self, msg: dict[str, Any]) -> Room:
        cfg = self.config
        capacity = msg.get("capacity", min(4, cfg.max_players_per_room))
        if capacity > cfg.max_players_per_room:
            raise BadField(
                f"field 'capacity' must be <= {cfg.max_players_per_room}", field="capacity"
            )
        variant = msg["variant"]
        deck = msg.get("deck")
        salt = secrets.token_hex(16)
        seed: str | None
        if deck is not None:
            if not cfg.allow_custom_deck:
                raise CustomDeckDisabled("this server does not accept explicit decks")
            deck = list(validate_deck(deck))
            seed = None
            secret = deck_secret(deck)
        else:
            seed = canonical_seed(msg["seed"]) if "seed" in msg else secrets.token_hex(8)
            secret = seed
        if await self.live_rooms() >= cfg.max_rooms:
            raise TooManyRooms(f"this server already has {cfg.max_rooms} open rooms")
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
            time_limit_ms=msg.get("time_limit_ms", 0),
            spectator_delay_ms=msg.get("spectator_delay_ms", 0),
            at=self.clock.now_ms(),
        )
        for _ in range(5):
            room_id = "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))
            try:
                await self.store.append(room_stream(room_id), [event], expected_version=0)
            except WrongExpectedVersion:
                continue
            room = await self.room(room_id)
            await self._publish(room)
            log.info("room_created", room=room_id, variant=variant, capacity=capacity)
            return room
        raise ServerError("could not find a free room id")

    async def _publish(self, room: Room) -> None:
        """Put the room's summary in the directory (after each of its room events)."""
        summary = room.summary()
        try:
            await self.store.index_put(
                ROOMS_INDEX, room.id, int(room.meta["at"]), msgpack.packb(summary)
            )
        except Exception as exc:  # best effort: a stale directory entry heals on the next event
            log.warning("directory_failed", room=room.id, error=str(exc))

    async def _append_room(
        self, room: Room, build: Callable[[], list[dict[str, Any]]], attempts: int = 5
    ) -> int:
        """Append what ``build`` makes of the up-to-date room; decide again on a conflict."""
        for _ in range(attempts):
            await self.hub.sync(room)
            events = build()
            if not events:
                return room.version
            if any(e["type"] in _LIFECYCLE for e in events):
                await self.store.index_put(DUE_INDEX, room.id, self.clock.now_ms() + _RECHECK_MS)
            try:
                version = await self.store.append(
                    room.stream, events, expected_version=room.version
                )
            except WrongExpectedVersion:
                continue
            if room.version < version:
                await self.hub.sync(room)
            await self._publish(room)
            return version
        raise ServerError("the room is changing too fast; try again")

    # ---- seats -------------------------------------------------------------------------------

    async def join(self, room: Room, player: str, *, name: str, token: str) -> None:
        """Seat ``player`` (a session) in the room; a seat it has already is kept."""
        hashed = token_hash(token)

        def build() -> list[dict[str, Any]]:
            if player in room.seats:
                return []
            if room.status is not RoomStatus.LOBBY:
                raise WrongStatus(f"room {room.id} is {room.status.value}: join as a spectator")
            if len(room.seats) >= int(room.meta["capacity"]):
                raise RoomFull(f"room {room.id} is full")
            return [
                room_event(
                    "player_joined",
                    player=player,
                    name=name,
                    token_hash=hashed,
                    at=self.clock.now_ms(),
                )
            ]

        # The seat's index entry goes first: a resume finds the room, then checks the seat.
        await self.store.index_put(SEATS_INDEX, hashed, self.clock.now_ms(), room.id.encode())
        await self._append_room(room, build)
        log.info("player_joined", room=room.id, player=player)

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
        return self._locks.setdefault((room.id, player), asyncio.Lock())

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
                    return game.cids[cid]
                if cid in game.rejects:
                    raise game.rejects[cid]
                try:
                    event = self._move_event(room, game, move)
                except ClientError as exc:
                    if not synced:
                        await self._sync_game(room, game)
                        synced = True
                        continue
                    game.rejects[cid] = exc
                    while len(game.rejects) > _REJECT_MEMORY:
                        game.rejects.popitem(last=False)
                    raise
                event["cid"] = cid
                try:
                    version = await self.store.append(
                        game.stream, [event], expected_version=game.version
                    )
                except WrongExpectedVersion:
                    await self._sync_game(room, game)
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

    async def resign(self, room: Room, player: str) -> None:
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        async with self._lock(room, player):
            for _ in range(3):
                await self._sync_game(room, game)
                now = self.clock.now_ms()
                if room.status is not RoomStatus.RACING or game.state is None:
                    raise NotRacing(f"the race is {room.status.value}, not racing")
                if game.progress.status.done:
                    raise GameOver(f"your game is {game.progress.status.value}")
                try:
                    await self.store.append(
                        game.stream, [resign_event(at=now)], expected_version=game.version
                    )
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
            await self.store.append(game.stream, [event], expected_version=0)

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
