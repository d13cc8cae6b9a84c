"""The room model: a room and its racers' games as folded from their streams, and who is in it.

Kept apart from ``server.rooms`` (which drives it: commands, following, fan-out) so the model a
rebuild folds into, and a forked child pickles, is readable on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import msgpack

from server.race import Entrant, Progress, RoomStatus
from shared import protocol as p
from shared.errors import ClientError, ServerError
from shared.state import GameState

_WAIT_S = 10.0


def room_stream(room: str) -> str:
    return f"{{{room}}}:room"


def game_stream(room: str, player: str) -> str:
    return f"{{{room}}}:game:{player}"


def token_hash(token: str) -> str:
    """What the room stream keeps of a resume token: never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


def packed_with(msg: dict[str, Any], key: str, packed: bytes) -> bytes:
    """``msg`` encoded as a frame, plus one field ``key`` whose value is already packed."""
    head = _packer.pack(msg)
    assert head[0] == 0x80 | len(msg)  # a fixmap (under 16 fields): the count is in byte 0
    return b"".join((bytes((0x80 | (len(msg) + 1),)), head[1:], _packer.pack(key), packed))


def _array_header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


# One packer reused: msgpack.packb builds a Packer per call, which was most of packing an event
# (bench/recovery.py profile: every event of a rebuild is packed once).
_packer = msgpack.Packer(use_bin_type=True)
pack = _packer.pack


class Peer(Protocol):
    """What a room needs of a connection."""

    session: str

    def send(self, msg: dict[str, Any] | bytes) -> None: ...

    def close_soon(self, code: int, reason: str) -> None: ...


class Role(StrEnum):
    """How a connection is in a room; a StrEnum, so each equals its wire string."""

    PLAYER = "player"
    SPECTATOR = "spectator"


# The kinds of audience ``Room.audience`` caches.
PLAYERS, SPECTATORS, OWNER, WATCHERS = "players", "spectators", "owner", "watchers"


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


@dataclass
class Seat:
    player: str
    name: str
    token_hash: str
    order: int


