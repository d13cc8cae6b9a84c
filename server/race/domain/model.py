"""The room model: a room and its racers' games as folded from their streams, and who is in it.

The projection folds events into it; commands read it to decide; delivery renders it. It holds
no connection, task or timer, so it is the same in every process that folded the same events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from server.race.domain.events import RaceFinished, RoomCreated
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.progress import Entrant, Progress
from shared import protocol as p
from shared.state import GameState

_WAIT_S = 10.0


def room_stream(room: str) -> str:
    return f"{{{room}}}:room"


def game_stream(room: str, player: str) -> str:
    return f"{{{room}}}:game:{player}"


def token_hash(token: str) -> str:
    """What the room stream keeps of a resume token: never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(slots=True)
class Seat:
    """A racer's seat; ``connection`` names the live connection holding it (any process), and
    ``away_since`` is when the last one went away (None while connected)."""

    player: str
    name: str
    token_hash: str
    order: int
    connection: str | None = None
    away_since: int | None = None
    account: str | None = None  # a logged-in racer's account name (as registered)
    bot: int = 0  # a bot's level (1 to 5); 0 for a person
    berserk: bool = False  # a tournament racer who halved their own clock

    def wire(self) -> dict[str, Any]:
        return {
            "connected": self.connection is not None,
            "away_since": self.away_since,
            "berserk": self.berserk,
            "bot": self.bot or None,
        }


