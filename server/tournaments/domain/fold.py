"""A tournament folded from its stream: entrants, their sheets and streaks, races in play, the
standings and the podium (docs/tournaments.md). Pure: the store and the clock are outside.

Events are folded by a dispatch table after the lifecycle table allowed them, as rooms are
(``server.race.domain.fold``); the time-dependent status (upcoming, running, finishing) is asked
with the time, ``Tournament.phase(now)``, so the fold itself never reads a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from server.kernel.errors import WrongStatus
from server.tournaments.domain.events import (
    EntrantJoined,
    EntrantWithdrew,
    RacePaired,
    RaceScored,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    decode,
)
from server.tournaments.domain.pairing import last_stretch_ms
from server.tournaments.domain.scoring import on_fire, race_performance, race_points


class TournamentStatus(Enum):
    """The lifecycle the stream itself records (``Phase`` adds the clock's view of it)."""

    NEW = "new"  # nothing folded: the tournament does not exist
    OPEN = "open"  # created, not finished: upcoming, running or finishing by the clock
    FINISHED = "finished"


class Phase(Enum):
    """What a client is shown (docs/protocol.md, "Tournaments")."""

    UPCOMING = "upcoming"
    RUNNING = "running"
    FINISHING = "finishing"  # time is up, races are still being played
    FINISHED = "finished"


_S = TournamentStatus
TRANSITIONS: Mapping[tuple[TournamentStatus, type[TournamentEvent]], TournamentStatus] = {
    (_S.NEW, TournamentCreated): _S.OPEN,
    (_S.OPEN, EntrantJoined): _S.OPEN,
    (_S.OPEN, EntrantWithdrew): _S.OPEN,
    (_S.OPEN, RacePaired): _S.OPEN,
    (_S.OPEN, RaceScored): _S.OPEN,
    (_S.OPEN, TournamentFinished): _S.FINISHED,
}


def next_status(status: TournamentStatus, kind: type[TournamentEvent]) -> TournamentStatus:
    """The status after an event of ``kind``; WrongStatus when the table has no such pair."""
    try:
        return TRANSITIONS[(status, kind)]
    except KeyError:
        raise WrongStatus(f"a tournament that is {status.value} cannot have {kind.TYPE}") from None


@dataclass(frozen=True, slots=True)
class Result:
    """One race on an entrant's sheet."""

    room: str
    place: int
    of: int
    points: int
    doubled: bool
    berserk: bool
    timed_out: bool = False  # the racer's clock, or the race's time limit, ended their game

    def wire(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "place": self.place,
            "of": self.of,
            "points": self.points,
            "doubled": self.doubled,
            "berserk": self.berserk,
            "timed_out": self.timed_out,
        }


@dataclass(slots=True)
class Entrant:
    """An account in the tournament: its sheet, score, streak and where it is now."""

    account: str
    name: str
    rating: int
    order: int  # when it first joined, among the entrants
    active: bool = True
    free_since: int = 0  # when it last became free to be paired (joined, or a race ended)
    racing: str | None = None
    sheet: list[Result] = field(default_factory=list)
    score: int = 0
    run: int = 0  # first places in a row
    wins: int = 0
    last_opponents: frozenset[str] = frozenset()
    _performance_sum: float = 0.0
    # The rating its last rated race here left it at (``rating`` stays the one it joined with,
    # which pairing and the tie-break use); None before one.
    rating_after: int | None = None

    @property
    def rating_now(self) -> int:
        """The rating as it stands after this tournament's races, as far as they told."""
        return self.rating if self.rating_after is None else self.rating_after

    @property
    def performance(self) -> int | None:
        """The tie-break: mean performance over the races (None before the first)."""
        return round(self._performance_sum / len(self.sheet)) if self.sheet else None

    def fire(self, *, streaks: bool) -> bool:
        return on_fire(self.run, streaks=streaks)

    def rank_key(self) -> tuple[int, int, int, int, str]:
        """Score, then performance, then rating, then who joined first (smaller sorts first)."""
        performance = self.performance if self.performance is not None else -(10**6)
        return (-self.score, -performance, -self.rating, self.order, self.account)


@dataclass(frozen=True, slots=True)
class Race:
    """A race in play: its room and its racers."""

    room: str
    players: tuple[str, ...]
    at: int


class Tournament:
    """A tournament's fold. ``apply`` takes events in stream order; ``version`` is how many."""

    def __init__(self, tournament_id: str) -> None:
        self.id = tournament_id
        self.status = TournamentStatus.NEW
        self.version = 0
        self._settings: TournamentCreated | None = None
        self.entrants: dict[str, Entrant] = {}
        self.races: dict[str, Race] = {}  # in play, by room
        self.scored: set[str] = set()
        self.race_count = 0
        self.finished_at: int | None = None
        self._ranked: list[Entrant] | None = None
        self._standings: list[Entrant] | None = None
        self._ranks: dict[str, int] = {}
        # Accounts a moderator's fair-play mark keeps out of the standings and the podium shown
        # (they are still paired: a mark takes them out of what others see, not out of play).
        self.hidden: frozenset[str] = frozenset()
        # Accounts a moderator renamed, and their names now: the standings show them from then
        # on (the events keep the name each entrant joined under).
        self.renamed: Mapping[str, str] = {}

    def name_of(self, entrant: Entrant) -> str:
        """The name an entrant is shown under: a moderator's rename, or the one it joined as."""
        return self.renamed.get(entrant.account, entrant.name)

    @property
    def settings(self) -> TournamentCreated:
        if self._settings is None:
            raise WrongStatus("the tournament has not been created")
        return self._settings

    @property
    def exists(self) -> bool:
        return self._settings is not None

    @property
    def ends_at(self) -> int:
        return self.settings.starts_at + self.settings.length_ms

    @property
    def pairing_until(self) -> int:
        return self.ends_at - last_stretch_ms(self.settings.time_limit_ms)

    def phase(self, now: int) -> Phase:
        if self.status is TournamentStatus.FINISHED:
            return Phase.FINISHED
        if now < self.settings.starts_at:
            return Phase.UPCOMING
        return Phase.RUNNING if now < self.ends_at else Phase.FINISHING

    def racing_count(self) -> int:
        return sum(len(race.players) for race in self.races.values())

    def ranked(self) -> list[Entrant]:
        """Every entrant, best first, marked ones too: the order pairing goes by (cached until
        the next event)."""
        if self._ranked is None:
            self._ranked = sorted(self.entrants.values(), key=Entrant.rank_key)
        return self._ranked

    def standings(self) -> list[Entrant]:
        """The entrants shown, best first: every one but the ``hidden`` (cached likewise)."""
        if self._standings is None:
            self._standings = [e for e in self.ranked() if e.account not in self.hidden]
            self._ranks = {e.account: rank for rank, e in enumerate(self._standings, 1)}
        return self._standings

    def hide(self, accounts: frozenset[str]) -> None:
        """Keep ``accounts`` (those a fair-play mark holds on) out of the standings shown."""
        if accounts != self.hidden:
            self.hidden = accounts
            self._standings = None

    def rank_of(self, account: str) -> int | None:
        """An entrant's rank (1 = first), None for an account that never joined."""
        self.standings()
        return self._ranks.get(account)

    def podium(self) -> list[Entrant]:
        """The first three, once finished; nobody before."""
        if self.status is not TournamentStatus.FINISHED:
            return []
        return [e for e in self.standings()[:3] if e.sheet]

    def same_fold(self, other: Tournament) -> bool:
        """Whether two folds hold the same tournament (the archive's check before a delete)."""
        return self._state() == other._state()

    def _state(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.status,
            self.version,
            self._settings,
            self.entrants,
            self.races,
            self.scored,
            self.race_count,
            self.finished_at,
        )

    # ---- the fold ----------------------------------------------------------------------------

    def apply(self, event: TournamentEvent) -> None:
        """Fold one event; WrongStatus if the lifecycle refuses it (nothing changes then)."""
        status = next_status(self.status, type(event))
        _FOLDS[type(event)](self, event)
        self.status = status
        self.version += 1
        self._ranked = self._standings = None

    def apply_stored(self, data: Mapping[str, Any]) -> None:
        """Fold one stored map (CorruptEvent if it cannot be read)."""
        self.apply(decode(data))

    def _created(self, event: TournamentCreated) -> None:
        self._settings = event

    def _joined(self, event: EntrantJoined) -> None:
        entrant = self.entrants.get(event.account)
        if entrant is None:
            order = len(self.entrants)
            self.entrants[event.account] = Entrant(
                event.account, event.name, event.rating, order, free_since=event.at
            )
            return
        entrant.active, entrant.name = True, event.name
        entrant.free_since = max(entrant.free_since, event.at)

    def _withdrew(self, event: EntrantWithdrew) -> None:
        entrant = self.entrants.get(event.account)
        if entrant is not None:
            entrant.active = False

    def _paired(self, event: RacePaired) -> None:
        self.races[event.room] = Race(event.room, event.players, event.at)
        self.race_count += 1
        for account in event.players:
            if account in self.entrants:
                self.entrants[account].racing = event.room

    def _scored(self, event: RaceScored) -> None:
        race = self.races.pop(event.room, None)
        self.scored.add(event.room)
        players = race.players if race else tuple(r["account"] for r in event.results)
        of = len(event.results)
        streaks = self.settings.streaks
        for result in event.results:
            entrant = self.entrants.get(result["account"])
            if entrant is None:
                continue
            place = int(result["place"])
            berserk = bool(result.get("berserk")) and self.settings.berserk
            won = race_points(
                place, of, entrant.run, moves=int(result["moves"]), berserk=berserk, streaks=streaks
            )
            opponents = [
                self.entrants[r["account"]].rating
                for r in event.results
                if r["account"] != entrant.account and r["account"] in self.entrants
            ]
            mean = sum(opponents) / len(opponents) if opponents else entrant.rating
            entrant._performance_sum += race_performance(place, of, mean)
            entrant.sheet.append(
                Result(
                    event.room,
                    place,
                    of,
                    won.points,
                    won.doubled,
                    berserk,
                    bool(result.get("timed_out")),
                )
            )
            entrant.score += won.points
            if isinstance(result.get("rating"), int):
                entrant.rating_after = int(result["rating"])
            entrant.run = won.run
            entrant.wins += 1 if place == 1 and of >= 2 else 0
        for account in players:
            entrant = self.entrants.get(account)
            if entrant is not None and entrant.racing == event.room:
                entrant.racing = None
                entrant.free_since = max(entrant.free_since, event.at)
                entrant.last_opponents = frozenset(players) - {account}

    def _finished(self, event: TournamentFinished) -> None:
        self.finished_at = event.at


_FOLDS: Mapping[type[TournamentEvent], Callable[[Tournament, Any], None]] = {
    TournamentCreated: Tournament._created,
    EntrantJoined: Tournament._joined,
    EntrantWithdrew: Tournament._withdrew,
    RacePaired: Tournament._paired,
    RaceScored: Tournament._scored,
    TournamentFinished: Tournament._finished,
}


def fold(tournament_id: str, events: Iterable[Mapping[str, Any]]) -> Tournament:
    """A tournament from its stored events, in order."""
    tournament = Tournament(tournament_id)
    for data in events:
        tournament.apply_stored(data)
    return tournament
