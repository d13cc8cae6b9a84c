"""The pure rules of a race: the room's lifecycle as a transition table, progress and ranking.

Nothing here does I/O or reads a clock, so the lifecycle and the ranking are unit-tested with
plain values; ``server.rooms`` drives them from the event streams.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from server.errors import WrongStatus


class RoomStatus(Enum):
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"
    CLOSED = "closed"  # a lobby nobody was connected to for the lobby TTL


class Trigger(Enum):
    START = "start"  # a player pressed start
    GO = "go"  # the countdown elapsed
    EMPTIED = "emptied"  # the last player left during the countdown
    ALL_DONE = "all_done"  # every game is won, over or resigned
    TIME_UP = "time_up"  # the time limit elapsed
    IDLE = "idle"  # nobody connected to the lobby for the lobby TTL


TRANSITIONS: Mapping[tuple[RoomStatus, Trigger], RoomStatus] = {
    (RoomStatus.LOBBY, Trigger.START): RoomStatus.COUNTDOWN,
    (RoomStatus.COUNTDOWN, Trigger.GO): RoomStatus.RACING,
    (RoomStatus.COUNTDOWN, Trigger.EMPTIED): RoomStatus.LOBBY,
    (RoomStatus.RACING, Trigger.ALL_DONE): RoomStatus.FINISHED,
    (RoomStatus.RACING, Trigger.TIME_UP): RoomStatus.FINISHED,
    (RoomStatus.LOBBY, Trigger.IDLE): RoomStatus.CLOSED,
}


def next_status(status: RoomStatus, trigger: Trigger) -> RoomStatus:
    """The status after ``trigger``; WrongStatus when the table has no such transition."""
    try:
        return TRANSITIONS[(status, trigger)]
    except KeyError:
        raise WrongStatus(f"cannot {trigger.value} a room that is {status.value}") from None


def can(status: RoomStatus, trigger: Trigger) -> bool:
    return (status, trigger) in TRANSITIONS


_DONE = frozenset({"won", "over", "resigned"})


class PlayerStatus(Enum):
    WAITING = "waiting"
    PLAYING = "playing"
    WON = "won"
    OVER = "over"
    RESIGNED = "resigned"

    @property
    def done(self) -> bool:
        # By value: each member looked up on the class cost ~100 ns on Python 3.11, and this is
        # read for every racer at every move (0.8 µs a call, 2 % of a saturated server).
        return self._value_ in _DONE


@dataclass(frozen=True)
class Progress:
    """One racer's public progress: what everyone in the room sees live."""

    status: PlayerStatus = PlayerStatus.WAITING
    foundation: int = 0
    moves: int = 0
    finished_at: int | None = None
    reached_at: int | None = None

    def after(
        self, *, at: int, foundation: int, moved: bool, won: bool, over: bool, resigned: bool
    ) -> Progress:
        """The progress after one more game event at time ``at``."""
        status = PlayerStatus.PLAYING
        if won:
            status = PlayerStatus.WON
        elif resigned:
            status = PlayerStatus.RESIGNED
        elif over:
            status = PlayerStatus.OVER
        reached = self.reached_at if foundation == self.foundation else at
        return replace(
            self,
            status=status,
            foundation=foundation,
            moves=self.moves + (1 if moved else 0),
            finished_at=self.finished_at if self.finished_at is not None or not status.done else at,
            reached_at=reached if reached is not None else at,
        )

    def wire(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "foundation": self.foundation,
            "moves": self.moves,
            "finished_at": self.finished_at,
            "reached_at": self.reached_at,
        }


@dataclass(frozen=True)
class Entrant:
    """A racer as the ranking sees it; ``order`` is the join order, the last tie-break."""

    player: str
    name: str
    order: int
    progress: Progress


def _rank_key(entrant: Entrant) -> tuple[int, int, int, int]:
    p = entrant.progress
    far = 2**62
    if p.status is PlayerStatus.WON:
        return (0, p.finished_at if p.finished_at is not None else far, 0, entrant.order)
    reached = p.reached_at if p.reached_at is not None else far
    return (1, -p.foundation, reached, entrant.order)


def ranking(entrants: Iterable[Entrant]) -> list[dict[str, Any]]:
    """DESIGN.md: winners by finish time; then by cards on foundations, then by when reached."""
    ordered = sorted(entrants, key=_rank_key)
    return [
        {"place": i, "player": e.player, "name": e.name, **e.progress.wire()}
        for i, e in enumerate(ordered, start=1)
    ]
