"""Delivery: what changed in a room, sent to the connections in it on this process.

Players get their own game's events at once. Viewers (spectators, and racers watching others)
get a game's events once fair spectating allows them (server.domain.fairness: no stock card
before every racer still playing has turned it), then after the room's spectator delay
(``delay.py``); progress reaches them after the delay alone. Everything but a racer's own events
and the room's lifecycle is sent at most once a tick per connection (``ticks.py``). Frames are
rendered once for all their recipients (``render.py``), and who receives what is cached per
room (``audience.py``). Delivery never appends and never decides a rule: it renders the fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.domain.errors import NoSuchPlayer, NotAllowed, TooManySpectators
from server.domain.events import (
    CountdownCancelled,
    CountdownStarted,
    PlayerAway,
    PlayerBack,
    PlayerJoined,
    PlayerLeft,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomClosed,
)
from server.domain.fairness import common_cards, viewable
from server.domain.fold import Change, GameAdvanced, Loaded, RoomChanged
from server.domain.model import Room
from server.domain.progress import Progress
from server.net import render
from server.net.audience import (
    OWNER,
    PLAYERS,
    RIVALS,
    SPECTATORS,
    WATCHERS,
    Audience,
    Member,
    Peer,
    Role,
)
from server.net.delay import Delay
from server.net.ticks import SendMany, Soon, Ticker
from server.runtime.clock import Clock
from server.runtime.config import Config
from shared import protocol as p
from shared.protocol import CLOSE_SUPERSEDED

# Room events after which everyone in the room gets the room's state again.
_SEATING = (PlayerJoined, PlayerLeft, PlayerAway, PlayerBack, CountdownCancelled, RoomClosed)


class Delivery:
    """Fan-out of every loaded room's changes to its members on this process."""

    def __init__(
        self, clock: Clock, config: Config, send_many: SendMany, soon: Soon | None = None
    ) -> None:
        self.config = config
        self.ticker = Ticker(send_many, config.tick_ms, soon)
        self.delay = Delay(clock)
        self.audiences: dict[str, Audience] = {}
        self.where: dict[Peer, tuple[Room, Member]] = {}
        self.seated: dict[tuple[str, str], Peer] = {}  # (room, player) -> its connection here

    @property
    def frames(self) -> int:
        """Frames handed to connections (metrics)."""
        return self.ticker.frames

    # ---- members -----------------------------------------------------------------------------

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
        audience.members[peer] = member
        audience.changed()
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
            audience.waiting.pop(peer, None)
            audience.members.pop(peer, None)
            audience.changed()
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

    # ---- changes -----------------------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        """The hub's listener: fan out each change, in order."""
        audience = self.audience(room)
        released = False  # a game's advance ends with a release: no second scan for a move
        for change in changes:
            if isinstance(change, GameAdvanced):
                self._game_advanced(room, audience, change)
                released = True
            elif isinstance(change, RoomChanged):
                self._room_changed(room, audience, change)
                released = False
            elif isinstance(change, Loaded):
                self._loaded(room, audience)
                released = False
        if not released:
            self._release(room, audience)

    def _later(self, room: Room, audience: Audience, deliver: Any) -> None:
        self.delay.later(room.id, room.delay_ms, audience, deliver)

    def _loaded(self, room: Room, audience: Audience) -> None:
        """A room folded with nobody here: what viewers have been shown reaches the fold (after
        the delay, if the room has one), so the first viewer sees what the delay allows. A room
        folded again (its stream went back) keeps no count beyond the new fold."""
        audience.clamp({player: game.version for player, game in room.games.items()})
        for game in room.games.values():
            progress = game.progress

            def show(player: str = game.player, shown: Progress = progress) -> None:
                audience.shown[player] = shown

            self._later(room, audience, show)
        if room.finished is not None and not audience.finished_shown:
            self._later(room, audience, lambda: setattr(audience, "finished_shown", True))

    def _room_changed(self, room: Room, audience: Audience, change: RoomChanged) -> None:
        event = change.event
        if change.refused:
            return
        send = self.ticker.send
        everyone = list(audience.members)
        if isinstance(event, PlayerBack):
            self._supersede(room, event.player, event.connection)
        if isinstance(event, _SEATING):
            send(audience, everyone, {"type": p.ROOM, "room": self.room_state(room)})
            if isinstance(event, RoomClosed):
                # Told, then out of it: a closed room holds nobody (they may join or queue again).
                for peer in everyone:
                    self.detach(peer)
        elif isinstance(event, CountdownStarted):
            send(audience, everyone, render.countdown_message(room, event.at))
        elif isinstance(event, RaceStarted):
            send(audience, everyone, render.started_message(room, event.at))
        elif isinstance(event, RaceFinished):
            self._release(room, audience)  # every game's last events before the end
            message = room.finished_message()
            send(audience, audience.of(PLAYERS), message)

            def release_end() -> None:
                audience.finished_shown = True
                send(audience, audience.of(SPECTATORS), message)

            self._later(room, audience, release_end)
        elif isinstance(event, RematchOffered):
            # The racers are told at once; spectators once the delay has shown them the end.
            send(audience, audience.of(PLAYERS), {"type": p.ROOM, "room": self.room_state(room)})

            def release_rematch() -> None:
                state = self.room_state(room, delayed=True)
                send(audience, audience.of(SPECTATORS), {"type": p.ROOM, "room": state})

            self._later(room, audience, release_rematch)

    def _supersede(self, room: Room, player: str, connection: str) -> None:
        """The seat is held by another connection now (this process or another): close ours."""
        peer = self.seated.get((room.id, player))
        if peer is not None and peer.connection_id != connection:
            self.detach(peer)
            peer.close_soon(CLOSE_SUPERSEDED, "seat resumed on another connection")

    def _game_advanced(self, room: Room, audience: Audience, change: GameAdvanced) -> None:
        player, first, last, progress = change.player, change.first, change.last, change.progress
        if audience.quiet(room.delay_ms):
            # Nobody here to tell, but what viewers may see moves on all the same: a viewer
            # who joins later is shown it (the game may be played on another process).
            audience.shown[player] = progress
            self._release(room, audience)
            return
        game = room.games[player]
        update_frame = render.progress_frame(room, player, progress)  # once, for all
        owner = audience.of(OWNER, player)
        if owner:
            # The racer's own progress goes with its own events and its ack, in their one
            # write: sent with the tick it would take a write of its own, each move.
            for frame in render.event_frames(room, game, first, last):
                self.ticker.send(audience, owner, frame)
            self.ticker.send(audience, owner, update_frame)
        self.ticker.queue(audience, audience.of(RIVALS, player), update_frame)

        def show() -> None:
            audience.shown[player] = progress
            self.ticker.queue(audience, audience.of(SPECTATORS), update_frame)

        # Progress first: viewers learn how far this racer is before the events of others
        # that its move let through (a viewer can check the fairness rule from what it gets).
        self._later(room, audience, show)
        self._release(room, audience)

    def _release(self, room: Room, audience: Audience) -> None:
        """Let through, to viewers, every event fair spectating allows now (then the delay)."""
        common = common_cards(room)
        quiet = audience.quiet(room.delay_ms)
        for player, game in room.games.items():
            cleared = audience.cleared.get(player, 0)
            limit = viewable(game, cleared, common)
            if limit <= cleared:
                continue
            audience.cleared[player] = limit
            if quiet:
                audience.released[player] = limit
                continue
            frames = render.event_frames(room, game, cleared + 1, limit)

            def deliver(
                player: str = player, limit: int = limit, frames: list[bytes] = frames
            ) -> None:
                audience.released[player] = max(audience.released.get(player, 0), limit)
                watchers = audience.of(WATCHERS, player)
                for frame in frames:
                    self.ticker.queue(audience, watchers, frame)

            self._later(room, audience, deliver)

    def flush(self) -> None:
        """Send every connection here what waits for its room's tick, now."""
        for audience in self.audiences.values():
            self.ticker.flush(audience)

    async def aclose(self) -> None:
        self.flush()
        for audience in self.audiences.values():
            self.ticker.stop(audience)
        await self.delay.stop(list(self.audiences.values()))