@dataclass(eq=False)
class Game:
    """One racer's game as folded from its stream (the private state stays on the server)."""

    player: str
    stream: str
    state: GameState | None = None
    version: int = 0
    # Each public event packed (msgpack) once: frames splice them in, and bytes are nothing
    # for the garbage collector to traverse (dicts of lists were most of a live server's heap).
    public: list[bytes] = field(default_factory=list)
    released: int = 0  # public events already given to spectators (the spectator delay)
    shown: Progress = field(default_factory=Progress)  # the progress spectators have been given
    progress: Progress = field(default_factory=Progress)
    cids: dict[Any, int] = field(default_factory=dict)
    # The state after the last move this process appended, while the follower has not folded
    # it back yet: the next move is validated against it, so a move is acked right after its
    # append (no wait for the store to deliver it, no timer per move).
    accepted: GameState | None = None
    accepted_version: int = 0
    rejects: OrderedDict[Any, ClientError] = field(default_factory=OrderedDict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(eq=False)
class Room:
    """A room as folded from its streams, plus who is in it on this process."""

    id: str
    meta: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    status: RoomStatus = RoomStatus.LOBBY
    seats: dict[str, Seat] = field(default_factory=dict)
    games: dict[str, Game] = field(default_factory=dict)
    members: dict[Peer, Member] = field(default_factory=dict)
    go_at: int | None = None
    countdown_at: int | None = None
    started_at: int | None = None
    ends_at: int | None = None
    finished: dict[str, Any] | None = None
    finished_shown: bool = False  # spectators have been sent ``finished`` (the delay)
    joined_count: int = 0
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    follower: Any = None
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    timer: asyncio.Task[Any] | None = None
    pending: deque[tuple[int, Callable[[], None]]] = field(default_factory=deque)
    pump: asyncio.Task[Any] | None = None
    # Who receives what, computed once per change of members or watching instead of a scan of
    # every member per event (bench.load paced profile); see ``audience``.
    audiences: dict[tuple[str, str | None], list[Peer]] = field(default_factory=dict)

    @property
    def stream(self) -> str:
        return room_stream(self.id)

    @property
    def delay_ms(self) -> int:
        return int(self.meta.get("spectator_delay_ms", 0))

    def audience(self, kind: str, player: str | None = None) -> list[Peer]:
        """The peers that receive one kind of frame, cached until ``audience_changed``.

        ``players`` and ``spectators`` by role; ``owner``: the connection seated as ``player``;
        ``watchers``: whoever watches ``player``'s game other than its owner.
        """
        key = (kind, player)
        found = self.audiences.get(key)
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
            self.audiences[key] = found
        return found

    def audience_changed(self) -> None:
        """Members or what they watch changed: the lists are rebuilt when next asked for.

        The old lists are left as they are (a fan-out may be iterating over one)."""
        self.audiences.clear()

    def spectators(self) -> list[Member]:
        return [m for m in self.members.values() if m.role == Role.SPECTATOR]

    def players_here(self) -> list[Member]:
        return [m for m in self.members.values() if m.role == Role.PLAYER]

    def entrants(self, *, delayed: bool = False) -> list[Entrant]:
        """The racers with their progress: live, or as spectators have been shown it."""
        entrants = []
        for s in self.seats.values():
            game = self.games.get(s.player)
            progress = Progress() if game is None else game.shown if delayed else game.progress
            entrants.append(Entrant(s.player, s.name, s.order, progress))
        return entrants

    def all_done(self) -> bool:
        return bool(self.seats) and all(
            s.player in self.games and self.games[s.player].progress.status.done
            for s in self.seats.values()
        )

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "variant": self.meta["variant"],
            "status": self.status.value,
            "players": len(self.seats),
            "capacity": self.meta["capacity"],
            "spectators": len(self.spectators()),
            "created_at": self.meta["at"],
        }

    def state(self, *, delayed: bool = False) -> dict[str, Any]:
        """The room's state; ``delayed`` is what a spectator may see under the spectator delay."""
        hide_end = delayed and self.finished is not None and not self.finished_shown
        status = RoomStatus.RACING if hide_end else self.status
        return {
            "id": self.id,
            "variant": self.meta["variant"],
            "status": status.value,
            "capacity": self.meta["capacity"],
            "countdown_ms": self.meta["countdown_ms"],
            "time_limit_ms": self.meta["time_limit_ms"],
            "spectator_delay_ms": self.meta["spectator_delay_ms"],
            "commitment": self.meta["commitment"],
            "deal_version": self.meta["deal_version"],
            "players": [
                {"player": e.player, "name": e.name, **e.progress.wire()}
                for e in self.entrants(delayed=delayed)
            ],
            "spectators": len(self.spectators()),
            "created_at": self.meta["at"],
            "go_at": self.go_at,
            "started_at": self.started_at,
            "ends_at": self.ends_at,
            "finished_at": self.finished["at"] if self.finished and not hide_end else None,
        }

    def finished_message(self) -> dict[str, Any]:
        assert self.finished is not None
        return {
            "type": p.FINISHED,
            "room": self.id,
            "at": self.finished["at"],
            "reason": self.finished["reason"],
            "ranking": self.finished["ranking"],
            "variant": self.meta["variant"],
            "deal_version": self.meta["deal_version"],
            "seed": self.meta.get("seed"),
            "salt": self.meta["salt"],
            "commitment": self.meta["commitment"],
        }

    def game_message(self, player: str, *, released_only: bool) -> bytes:
        """The ``game`` frame, already encoded: its events are kept packed (``Game.public``)."""
        game = self.games.get(player)
        events = [] if game is None else game.public[: game.released if released_only else None]
        head = {"type": p.GAME, "room": self.id, "player": player, "version": len(events)}
        return packed_with(head, "events", _array_header(len(events)) + b"".join(events))

    async def wait_until(self, ready: Callable[[], bool]) -> None:
        """Wait until the follower has folded enough; ServerError if it does not in time."""
        try:
            async with self.changed:
                await asyncio.wait_for(self.changed.wait_for(ready), _WAIT_S)
        except TimeoutError:
            raise ServerError("the event store did not deliver our own event in time") from None
