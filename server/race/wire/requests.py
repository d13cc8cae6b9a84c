"""The room requests of a connection: list, create, join, leave, start, move, resign, hint,
watch, rematch. Each checks who the connection is in the room, calls a command, and answers.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from server.kernel.errors import AlreadyInRoom, NotAllowed, NotAPlayer, NotInRoom, NotYourGame
from server.kernel.names import seat_account
from server.net.router import Handler, Link
from server.race.domain.export import daily_hidden
from server.race.domain.model import Room, game_stream
from server.race.services.commands import Commands
from server.race.services.creation import DEFAULT_BOT_LEVEL
from server.race.wire.audience import Member, Peer, Role
from server.race.wire.delivery import Delivery
from server.runtime.logging import bind
from server.runtime.metrics import Metrics
from shared import protocol as p

ViewCheck = Callable[[Room, "str | None"], Awaitable[None]]
"""Whether a reader (an account's folded name, None for a guest) may watch, replay or export a
room's games: NotAllowed if not. A feature that holds a room's games back (a challenge until
it is over) gives the race one."""


async def anyone_may_view(room: Room, reader: str | None) -> None:
    """The view check of a server whose rooms nothing else holds back."""


@dataclass(frozen=True, slots=True)
class Race:
    """The race's parts a connection's requests use, passed in by the app: every feature
    that seats or shows a room goes through them."""

    commands: Commands
    delivery: Delivery
    metrics: Metrics
    check_view: ViewCheck = anyone_may_view


class Session(Link, Peer, Protocol):
    """What the requests need of their connection."""

    @property
    def account(self) -> str | None:
        """The logged-in account's name, None for a guest."""

    @property
    def account_id(self) -> str | None:
        """The logged-in account's id, None for a guest."""

    def written_now(self) -> None: ...


def room_requests(session: Session, race: Race) -> dict[str, Handler]:
    """The handlers of the room requests, by message type."""
    r = RoomRequests(session, race)
    return {
        p.LIST_ROOMS: r.on_list_rooms,
        p.CREATE_ROOM: r.on_create_room,
        p.JOIN: r.on_join,
        p.LEAVE: r.on_leave,
        p.START: r.on_start,
        p.MOVE: r.on_move,
        p.RESIGN: r.on_resign,
        p.WATCH: r.on_watch,
        p.HINT: r.on_hint,
        p.REMATCH: r.on_rematch,
        p.ADD_BOT: r.on_add_bot,
    }


class RoomRequests:
    def __init__(self, session: Session, race: Race) -> None:
        self.s = session
        self.race = race

    def _seated(self) -> tuple[Room, Member, str]:
        found = self.race.delivery.member(self.s)
        if found is None:
            raise NotAPlayer("you have no seat: join a room as a player")
        room, member = found
        if member.role != Role.PLAYER or member.player is None:
            raise NotAPlayer("spectators cannot play")
        return room, member, member.player

    async def on_list_rooms(self, msg: dict[str, Any]) -> None:
        rooms = await self.race.commands.list_rooms()
        for summary in rooms:
            summary["spectators"] = self.race.delivery.spectators_here(summary["id"])
        self.s.reply(msg, {"type": p.ROOMS, "rooms": rooms})

    async def on_create_room(self, msg: dict[str, Any]) -> None:
        room = await self.race.commands.create_room(msg, creator=self.s.session)
        self.s.reply(msg, {"type": p.ROOM, "room": self.race.delivery.room_state(room)})

    async def on_join(self, msg: dict[str, Any]) -> None:
        role = Role(msg.get("role", "player"))
        await self.join(msg["room"], role, ref=msg.get("ref"))

    async def join(self, room_id: str, role: Role, *, ref: Any = None) -> tuple[Room, Member]:
        if self.race.delivery.member(self.s) is not None:
            raise AlreadyInRoom("leave your room first")
        room = await self.race.commands.room(room_id)
        if role != Role.PLAYER and daily_hidden(room, now=self.race.commands.clock.now_ms()):
            # Everyone plays the day's deal at a time of their own: nobody watches an attempt
            # (or replays it) before the day is over.
            raise NotAllowed("a daily challenge attempt is shown only once its day is over")
        if role != Role.PLAYER:
            # Nobody watches (or replays) a challenge's attempt before playing their own, or
            # before the challenge is over: every attempt is at the same deal.
            await self.race.check_view(room, self.s.account_id)
        player = self.s.session if role == Role.PLAYER else None
        if player is not None:
            await self.race.commands.join(
                room,
                player,
                name=self.s.name,
                token=self.s.token,
                connection=self.s.connection_id,
                account=seat_account(self.s.account, self.s.account_id),
            )
            if self.race.delivery.member(self.s) is not None:  # joined twice concurrently
                raise AlreadyInRoom("leave your room first")
        while room.compacted:  # compacted while the seat was taken: its games are read again
            room = await self.race.commands.room(room.id)
        joined: dict[str, Any] = {
            "type": p.JOINED,
            "room": room.id,
            "role": role.value,
            "player": player,
        }
        if ref is not None:
            joined["ref"] = ref
        member = self.race.delivery.attach(room, self.s, role, player=player, first=joined)
        bind(room=room.id, game=game_stream(room.id, player) if player else None)
        return room, member

    def _in_room(self) -> tuple[Room, Member]:
        found = self.race.delivery.member(self.s)
        if found is None:
            raise NotInRoom("you are in no room")
        return found

    async def on_leave(self, msg: dict[str, Any]) -> None:
        room = await self._leave(*self._in_room())
        self.s.reply(msg, {"type": p.LEFT, "room": room.id})

    async def leave_current(self) -> Room | None:
        """Out of the room the connection is in (as ``leave``), if any; the room left."""
        found = self.race.delivery.member(self.s)
        if found is None:
            return None
        room = await self._leave(*found)
        self.s.send({"type": p.LEFT, "room": room.id})
        return room

    async def _leave(self, room: Room, member: Member) -> Room:
        if member.role == Role.PLAYER and member.player is not None:
            await self.race.commands.leave(room, member.player)
            await self.race.commands.away(room, member.player, self.s.connection_id)
        self.race.delivery.detach(self.s)
        bind(room=None, game=None)
        return room

    async def on_rematch(self, msg: dict[str, Any]) -> None:
        """From a finished race into its rematch's room, seated, in one request: the finished
        room is left only once the rematch's room exists."""
        room, member = self._in_room()
        if member.role != Role.PLAYER or member.player is None:
            raise NotAPlayer("only a racer can ask for a rematch: watch its room instead")
        rematch = await self.race.commands.rematch(room, member.player, creator=self.s.session)
        await self._leave(room, member)
        await self.join(rematch, Role.PLAYER, ref=msg.get("ref"))

    async def on_add_bot(self, msg: dict[str, Any]) -> None:
        """The lobby's creator seats a bot (docs/bots.md); answered with the room's state."""
        room, _, _ = self._seated()
        level = msg.get("level", DEFAULT_BOT_LEVEL)
        await self.race.commands.bot_seats.add(room, by=self.s.session, level=level)
        self.s.reply(msg, {"type": p.ROOM, "room": self.race.delivery.room_state(room)})

    async def on_start(self, msg: dict[str, Any]) -> None:
        room, _, player = self._seated()
        await self.race.commands.start(room, player)

    async def on_move(self, msg: dict[str, Any]) -> None:
        started = time.perf_counter()
        try:
            room, _, player = self._seated()
            target = msg.get("player")
            if target is not None and target != player:
                raise NotYourGame("you can only move in your own game")
            version = await self.race.commands.games.move(room, player, msg["id"], msg["move"])
            self.s.send({"type": p.ACK, "id": msg["id"], "version": version})
            self.s.written_now()  # with the move's own event, queued before it
            self.race.metrics.moves_accepted.inc()
        finally:
            self.race.metrics.ack_seconds.observe(time.perf_counter() - started)

    async def on_resign(self, msg: dict[str, Any]) -> None:
        room, _, player = self._seated()
        await self.race.commands.games.resign(room, player)

    async def on_hint(self, msg: dict[str, Any]) -> None:
        room, _, player = self._seated()
        hint = await self.race.commands.games.hint(room, player)
        solution = hint.solution
        self.s.reply(
            msg,
            {
                "type": p.SUGGESTION,
                "move": hint.move,
                "heuristic": hint.heuristic,
                "status": str(solution.status),
                "nodes": solution.nodes,
                "max_nodes": solution.max_nodes,
            },
        )

    async def on_watch(self, msg: dict[str, Any]) -> None:
        room_id = msg.get("room")
        room_id = room_id.strip().lower() if room_id is not None else None
        found = self.race.delivery.member(self.s)
        if found is None:
            if room_id is None:
                raise NotInRoom("you are in no room: name one")
            found = await self.join(room_id, Role.SPECTATOR)
        room, member = found
        if room_id is not None and room_id != room.id:
            raise AlreadyInRoom(f"you are in room {room.id}: leave it first")
        self.race.delivery.watch(room, member, msg.get("player"))
