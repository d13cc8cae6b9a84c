"""Who is in a room on this process, and what its viewers have been let see so far."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from server.race.domain.progress import Progress


class Cancellable(Protocol):
    def cancel(self) -> None: ...


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
PLAYERS, SPECTATORS, OWNER, RIVALS, WATCHERS, VIEWING_PLAYERS = (
    "players",
    "spectators",
    "owner",
    "rivals",
    "watchers",
    "viewing_players",
)


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
    tick: Cancellable | None = None  # the room's next flush, while frames wait for it
    tick_ends: float = 0.0  # loop time the open tick ends: frames until then wait for it
    spectators: int = 0  # members who are spectators: counted, since every join asks

    def add(self, member: Member) -> None:
        """A connection joins (in place of itself, if it was here)."""
        old = self.members.get(member.peer)
        self.members[member.peer] = member
        if old is not None and old.role is Role.SPECTATOR:
            self.spectators -= 1
        if member.role is Role.SPECTATOR:
            self.spectators += 1
        self.changed()

    def remove(self, peer: Peer) -> None:
        """A connection leaves: it is sent nothing more, what waited for it included."""
        self.waiting.pop(peer, None)
        member = self.members.pop(peer, None)
        if member is not None:
            if member.role is Role.SPECTATOR:
                self.spectators -= 1
            self.changed()

    def of(self, kind: str, player: str | None = None) -> list[Peer]:
        """The peers that receive one kind of frame, cached until ``changed``.

        ``players`` and ``spectators`` by role; ``owner``: the connection seated as ``player``;
        ``rivals``: the other players' connections;
        ``watchers``: whoever watches ``player``'s game other than its owner;
        ``viewing_players``: the players who watch another's game.
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
            elif kind == RIVALS:
                found = [m.peer for m in members if m.role == Role.PLAYER and m.player != player]
            elif kind == VIEWING_PLAYERS:
                found = [
                    m.peer
                    for m in members
                    if m.role == Role.PLAYER and (m.watch_all or m.watching - {m.player})
                ]
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
        """Kept as members come and go: every join asks (its snapshot, the spectator limit),
        and listing the members each time made a storm of joins to one race quadratic."""
        return self.spectators

    def clamp(self, versions: dict[str, int]) -> None:
        """The room was folded again: no count beyond what its games hold now."""
        for player, count in list(self.cleared.items()):
            version = versions.get(player, 0)
            self.cleared[player] = min(count, version)
            self.released[player] = min(self.released.get(player, 0), version)

    def quiet(self, delay_ms: int) -> bool:
        """Nobody here and nothing delayed: what viewers may see moves on without sending."""
        return not self.members and delay_ms <= 0 and not self.pending

    def busy(self) -> bool:
        """A connection is here, or frames still wait to reach one."""
        pumping = self.pump is not None and not self.pump.done()
        return bool(self.members or self.waiting or self.pending or pumping)
