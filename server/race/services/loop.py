"""The one loop every change goes through: sync the room, decide, append at the version read.

A decision is a pure function of the folded room and the time (``server.race.domain.decide``);
this loop gives it an up-to-date room, appends what it returns with the expected version, and
decides again when another writer got there first. The hub folds the append on the spot, so
the loop returns with the room already showing its effect.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from server.kernel.errors import WrongStatus
from server.race.domain.events import CountdownStarted, PlayerAway, RaceStarted, RoomEvent, encode
from server.race.domain.model import Room
from server.race.services.directory import Directory
from server.race.services.hub import Hub
from server.runtime.clock import Clock
from server.runtime.metrics import Metrics
from server.store import EventStore
from shared.errors import ServerError, WrongExpectedVersion

Decide = Callable[[int], list[RoomEvent]]
"""A decision bound to its room and request: the events for the room as folded at ``now``."""

# Events that open a timed phase: a due hint goes first, so the timer runs even if we die.
_TIMED = (CountdownStarted, RaceStarted, PlayerAway)


class RoomLoop:
    """Appends decisions to room and game streams; every append is timed for metrics."""

    def __init__(
        self, store: EventStore, hub: Hub, clock: Clock, directory: Directory, metrics: Metrics
    ) -> None:
        self.store = store
        self.hub = hub
        self.clock = clock
        self.directory = directory
        self.metrics = metrics

    async def append(
        self, stream: str, events: Sequence[Mapping[str, Any]], *, expected_version: int
    ) -> int:
        started = time.perf_counter()
        try:
            return await self.store.append(stream, events, expected_version=expected_version)
        finally:
            self.metrics.append_seconds.observe(time.perf_counter() - started)

    async def run(self, room: Room, decide: Decide, attempts: int = 5) -> int:
        """Append what ``decide`` makes of the up-to-date room; decide again on a conflict.
        An archived room is read only: its streams left the store for good."""
        for _ in range(attempts):
            if room.archived:
                raise WrongStatus("this race is archived: it can be watched and replayed only")
            await self.hub.sync(room)
            # What the decision read: the fold may move on during the awaits below (another
            # process's append, folded from its wake-up), and must not lend its version to a
            # decision made before it (two processes firing one countdown both appended).
            decided_on = room.version
            events = decide(self.clock.now_ms())
            if not events:
                return room.version
            if any(isinstance(e, _TIMED) for e in events):
                await self.directory.recheck_soon(room.id)
            try:
                version = await self.append(
                    room.stream, [encode(e) for e in events], expected_version=decided_on
                )
            except WrongExpectedVersion as conflict:
                if conflict.actual == 0 and room.finished is not None:
                    room.archived = True  # archived meanwhile, by this process or another
                continue
            if room.version < version:
                await self.hub.sync(room)
            await self.directory.publish(room)
            return version
        raise ServerError("the room is changing too fast; try again")
