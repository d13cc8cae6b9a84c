"""Tournament events: the one home of a tournament stream's vocabulary.

A tournament is one stream (``tournament_stream``): created, then entrants joining and
withdrawing, races paired and scored, and its end. Standings, sheets and the podium are a pure
fold of it (``server.tournaments.domain.fold``). Each event is a frozen dataclass stored as
``{"type", "v": TOURNAMENT_EVENT_VERSION, fields...}`` through ``encode``/``decode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from server.kernel.schema import Schema

TOURNAMENT_EVENT_VERSION = 1


def tournament_stream(tournament: str) -> str:
    """The stream of a tournament; its id is the hash tag, so it lives in one Cluster slot."""
    return f"{{{tournament}}}:tournament"


@dataclass(frozen=True, slots=True)
class TournamentEvent:
    """What every tournament event has: when it happened (ms since the epoch)."""

    TYPE: ClassVar[str]
    at: int


@dataclass(frozen=True, slots=True)
class TournamentCreated(TournamentEvent):
    """A tournament announced: its settings, fixed for its whole life."""

    TYPE: ClassVar[str] = "tournament_created"
    id: str
    name: str
    variant: str
    starts_at: int
    length_ms: int
    time_limit_ms: int
    race_size: int
    rated: bool
    berserk: bool
    streaks: bool
    creator: str | None  # the creating account; None for a scheduled tournament
    creator_name: str | None


@dataclass(frozen=True, slots=True)
class EntrantJoined(TournamentEvent):
    """An account joined (or joined again after withdrawing: its points are kept). ``rating`` is
    its rating in the variant then: what opponents' performance is measured against."""

    TYPE: ClassVar[str] = "entrant_joined"
    account: str
    name: str
    rating: int


@dataclass(frozen=True, slots=True)
class EntrantWithdrew(TournamentEvent):
    """An entrant is no longer paired (``reason``: ``withdrew`` or ``abandoned``)."""

    TYPE: ClassVar[str] = "entrant_withdrew"
    account: str
    reason: str


@dataclass(frozen=True, slots=True)
class RacePaired(TournamentEvent):
    """A race formed: ``room`` (a room made for it, naming this tournament) and its racers."""

    TYPE: ClassVar[str] = "race_paired"
    room: str
    players: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RaceScored(TournamentEvent):
    """A paired race ended: ``results`` in finishing order, each ``{"account", "place",
    "moves", "berserk", "abandoned", "timed_out", "rating"?}`` (``timed_out`` absent before it
    was written: false; ``rating``: the racer's after the race, absent when it was not rated).
    Racers who never sat down have no result (an unfilled room scores nothing). Once per room:
    a second one is refused by the decision."""

    TYPE: ClassVar[str] = "race_scored"
    room: str
    results: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class TournamentFinished(TournamentEvent):
    """Time is up and every race is scored: the standings are final."""

    TYPE: ClassVar[str] = "tournament_finished"


EVENT_TYPES: Mapping[str, type[TournamentEvent]] = {
    cls.TYPE: cls
    for cls in (
        TournamentCreated,
        EntrantJoined,
        EntrantWithdrew,
        RacePaired,
        RaceScored,
        TournamentFinished,
    )
}

_SCHEMA: Schema[TournamentEvent] = Schema(
    "tournament",
    TOURNAMENT_EVENT_VERSION,
    EVENT_TYPES.values(),
    sequences=("players", "results"),
)


def encode(event: TournamentEvent) -> dict[str, Any]:
    """The map a store keeps: ``type``, ``v`` and the fields (sequences as lists)."""
    return _SCHEMA.encode(event)


def decode(data: Mapping[str, Any]) -> TournamentEvent:
    """The event a stored map holds; CorruptEvent for an unknown type, version or field."""
    return _SCHEMA.decode(data)
