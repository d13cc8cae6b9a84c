"""A deal played alone at a time of one's own, compared afterwards: the daily challenge's and a
challenge's attempts. How an attempt stands (read from its solo room), the standings' order
(the race ranking: wins by time, then cards on foundations and when they were reached) and a
standings line on the wire. Pure: the room and the time are arguments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from server.race.domain.lifecycle import ENDED
from server.race.domain.model import Room
from server.race.domain.progress import PlayerStatus, Progress


class Outcome(Enum):
    """How an attempt stands: still being played, or how it ended."""

    PLAYING = "playing"
    WON = "won"
    OVER = "over"
    RESIGNED = "resigned"

    @property
    def done(self) -> bool:
        return self is not Outcome.PLAYING


_OUTCOMES = {
    PlayerStatus.WAITING: Outcome.PLAYING,
    PlayerStatus.PLAYING: Outcome.PLAYING,
    PlayerStatus.WON: Outcome.WON,
    PlayerStatus.OVER: Outcome.OVER,
    PlayerStatus.RESIGNED: Outcome.RESIGNED,
    PlayerStatus.TIMED_OUT: Outcome.OVER,  # as any game the time limit ended
}


@dataclass(frozen=True, slots=True)
class Attempt:
    """One account's attempt as the standings show it: status, time and cards on foundations.

    ``elapsed_ms`` is the time played (the winning time for a win); ``reached_ms`` the time at
    which the last of ``foundations`` cards was put up."""

    account: str
    name: str
    outcome: Outcome
    elapsed_ms: int
    foundations: int
    reached_ms: int
    room: str = ""


def attempt_in(room: Room, account: str, *, now: int) -> Attempt | None:
    """The attempt played in a solo ``room`` as it stands at ``now``; None when nobody ever
    sat in it (its player never saw the deal). A game the time limit ended is over, as is
    one whose room closed before it began."""
    seat = next(iter(room.seats.values()), None)
    if seat is None:
        return None
    game = room.games.get(seat.player)
    start = room.started_at or 0
    if game is None and room.status not in ENDED:
        return Attempt(account, seat.name, Outcome.PLAYING, 0, 0, 0, room.id)
    progress = game.progress if game is not None else Progress()
    end = progress.finished_at or (room.finished.at if room.finished else None)
    outcome = _OUTCOMES[progress.status]
    if outcome is Outcome.PLAYING and room.status in ENDED:
        outcome = Outcome.OVER  # time ran out, or the room closed before its race began
    elapsed = max(0, (end or now) - start) if room.started_at is not None else 0
    return Attempt(
        account,
        seat.name,
        outcome,
        elapsed,
        progress.foundation,
        max(0, (progress.reached_at or start) - start),
        room.id,
    )


def ranked(attempts: Iterable[Attempt]) -> list[Attempt]:
    """The standings: wins first by time, then by cards on foundations (more first) and the time
    they were reached (earlier first); ties by name."""

    def key(a: Attempt) -> tuple[int, int, int, int, str]:
        if a.outcome is Outcome.WON:
            return (0, a.elapsed_ms, 0, 0, a.name.casefold())
        return (1, 0, -a.foundations, a.reached_ms, a.name.casefold())

    return sorted(attempts, key=key)


def standing_row(attempt: Attempt, place: int, *, revealed: bool) -> dict[str, object]:
    """A standings line on the wire: results only while the deal is secret; the room (to
    replay the attempt) once its games may be shown."""
    row: dict[str, object] = {
        "place": place,
        "account": attempt.account,
        "name": attempt.name,
        "status": attempt.outcome.value,
        "elapsed_ms": attempt.elapsed_ms,
        "foundations": attempt.foundations,
        "reached_ms": attempt.reached_ms,
    }
    if revealed and attempt.room:
        row["room"] = attempt.room
    return row