@dataclass(eq=False, slots=True)
class Game:
    """One racer's game as folded from its stream (the private state stays on the server)."""

    player: str
    stream: str
    state: GameState | None = None
    version: int = 0
    # Each public event packed (msgpack) once: frames splice them in, and bytes are nothing
    # for the garbage collector to traverse (dicts of lists were most of a live server's heap).
    public: list[bytes] = field(default_factory=list)
    progress: Progress = field(default_factory=Progress)
    cids: dict[Any, int] = field(default_factory=dict)
    cid_moves: dict[Any, str | None] = field(default_factory=dict)  # what each id asked for
    # The cards each event turned face up (index version - 1), and every card this racer has
    # seen so far (the layout and all it revealed): what fair spectating compares.
    reveals: list[tuple[str, ...]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def compact(self) -> None:
        """Keep what a game's summary shows (its progress and version) and drop what only its
        events give: the position, the packed events, the move ids, the cards seen. A game of
        an ended room nobody here watches is read again from its stream before anyone needs
        those (server.race.services.hub)."""
        self.state = None
        for held in (self.public, self.cids, self.cid_moves, self.reveals, self.seen):
            held.clear()  # emptied, not replaced: a cleared container gives its table back


@dataclass(eq=False)
class FairnessKept:
    """The last ``common_cards`` of a room and what it was computed from (server.race.domain.
    fairness): the games holding viewers back, the layout of a racer not started (None if
    none), and the version of each game counted. Derived from the folded model alone."""

    holders: tuple[Game, ...]
    layout: tuple[str, ...] | None
    versions: list[int]
    common: set[str] | None


@dataclass(eq=False, slots=True)
class Room:
    """A room as folded from its streams: the truth every command checks and every view shows.

    Nothing here knows about connections or timers: delivery and the race clock keep their own
    state per room, fed by what the projection says changed.
    """

    id: str
    meta: RoomCreated | None = None  # None until room_created is folded
    version: int = 0
    status: RoomStatus = RoomStatus.NEW
    seats: dict[str, Seat] = field(default_factory=dict)
    games: dict[str, Game] = field(default_factory=dict)
    go_at: int | None = None
    countdown_at: int | None = None
    started_at: int | None = None
    ends_at: int | None = None
    finished: RaceFinished | None = None
    closed_at: int | None = None
    closed_reason: str | None = None  # RoomClosed's: idle (nobody came back) or unfilled
    rematch: str | None = None  # the room of this race's rematch, once a racer asked for one
    joined_count: int = 0
    idle_since: int | None = None  # since when no seated player is connected (None: someone is)
    fairness: FairnessKept | None = None  # kept by server.race.domain.fairness.common_cards
    archived: bool = False  # folded from the archive: the live store no longer has it
    # Only the summary is kept (an ended room nobody here is in): the results, ranking, seed
    # reveal and each racer's progress; its games' events are read again before any use.
    compacted: bool = False

    @property
    def stream(self) -> str:
        return room_stream(self.id)

    def clock_ends_at(self, player: str) -> int | None:
        """When ``player``'s own clock runs out: the race's end, or half-way for a racer who
        berserked (docs/tournaments.md)."""
        seat = self.seats.get(player)
        if seat is None or not seat.berserk or self.started_at is None or self.meta is None:
            return self.ends_at
        if not self.meta.time_limit_ms:
            return self.ends_at
        return self.started_at + self.meta.time_limit_ms // 2

    def reset(self) -> None:
        """Forget everything folded, to fold the room again from its streams (a stream went
        back): the object stays, so whoever holds it sees the new fold."""
        for f in fields(self):
            if f.name != "id":
                setattr(self, f.name, getattr(_EMPTY, f.name))
        self.seats, self.games = {}, {}

    def compact(self) -> None:
        """Keep the summary only (see ``compacted``): an ended room waiting to be unloaded
        costs a few KiB, not every folded event."""
        for game in self.games.values():
            game.compact()
        self.fairness = None
        self.compacted = True

    @property
    def settings(self) -> RoomCreated:
        """How the room was created; only asked of a room that exists."""
        assert self.meta is not None, f"room {self.id} has no room_created"
        return self.meta

    @property
    def delay_ms(self) -> int:
        return self.meta.spectator_delay_ms if self.meta is not None else 0

    @property
    def open_seed(self) -> bool:
        """The creator chose the seed (or deck), so the creator can know the deck."""
        return self.meta is not None and self.meta.open_seed

    @property
    def winnable(self) -> bool:
        return self.meta is not None and self.meta.winnable

    @property
    def rated(self) -> bool:
        """The room's race counts for ratings when at least two racers are logged in, and
        never with a bot in it (docs/ratings.md, "Bots"): a bot seated makes it unrated."""
        return self.meta is not None and self.meta.rated and not self.bots()

    def bots(self) -> list[Seat]:
        """The seats bots hold (server/bots/domain/player.py)."""
        return [s for s in self.seats.values() if s.bot]

    def streams(self) -> list[str]:
        """The room's stream and its games' streams."""
        return [self.stream, *(g.stream for g in self.games.values())]

    def version_of(self, stream: str) -> int:
        """How far the fold of one of the room's streams is (0: not folded, or unknown)."""
        if stream == self.stream:
            return self.version
        game = self.games.get(stream.rsplit(":", 1)[1])
        return game.version if game is not None else 0

    def names(self) -> list[str]:
        return [s.name for s in self.seats.values()]

    def entrants(self, shown: Callable[[Game], Progress] | None = None) -> list[Entrant]:
        """The racers with their progress: live, or as ``shown`` says a viewer has seen it."""
        entrants = []
        for s in self.seats.values():
            game = self.games.get(s.player)
            progress = (
                Progress() if game is None else game.progress if shown is None else shown(game)
            )
            entrants.append(Entrant(s.player, s.name, s.order, progress, s.bot))
        return entrants

    def all_done(self) -> bool:
        return bool(self.seats) and all(
            s.player in self.games and self.games[s.player].progress.status.done
            for s in self.seats.values()
        )

    def summary(self) -> dict[str, Any]:
        """The room as ``list_rooms`` shows it (docs/protocol.md, ``room_summary``)."""
        meta = self.settings
        return {
            "id": self.id,
            "variant": meta.variant,
            "status": self.status.value,
            "players": len(self.seats),
            "capacity": meta.capacity,
            "spectators": 0,
            "created_at": meta.at,
            "finished_at": self.finished.at if self.finished else None,
            "open_seed": self.open_seed,
            "winnable": self.winnable,
            "rated": self.rated,
            "names": self.names(),
            # Which racers are logged in (None: a guest): what the viewer's TV ranks races by.
            "accounts": [s.account for s in self.seats.values()],
            # Which racers are bots (their level; None: a person), in the order of ``names``.
            "bots": [s.bot or None for s in self.seats.values()],
            # A challenge's attempt: kept out of the room list (server/race/services/directory.py).
            **({"challenge": meta.challenge} if meta.challenge else {}),
        }

    def finished_message(self) -> dict[str, Any]:
        assert self.finished is not None
        meta = self.settings
        return {
            "type": p.FINISHED,
            "room": self.id,
            "at": self.finished.at,
            "reason": self.finished.reason,
            "ranking": list(self.finished.ranking),
            "variant": meta.variant,
            "deal_version": meta.deal_version,
            # A daily's seed: daily_results, after the day; a challenge's: once it is settled.
            "seed": None if meta.daily or meta.challenge else meta.seed,
            "salt": meta.salt,
            "commitment": meta.commitment,
        }


_EMPTY = Room("")
