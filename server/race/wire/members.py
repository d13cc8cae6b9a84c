"""Who is in each loaded room on this process: connections attached as players or viewers,
the seat each holds, what each watches, and the snapshots a newcomer is sent.

A seat is held by one connection: one that takes it over closes the other (here, or on another
process, when its ``player_back`` is folded). Who receives which frames is cached per room in
its ``Audience`` (``audience.py``).
"""

from __future__ import annotations

from typing import Any

from server.kernel.errors import NoSuchPlayer, NotAllowed, TooManySpectators
from server.race.domain.model import Room
from server.race.wire import render
from server.race.wire.audience import Audience, Member, Peer, Role
from server.race.wire.ticks import Ticker
from server.runtime.config import Config
from shared.protocol import CLOSE_SUPERSEDED


class Members:
    """The connections in each room here, by room, by connection and by seat."""

    def __init__(self, config: Config, ticker: Ticker) -> None:
        self.config = config
        self.ticker = ticker
        self.audiences: dict[str, Audience] = {}
        self.where: dict[Peer, tuple[Room, Member]] = {}
        self.seated: dict[tuple[str, str], Peer] = {}  # (room, player) -> its connection here

    def audience(self, room: Room) -> Audience:
        found = self.audiences.get(room.id)
        if found is None:
            found = self.audiences[room.id] = Audience()
        return found

    def member(self, peer: Peer) -> tuple[Room, Member] | None:
        return self.where.get(peer)

    def attach(
        self,
        room: Room,
        peer: Peer,
        role: Role,
        *,
        player: str | None = None,
        first: dict[str, Any] | None = None,
    ) -> Member:
        """Put a connection in a room and send it ``first`` (the ``joined`` answer) and the
        snapshots it needs; a seat already held by another connection here is taken over."""
        audience = self.audience(room)
        if role == Role.SPECTATOR and (
            audience.spectator_count() >= self.config.max_spectators_per_room
        ):
            raise TooManySpectators(f"room {room.id} has enough spectators")
        member = Member(peer, role, player=player, watch_all=role == Role.SPECTATOR)
        if role == Role.PLAYER and player is not None:
            old = self.seated.get((room.id, player))
            if old is not None and old is not peer:
                self.detach(old)
                old.close_soon(CLOSE_SUPERSEDED, "seat resumed on another connection")
            self.seated[(room.id, player)] = peer
        audience.add(member)
        self.where[peer] = (room, member)
        if first is not None:
            peer.send(first)
        self._snapshot(room, audience, member)
        return member

    def detach(self, peer: Peer) -> Room | None:
        """Forget a connection (it left or closed); its seat stays in the stream."""
        found = self.where.pop(peer, None)
        if found is None:
            return None
        room, member = found
        audience = self.audiences.get(room.id)
        if audience is not None:
            audience.remove(peer)
        if member.player is not None and self.seated.get((room.id, member.player)) is peer:
            del self.seated[(room.id, member.player)]
        return room

    def watch(self, room: Room, member: Member, player: str | None) -> None:
        """Send fresh snapshots of one game or all; racers only once their own game is done."""
        if player is not None and player not in room.seats:
            raise NoSuchPlayer(f"no player {player!r} in room {room.id}")
        targets = [player] if player is not None else list(room.seats)
        audience = self.audience(room)
        if member.role == Role.PLAYER and member.player is not None:
            own = room.games.get(member.player)
            own_done = own is not None and own.progress.status.done
            if targets != [member.player] and not own_done and room.finished is None:
                raise NotAllowed("racers can watch other racers once their own game is finished")
            if player is None:
                member.watch_all = True
            elif player != member.player:
                member.watching.add(player)
            audience.changed()
        for target in targets:
            own_game = member.role == Role.PLAYER and member.player == target
            member.peer.send(self.game_message(room, target, released_only=not own_game))

    def in_use(self, room_id: str) -> bool:
        """Whether a connection here is in the room, or frames still wait to reach one."""
        audience = self.audiences.get(room_id)
        return audience is not None and audience.busy()

    def forget(self, room_id: str) -> None:
        """The room was unloaded: what was kept for its viewers goes with it."""
        audience = self.audiences.pop(room_id, None)
        if audience is not None:
            self.ticker.stop(audience)

    def spectators_here(self, room_id: str) -> int:
        audience = self.audiences.get(room_id)
        return 0 if audience is None else audience.spectator_count()

    # ---- rendering ---------------------------------------------------------------------------

    def room_state(self, room: Room, *, delayed: bool = False) -> dict[str, Any]:
        """The room's state; ``delayed`` is what a viewer may see under the spectator delay."""
        return render.viewer_room_state(room, self.audience(room), delayed=delayed)

    def game_message(self, room: Room, player: str, *, released_only: bool) -> bytes:
        count = self.audience(room).released.get(player, 0) if released_only else None
        return render.game_message(room, player, count)

    def _snapshot(self, room: Room, audience: Audience, member: Member) -> None:
        for msg in render.snapshot(room, audience, member):
            member.peer.send(msg)

    def supersede(self, room: Room, player: str, connection: str) -> None:
        """The seat is held by another connection now (this process or another): close ours."""
        peer = self.seated.get((room.id, player))
        if peer is not None and peer.connection_id != connection:
            self.detach(peer)
            peer.close_soon(CLOSE_SUPERSEDED, "seat resumed on another connection")
