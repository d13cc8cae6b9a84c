"""Delivery: what changed in a room, sent to the connections in it on this process.

Players get their own game's events at once. Viewers (spectators, and racers watching others)
get a game's events once fair spectating allows them (server.domain.fairness: no stock card before
every racer still playing has turned it), then after the room's spectator delay; progress
reaches them after the delay alone. Everything but a racer's own events and the room's
lifecycle (progress, viewers' events) is sent at most once a tick (``--tick-ms``) per
connection, as one ``batch`` frame: a move fans out to ~20 frames, and one frame a tick per
viewer is what keeps a crowded room cheap, while a quiet room's next move goes at once (see
``_queue``). Frames are encoded once for all their recipients, and who receives what is cached
per room until members or watching change. Delivery never appends and never decides a rule: it
renders the folded room.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import msgpack

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
    RoomClosed,
)
from server.domain.fairness import common_cards, viewable
from server.domain.fold import Change, GameAdvanced, Loaded, RoomChanged
from server.domain.lifecycle import RoomStatus
from server.domain.model import Game, Room, packed_with
from server.domain.progress import Progress
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import get_logger
from shared import protocol as p

log = get_logger("server.net.delivery")

SendMany = Callable[[Iterable["Peer"], dict[str, Any] | bytes], None]
"""Send one message (or an encoded frame) to many peers."""


class Cancellable(Protocol):
    def cancel(self) -> None: ...


Soon = Callable[[Callable[["Audience"], None], "Audience"], Cancellable]
"""Run a room's tick at the end of this loop turn (``loop.call_soon``, or the outbox's hook
that runs it just before the turn's writes)."""

CLOSE_SUPERSEDED = 4001

# Room events after which everyone in the room gets the room's state again.
_SEATING = (PlayerJoined, PlayerLeft, PlayerAway, PlayerBack, CountdownCancelled, RoomClosed)


class Peer(Protocol):
    """What delivery needs of a connection."""

    session: str
    connection_id: str  # unique across processes: what a seat's presence events name

    def send(self, msg: dict[str, Any] | bytes) -> None: ...

    def close_soon(self, code: int, reason: str) -> None: ...


class Role(StrEnum):
    """How a connection is in a room; a StrEnum, so each equals its wire string."""

    PLAYER = "player"
    SPECTATOR = "spectator"


@dataclass(eq=False)
class Member:
    """A connection in a room on this process: a seated player or a spectator."""

    peer: Peer
    role: Role
    player: str | None = None
    watching: set[str] = field(default_factory=set)
    watch_all: bool = False

    def watches(self, player: str) -> bool:
        return self.watch_all or player in self.watching


# The kinds of audience ``Audience.of`` caches.
PLAYERS, SPECTATORS, OWNER, WATCHERS = "players", "spectators", "owner", "watchers"


@dataclass(eq=False)
class Audience:
    """Who is in one room on this process, and what the spectator delay has released to them."""

    members: dict[Peer, Member] = field(default_factory=dict)
    cleared: dict[str, int] = field(default_factory=dict)  # events fair spectating let through
    released: dict[str, int] = field(default_factory=dict)  # events given to viewers (+ delay)
    shown: dict[str, Progress] = field(default_factory=dict)  # progress viewers have been shown
    finished_shown: bool = False
    pending: deque[tuple[int, Callable[[], None]]] = field(default_factory=deque)
    pump: asyncio.Task[None] | None = None
    cache: dict[tuple[str, str | None], list[Peer]] = field(default_factory=dict)
    waiting: dict[Peer, list[bytes]] = field(default_factory=dict)  # frames for the tick
    tick: Cancellable | None = None  # the room's next flush, while its tick is open

    def of(self, kind: str, player: str | None = None) -> list[Peer]:
        """The peers that receive one kind of frame, cached until ``changed``.

        ``players`` and ``spectators`` by role; ``owner``: the connection seated as ``player``;
        ``watchers``: whoever watches ``player``'s game other than its owner.
        """
        key = (kind, player)
        found = self.cache.get(key)
        if found is None:
            members = self.members.values()
            if kind == PLAYERS:
                found = [m.peer for m in members if m.role == Role.PLAYER]
            elif kind == SPECTATORS:
                found = [m.peer for m in members if m.role == Role.SPECTATOR]
            elif kind == OWNER:
                found = [m.peer for m in members if m.role == Role.PLAYER and m.player == player]
            else:
                assert kind == WATCHERS
                assert player is not None
                found = [
                    m.peer
                    for m in members
                    if m.watches(player) and not (m.role == Role.PLAYER and m.player == player)
                ]
            self.cache[key] = found
        return found

    def changed(self) -> None:
        """Members or what they watch changed; lists in use by a fan-out are left as they are."""
        self.cache = {}

    def spectator_count(self) -> int:
        return len(self.of(SPECTATORS))


