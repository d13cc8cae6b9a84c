"""Who is present in a tournament, on every process, and where a paired player is to be seated.

A process notes each logged-in connection that follows a tournament in the tournament's
``tpresent.<id>`` index (account → last written; the value says which process and session,
since when, and whether the connection is busy in another race), written when that changes and
renewed every 10 s; an entry removed (the connection unfollowed or closed), older than
``STALE_MS`` (a removal lost), or of a process that stopped beating is absent. The process that
pairs a race tells each racer's process through its ``tplaced.<process>`` index, as the quick
race's matchmaker does (or, for its own racers, directly); that process seats the racer on their
own connection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import msgpack

from server.race.services.presence import Presence
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.tasks import gather_bounded
from server.store import EventStore

STALE_MS = 30_000  # a presence not renewed for this long is gone (renewed every 10 s)


def present_index(tournament: str) -> str:
    return f"tpresent.{tournament}"


def placed_index(process: str) -> str:
    return f"tplaced.{process}"


@dataclass(frozen=True, slots=True)
class Here:
    """A present account: its connection's process and session, since when it is present,
    and whether it is busy (seated in an unfinished room of another kind)."""

    account: str
    process: str
    session: str
    since: int
    busy: bool


@dataclass(frozen=True, slots=True)
class Placement:
    """A session of this process to seat in a tournament race."""

    session: str
    tournament: str
    room: str
    race: int
    players: tuple[str, ...]


class TournamentPresence:
    """Presence and placement, through the store's indexes."""

    def __init__(self, store: EventStore, clock: Clock, config: Config, presence: Presence) -> None:
        self.store = store
        self.clock = clock
        self.config = config
        self.presence = presence
        self.process = presence.process
        # Seats a racer of this very process at once (the feed's), without the store's trip.
        self.local: Callable[[Placement], None] | None = None

    async def note(
        self, tournament: str, account: str, session: str, since: int, busy: bool
    ) -> None:
        value = msgpack.packb({"p": self.process, "s": session, "t": since, "b": busy})
        await self.store.index_put(present_index(tournament), account, self.clock.now_ms(), value)

    async def drop(self, tournament: str, account: str, session: str) -> None:
        """Out of the tournament's presence, unless another session holds it meanwhile."""
        entry = await self.store.index_get(present_index(tournament), account)
        if entry is not None and msgpack.unpackb(entry.value)["s"] == session:
            await self.store.index_remove(present_index(tournament), account)

    async def present(self, tournament: str) -> dict[str, Here]:
        """The accounts present now, on live processes."""
        now = self.clock.now_ms()
        entries = await self.store.index_range(present_index(tournament))
        if not entries:
            return {}
        live = await self.presence.beating_after(now - int(self.config.heartbeat_s * 3000))
        out = {}
        for entry in entries:
            value = msgpack.unpackb(entry.value)
            if entry.score < now - STALE_MS or value["p"] not in live:
                continue
            out[entry.member] = Here(entry.member, value["p"], value["s"], value["t"], value["b"])
        return out

    async def place(self, here: Here, placement: Placement) -> None:
        """Tell the racer's process to seat them: this one at once, another through its
        ``tplaced`` index, which it reads a few times a second."""
        if here.process == self.process and self.local is not None:
            self.local(placement)
            return
        value = msgpack.packb(
            {
                "t": placement.tournament,
                "r": placement.room,
                "n": placement.race,
                "ps": list(placement.players),
            }
        )
        await self.store.index_put(
            placed_index(here.process), here.session, self.clock.now_ms(), value
        )

    async def placements(self) -> list[Placement]:
        """This process's sessions to seat, each taken once."""
        index = placed_index(self.process)
        entries = await self.store.index_range(index)
        # Side by side: the store pipelines them, a round's hundreds of racers in a few trips.
        await gather_bounded((self.store.index_remove(index, e.member) for e in entries), 64)
        out = []
        for entry in entries:
            value = msgpack.unpackb(entry.value)
            out.append(
                Placement(entry.member, value["t"], value["r"], value["n"], tuple(value["ps"]))
            )
        return out
