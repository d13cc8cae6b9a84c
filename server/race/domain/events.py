"""Room events: the one home of the room stream's vocabulary.

Each event type is a frozen dataclass with its wire name (``TYPE``) and its fields; every event
is stored with ``"v": ROOM_EVENT_VERSION``. ``encode`` and ``decode`` are the only places that
turn them into or out of the plain maps a store holds, so a field is named in one place. Game
streams hold the shared game events (``shared/events.py``), with the client move id as ``cid``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from server.kernel.schema import Schema

ROOM_EVENT_VERSION = 1


@dataclass(frozen=True, slots=True)
class RoomEvent:
    """What every room event has: when it happened (ms since the epoch)."""

    TYPE: ClassVar[str]
    at: int


@dataclass(frozen=True, slots=True)
class RoomCreated(RoomEvent):
    """A room opened: its deal (seed or deck, committed to), its settings and its creator."""

    TYPE: ClassVar[str] = "room_created"
    variant: str
    seed: str | None
    deck: tuple[str, ...] | None
    salt: str
    commitment: str
    deal_version: int
    capacity: int
    countdown_ms: int
    time_limit_ms: int
    spectator_delay_ms: int
    open_seed: bool
    winnable: bool
    creator: str | None
    rated: bool = False  # counts for ratings if >= 2 racers are logged in (docs/ratings.md)
    # A daily challenge's attempt ("<variant>:<YYYY-MM-DD>"): nobody watches it, and its seed
    # is not shown, until that UTC day is over (server/daily/domain/days.py).
    daily: str = ""
    # A quick race's room: only these sessions (the matched players) may take its seats.
    members: tuple[str, ...] = ()
    # A tournament's race: the tournament it is scored into (server/tournaments/domain/fold.py).
    tournament: str = ""
    # A challenge's attempt (the challenge's code): watched, replayed or exported only as the
    # challenge allows (server/challenges/domain/challenge.py), its seed shown once it is settled.
    challenge: str = ""


@dataclass(frozen=True, slots=True)
class PlayerJoined(RoomEvent):
    """A seat taken; ``token_hash`` is the SHA-256 of the resume token, never the token."""

    TYPE: ClassVar[str] = "player_joined"
    player: str
    name: str
    token_hash: str
    connection: str | None
    account: str | None = None  # the racer's account name (as registered), None for a guest
    # A bot's level (1 to 5, server/bots/domain/player.py); 0 for a person. A bot never logs in.
    bot: int = 0


@dataclass(frozen=True, slots=True)
class PlayerLeft(RoomEvent):
    TYPE: ClassVar[str] = "player_left"
    player: str


@dataclass(frozen=True, slots=True)
class PlayerAway(RoomEvent):
    """The seat's live ``connection`` went away (on whichever process held it)."""

    TYPE: ClassVar[str] = "player_away"
    player: str
    connection: str | None


@dataclass(frozen=True, slots=True)
class PlayerBack(RoomEvent):
    """The seat is held by ``connection`` now (a resume: any older one is superseded)."""

    TYPE: ClassVar[str] = "player_back"
    player: str
    connection: str


@dataclass(frozen=True, slots=True)
class CountdownStarted(RoomEvent):
    TYPE: ClassVar[str] = "countdown_started"
    go_at: int


@dataclass(frozen=True, slots=True)
class CountdownCancelled(RoomEvent):
    """The last racer left during the countdown: back to the lobby."""

    TYPE: ClassVar[str] = "countdown_cancelled"


@dataclass(frozen=True, slots=True)
class RaceStarted(RoomEvent):
    TYPE: ClassVar[str] = "race_started"
    ends_at: int | None


@dataclass(frozen=True, slots=True)
class RaceFinished(RoomEvent):
    """``reason`` is ``all_done`` or ``time_limit``; ``ranking`` as docs/protocol.md shows it.
    ``games``: the version of each racer's game the end was decided from (``{player:
    version}``), its causes: every process folds those game events before the end, so nobody
    is told the end before them."""

    TYPE: ClassVar[str] = "race_finished"
    reason: str
    ranking: tuple[dict[str, Any], ...]
    games: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RoomClosed(RoomEvent):
    """A room closed before its race (``reason``: ``shared.protocol.CLOSED_IDLE`` or
    ``CLOSED_UNFILLED``)."""

    TYPE: ClassVar[str] = "room_closed"
    reason: str


@dataclass(frozen=True, slots=True)
class RematchOffered(RoomEvent):
    """A racer asked to race again once the race was over: ``room`` is the new room, made like
    this one on a new secret deal, where every racer of this one may take a seat."""

    TYPE: ClassVar[str] = "rematch_offered"
    room: str
    player: str


@dataclass(frozen=True, slots=True)
class PlayerBerserked(RoomEvent):
    """A tournament racer halved their own clock before the race (docs/tournaments.md)."""

    TYPE: ClassVar[str] = "player_berserked"
    player: str


EVENT_TYPES: Mapping[str, type[RoomEvent]] = {
    cls.TYPE: cls
    for cls in (
        RoomCreated,
        PlayerJoined,
        PlayerLeft,
        PlayerAway,
        PlayerBack,
        CountdownStarted,
        CountdownCancelled,
        RaceStarted,
        RaceFinished,
        RoomClosed,
        RematchOffered,
        PlayerBerserked,
    )
}

# Fields a stored event may lack, with the value an older writer meant by leaving them out.
_SCHEMA: Schema[RoomEvent] = Schema(
    "room",
    ROOM_EVENT_VERSION,
    EVENT_TYPES.values(),
    defaults={
        "seed": None,
        "deck": None,
        "creator": None,
        "connection": None,
        "ends_at": None,
        "open_seed": False,
        "winnable": False,
        "spectator_delay_ms": 0,
        "ranking": (),
        "rated": False,
        "account": None,
        "daily": "",
        "members": (),
        "tournament": "",
        "bot": 0,
        "challenge": "",
        "games": {},  # an end written before it named its causes: nothing to wait for
    },
    sequences=("deck", "ranking", "members"),
)


def encode(event: RoomEvent) -> dict[str, Any]:
    """The map a store keeps: ``type``, ``v`` and the fields (sequences as lists)."""
    return _SCHEMA.encode(event)


def decode(data: Mapping[str, Any]) -> RoomEvent:
    """The event a stored map holds; CorruptEvent for an unknown type or version, or a field
    missing that has no default."""
    return _SCHEMA.decode(data)