class Delivery:
    """Fan-out of every loaded room's changes to its members on this process."""

    def __init__(
        self, clock: Clock, config: Config, send_many: SendMany, soon: Soon | None = None
    ) -> None:
        self.clock = clock
        self.config = config
        self.send_many = send_many
        self._soon = soon
        self.audiences: dict[str, Audience] = {}
        self.where: dict[Peer, tuple[Room, Member]] = {}
        self.seated: dict[tuple[str, str], Peer] = {}  # (room, player) -> its connection here
        self.frames = 0  # frames handed to connections (metrics)

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
        if audience is None:
            return False
        pumping = audience.pump is not None and not audience.pump.done()
        return bool(audience.members or audience.waiting or audience.pending or pumping)

    def forget(self, room_id: str) -> None:
        """The room was unloaded: what was kept for its viewers goes with it."""
        audience = self.audiences.pop(room_id, None)
        if audience is not None and audience.tick is not None:
            audience.tick.cancel()

    def spectators_here(self, room_id: str) -> int:
        audience = self.audiences.get(room_id)
        return 0 if audience is None else audience.spectator_count()

    # ---- rendering ---------------------------------------------------------------------------

    def room_state(self, room: Room, *, delayed: bool = False) -> dict[str, Any]:
        """The room's state; ``delayed`` is what a viewer may see under the spectator delay."""
        audience = self.audience(room)
        hide_end = delayed and room.finished is not None and not audience.finished_shown
        status = RoomStatus.RACING if hide_end else room.status
        meta = room.settings
        shown = None
        if delayed:

            def shown(game: Game) -> Progress:
                return audience.shown.get(game.player, Progress())

        return {
            "id": room.id,
            "variant": meta.variant,
            "status": status.value,
            "capacity": meta.capacity,
            "countdown_ms": meta.countdown_ms,
            "time_limit_ms": meta.time_limit_ms,
            "spectator_delay_ms": meta.spectator_delay_ms,
            "commitment": meta.commitment,
            "deal_version": meta.deal_version,
            "players": [
                {"player": e.player, "name": e.name, **e.progress.wire(), **seat.wire()}
                for e, seat in zip(room.entrants(shown), room.seats.values(), strict=True)
            ],
            "open_seed": room.open_seed,
            "winnable": room.winnable,
            "spectators": audience.spectator_count(),
            "created_at": meta.at,
            "go_at": room.go_at,
            "started_at": room.started_at,
            "ends_at": room.ends_at,
            "finished_at": room.finished.at if room.finished and not hide_end else None,
        }

    def game_message(self, room: Room, player: str, *, released_only: bool) -> bytes:
        """The ``game`` frame, already encoded: its events are kept packed (``Game.public``)."""
        game = room.games.get(player)
        if game is None:
            events: list[bytes] = []
        elif released_only:
            events = game.public[: self.audience(room).released.get(player, 0)]
        else:
            events = game.public
        head = {"type": p.GAME, "room": room.id, "player": player, "version": len(events)}
        return packed_with(head, "events", _array_header(len(events)) + b"".join(events))

    def _snapshot(self, room: Room, audience: Audience, member: Member) -> None:
        peer = member.peer
        spectator = member.role == Role.SPECTATOR
        peer.send({"type": p.ROOM, "room": self.room_state(room, delayed=spectator)})
        if member.role == Role.PLAYER and member.player is not None:
            own = room.games.get(member.player)
            if own is not None and own.public:
                peer.send(self.game_message(room, member.player, released_only=False))
        if spectator:
            for player in room.seats:
                game = room.games.get(player)
                if game is not None and game.public:
                    peer.send(self.game_message(room, player, released_only=True))
        if room.finished is not None and (audience.finished_shown or not spectator):
            peer.send(room.finished_message())

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

    def _loaded(self, room: Room, audience: Audience) -> None:
        """A room folded with nobody here: what viewers have been shown reaches the fold (after
        the delay, if the room has one), so the first viewer sees what the delay allows. A room
        folded again (its stream went back) keeps no count beyond the new fold."""
        for player, count in list(audience.cleared.items()):
            game = room.games.get(player)
            version = game.version if game is not None else 0
            audience.cleared[player] = min(count, version)
            audience.released[player] = min(audience.released.get(player, 0), version)
        for game in room.games.values():
            progress = game.progress

            def show(player: str = game.player, shown: Progress = progress) -> None:
                audience.shown[player] = shown

            self._later(room, audience, show)
        if room.finished is not None and not audience.finished_shown:
            self._later(room, audience, lambda: setattr(audience, "finished_shown", True))

    def _send(self, audience: Audience, peers: list[Peer], msg: dict[str, Any] | bytes) -> None:
        """Send now. A peer with frames waiting for the tick gets them first, in one batch
        with this message (order is kept); the tick goes on for everyone else."""
        if not peers:  # encoding a frame for nobody is work for nothing
            return
        waiting = audience.waiting
        if waiting and any(peer in waiting for peer in peers):
            frame = msg if isinstance(msg, bytes) else p.encode_unchecked(msg)
            now = []
            for peer in peers:
                frames = waiting.pop(peer, None)
                if frames is None:
                    now.append(peer)
                else:
                    self.frames += 1
                    self.send_many([peer], batch_frame([*frames, frame]))
            peers, msg = now, frame
            if not peers:
                return
        self.frames += len(peers)
        self.send_many(peers, msg)

    def _queue(self, audience: Audience, peers: list[Peer], frame: bytes) -> None:
        """Send with the room's tick, in one ``batch`` frame per connection.

        A quiet room's first frames go at the end of this loop turn (all that one move
        released, together) and open a tick: what comes during it waits for its end, and a tick
        that ends with nothing waiting closes. So no viewer gets more than a frame a tick, yet a
        move in a quiet room is not held back a whole tick (which was most of a spectator's
        lag). Each room keeps its own tick, so flushes spread over time instead of landing on
        the loop (and on the clients) in one burst.
        """
        if not peers:
            return
        if self.config.tick_ms <= 0:
            self._send(audience, peers, frame)
            return
        waiting = audience.waiting
        for peer in peers:
            frames = waiting.get(peer)
            if frames is None:
                waiting[peer] = [frame]
            else:
                frames.append(frame)
        if audience.tick is None:
            soon = self._soon or asyncio.get_running_loop().call_soon
            audience.tick = soon(self._tick, audience)

    def _tick(self, audience: Audience) -> None:
        audience.tick = None
        if not audience.waiting:
            return  # a quiet tick: the room's next frames go at once
        self._flush(audience)
        audience.tick = asyncio.get_running_loop().call_later(
            self.config.tick_ms / 1000, self._tick, audience
        )

    def flush(self) -> None:
        """Send every connection here what waits for its room's tick, now."""
        for audience in self.audiences.values():
            self._flush(audience)

    def _flush(self, audience: Audience) -> None:
        """Send a room's connections what waited for the tick: connections that wait for the
        same frames (the room's spectators, mostly) share one encoded batch."""
        waiting, audience.waiting = audience.waiting, {}
        groups: dict[tuple[int, ...], tuple[list[bytes], list[Peer]]] = {}
        for peer, frames in waiting.items():
            key = tuple(map(id, frames))  # the same frame objects: the same batch
            group = groups.get(key)
            if group is None:
                groups[key] = (frames, [peer])
            else:
                group[1].append(peer)
        for frames, peers in groups.values():
            self.frames += len(peers)
            self.send_many(peers, frames[0] if len(frames) == 1 else batch_frame(frames))

    def _room_changed(self, room: Room, audience: Audience, change: RoomChanged) -> None:
        event = change.event
        if change.refused:
            return
        everyone = list(audience.members)
        if isinstance(event, PlayerBack):
            self._supersede(room, event.player, event.connection)
        if isinstance(event, _SEATING):
            self._send(audience, everyone, {"type": p.ROOM, "room": self.room_state(room)})
        elif isinstance(event, CountdownStarted):
            msg = {"type": p.COUNTDOWN, "room": room.id, "at": event.at, "go_at": room.go_at}
            self._send(audience, everyone, msg)
        elif isinstance(event, RaceStarted):
            started = {
                "type": p.STARTED,
                "room": room.id,
                "at": event.at,
                "ends_at": room.ends_at,
                "commitment": room.settings.commitment,
            }
            self._send(audience, everyone, started)
        elif isinstance(event, RaceFinished):
            self._release(room, audience)  # every game's last events before the end
            message = room.finished_message()
            self._send(audience, audience.of(PLAYERS), message)

            def release_end() -> None:
                audience.finished_shown = True
                self._send(audience, audience.of(SPECTATORS), message)

            self._later(room, audience, release_end)

    def _supersede(self, room: Room, player: str, connection: str) -> None:
        """The seat is held by another connection now (this process or another): close ours."""
        peer = self.seated.get((room.id, player))
        if peer is not None and peer.connection_id != connection:
            self.detach(peer)
            peer.close_soon(CLOSE_SUPERSEDED, "seat resumed on another connection")

    def _frames(self, room: Room, game: Game, first: int, last: int) -> list[bytes]:
        return [
            packed_with(
                {"type": p.GAME_EVENT, "room": room.id, "player": game.player, "version": v},
                "event",
                game.public[v - 1],
            )
            for v in range(first, last + 1)
        ]

    def _game_advanced(self, room: Room, audience: Audience, change: GameAdvanced) -> None:
        player, first, last, progress = change.player, change.first, change.last, change.progress
        quiet = not audience.members and room.delay_ms <= 0 and not audience.pending
        if quiet:
            # Nobody here to tell, but what viewers may see moves on all the same: a viewer
            # who joins later is shown it (issue 23: a game played on another process).
            audience.shown[player] = progress
            self._release(room, audience)
            return
        game = room.games[player]
        update = {"type": p.PROGRESS, "room": room.id, "player": player}
        update.update(progress.wire())
        update_frame = p.encode_unchecked(update)  # once, for players and spectators
        owner = audience.of(OWNER, player)
        if owner:
            for frame in self._frames(room, game, first, last):
                self._send(audience, owner, frame)
        self._queue(audience, audience.of(PLAYERS), update_frame)

        def show() -> None:
            audience.shown[player] = progress
            self._queue(audience, audience.of(SPECTATORS), update_frame)

        # Progress first: viewers learn how far this racer is before the events of others
        # that its move let through (a viewer can check the fairness rule from what it gets).
        self._later(room, audience, show)
        self._release(room, audience)

    def _release(self, room: Room, audience: Audience) -> None:
        """Let through, to viewers, every event fair spectating allows now (then the delay)."""
        common = common_cards(room)
        quiet = not audience.members and room.delay_ms <= 0 and not audience.pending
        for player, game in room.games.items():
            cleared = audience.cleared.get(player, 0)
            limit = viewable(game, cleared, common)
            if limit <= cleared:
                continue
            audience.cleared[player] = limit
            if quiet:
                audience.released[player] = limit
                continue
            frames = self._frames(room, game, cleared + 1, limit)

            def deliver(
                player: str = player, limit: int = limit, frames: list[bytes] = frames
            ) -> None:
                audience.released[player] = max(audience.released.get(player, 0), limit)
                watchers = audience.of(WATCHERS, player)
                for frame in frames:
                    self._queue(audience, watchers, frame)

            self._later(room, audience, deliver)

    # ---- the spectator delay -----------------------------------------------------------------

    def _later(self, room: Room, audience: Audience, deliver: Callable[[], None]) -> None:
        """Run ``deliver`` after the room's spectator delay, in order with everything else."""
        if room.delay_ms <= 0 and not audience.pending:
            deliver()
            return
        audience.pending.append((self.clock.now_ms() + room.delay_ms, deliver))
        if audience.pump is None or audience.pump.done():
            # A fresh context: the pump must not log with the session that happened to start it.
            audience.pump = asyncio.get_running_loop().create_task(
                self._pump(room, audience), name=f"pump-{room.id}", context=contextvars.Context()
            )

    async def _pump(self, room: Room, audience: Audience) -> None:
        while audience.pending:
            due, deliver = audience.pending[0]
            await self.clock.sleep_until(due)
            audience.pending.popleft()
            try:
                deliver()
            except Exception:
                log.exception("spectator_delivery_failed", room=room.id)

    async def aclose(self) -> None:
        self.flush()
        for audience in self.audiences.values():
            if audience.tick is not None:
                audience.tick.cancel()
                audience.tick = None
        pumps = [a.pump for a in self.audiences.values() if a.pump is not None]
        for pump in pumps:
            pump.cancel()
        for pump in pumps:
            with contextlib.suppress(BaseException):
                await pump


def batch_frame(frames: list[bytes]) -> bytes:
    """One ``batch`` frame holding already-encoded messages, without decoding them."""
    return b"".join((_BATCH_HEAD, _array_header(len(frames)), *frames))


def _array_header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


_BATCH_HEAD = msgpack.packb({"type": p.BATCH, "messages": None})[:-1]  # up to the list
