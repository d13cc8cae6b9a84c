"""A new room: its deal drawn (a secret seed, a custom deck or a winnable one), the server's
limits checked, and its stream written at a fresh id homed on this worker."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from server.kernel.errors import TooManyLobbies, TooManyRooms
from server.kernel.placement import draw_room_id
from server.race.domain import decide as d
from server.race.domain.bot_seats import check_bots
from server.race.domain.events import RoomCreated, encode
from server.race.domain.model import Room, room_stream
from server.race.services.bot_seats import BotSeats
from server.race.services.directory import Directory
from server.race.services.game_commands import GameCommands
from server.race.services.hub import Hub
from server.race.services.loop import RoomLoop
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.store import StoredEvent
from shared.errors import ServerError, WrongExpectedVersion
from shared.protocol import BadField

DEFAULT_BOT_LEVEL = 3
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"

log = get_logger("server.race.services.creation")


def _fresh_id() -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))


class RoomCreation:
    """Rooms made on request, for a day's challenge attempt, or as a rematch's room."""

    def __init__(
        self,
        loop: RoomLoop,
        clock: Clock,
        config: Config,
        directory: Directory,
        games: GameCommands,
        hub: Hub,
        bots: BotSeats,
    ) -> None:
        self.loop = loop
        self.clock = clock
        self.config = config
        self.directory = directory
        self.games = games
        self.hub = hub  # a room made here is followed from its first event, not read back
        self.bots = bots

    async def create_room(
        self,
        msg: dict[str, Any],
        *,
        creator: str,
        members: tuple[str, ...] = (),
        tournament: str = "",
    ) -> Room:
        cfg = self.config
        variant = msg["variant"]
        deal = d.read_create_request(
            msg, max_players=cfg.max_players_per_room, allow_custom_deck=cfg.allow_custom_deck
        )
        bots = msg.get("bots", 0)
        check_bots(bots, capacity=deal.capacity)
        seed = deal.seed
        if seed is None and deal.deck is None and not deal.winnable:
            seed = secrets.token_hex(8)  # the usual room: a secret seed of the server's
        try:
            time_limit_ms = cfg.time_limit_ms(variant, msg.get("time_limit_ms"))
        except ValueError as exc:
            raise BadField(f"field 'time_limit_ms' must be {exc}", field="time_limit_ms") from None
        if await self.directory.live_count() >= cfg.max_rooms:
            raise TooManyRooms(f"this server already has {cfg.max_rooms} open rooms")
        if not members:  # a room the server makes for its racers is nobody's own lobby
            mine = await self.directory.lobbies_of(creator)
            if mine >= cfg.max_lobbies_per_session:
                raise TooManyLobbies(
                    f"you already have {mine} open lobbies: start or leave one first"
                )
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
            tournament=tournament,
        )
        room = await self._append_created(created)
        log.info(RoomCreated.TYPE, room=room.id, variant=variant, capacity=deal.capacity)
        for _ in range(bots):  # seated at once: the creator's lobby shows them
            await self.bots.add(room, by=creator, level=msg.get("bot_level", DEFAULT_BOT_LEVEL))
        return room

    async def create_daily(
        self, variant: str, *, seed: str, salt: str, tag: str, creator: str
    ) -> Room:
        """A daily challenge attempt's solo room, marked with the day."""
        return await self.create_attempt(variant, seed=seed, salt=salt, creator=creator, daily=tag)

    async def create_attempt(
        self,
        variant: str,
        *,
        seed: str,
        salt: str,
        creator: str,
        daily: str = "",
        challenge: str = "",
    ) -> Room:
        """A solo room for an attempt at a deal others play at other times (a day's daily, a
        challenge): its secret seed and salt (so its commitment is the deal's), the variant's
        time limit, unrated, marked with what it is an attempt at."""
        msg = {
            "variant": variant,
            "countdown_ms": 0,
            "rated": False,
            "daily": daily,
            "challenge": challenge,
        }
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
            # Homed on this worker (server.kernel.placement): its players and spectators,
            # naming it when they connect, are then served here with its creator.
            room_id = draw_room_id(_fresh_id, self.config.worker_index, self.config.workers)
            # A hint first, as for every timed phase: the lobby TTL must run even if we die;
            # and the room followed from before its first event (both in one round trip).
            stream, event = room_stream(room_id), encode(created)
            try:
                await asyncio.gather(self.directory.recheck_soon(room_id), self.hub.expect(room_id))
                await self.loop.append(stream, [event], expected_version=0)
            except BaseException as error:
                await self.hub.not_created(room_id)
                if isinstance(error, WrongExpectedVersion):
                    continue
                raise
            room = self.hub.adopt(room_id, [StoredEvent(stream, 1, event)])
            await self.directory.publish(room)
            return room
        raise ServerError("could not find a free room id")
