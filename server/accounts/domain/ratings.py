"""Ratings: the rated-race event (one home), the pure fold that turns the log into ratings, and
the decision of which race is rated.

Every rated race of a variant is one ``race_rated`` event in that variant's ratings stream,
appended at its expected version, so every process (live) and a rebuild fold the same races in
the same order through ``RatingTable.apply`` and get the same floats. The model is openskill's
Plackett-Luce (made for rankings of many players); the shown rating is conservative,
``1500 + 20 * (mu - 3 sigma)``, and a player with fewer than ``PROVISIONAL_GAMES`` is marked
provisional. docs/ratings.md says why these numbers.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, ClassVar

from openskill.models import PlackettLuce

from server.kernel.names import fold_name
from server.kernel.schema import Schema
from server.race.domain.model import Room
from server.race.domain.progress import PlayerStatus

RATING_EVENT_VERSION = 1
DISPLAY_BASE = 1500
DISPLAY_SCALE = 20
PROVISIONAL_GAMES = 10
RECENT = 20  # races kept per account for profiles
VARIANTS = ("swiss", "quadrennial")

MODEL = PlackettLuce()  # openskill's defaults: mu 25, sigma 25/3, beta sigma/2, tau mu/300


@dataclass(frozen=True, slots=True)
class RaceRated:
    """A rated race's outcome among its logged-in racers: ``racers`` are maps of ``account``,
    ``name``, ``place`` (the race's place), ``won``, ``time_ms`` (a win's time from the
    start, else None) and ``timed_out`` (their clock ended their game; absent in events
    written before it was: false), in the race's ranking order."""

    TYPE: ClassVar[str] = "race_rated"
    at: int
    room: str
    variant: str
    racers: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class FairPlayMarked:
    """A moderator's fair-play mark: the account's rated races count for nobody, as if they had
    been unrated, from the start of the log (its own rating and every rival's)."""

    TYPE: ClassVar[str] = "fair_play_marked"
    at: int
    account: str


@dataclass(frozen=True, slots=True)
class FairPlayUnmarked:
    """The mark taken back: the account's races count again, exactly as before the mark."""

    TYPE: ClassVar[str] = "fair_play_unmarked"
    at: int
    account: str


@dataclass(frozen=True, slots=True)
class RacerRenamed:
    """A moderator renamed the account (``account_renamed`` in its stream): the leaderboard
    shows ``name`` from here on, whatever name a race folded later was played under."""

    TYPE: ClassVar[str] = "racer_renamed"
    at: int
    account: str
    name: str


RatingEvent = RaceRated | FairPlayMarked | FairPlayUnmarked | RacerRenamed

SCHEMA: Schema[RatingEvent] = Schema(
    "rating",
    RATING_EVENT_VERSION,
    (RaceRated, FairPlayMarked, FairPlayUnmarked, RacerRenamed),
    sequences=("racers",),
)
encode = SCHEMA.encode
decode = SCHEMA.decode


def ratings_stream(variant: str) -> str:
    """One ordered stream per variant: its order is the order ratings are folded in."""
    return f"{{ratings:{variant}}}:ratings"


def display(mu: float, sigma: float) -> int:
    """The conservative rating shown: about 99.7 % sure the player is at least this good."""
    return round(DISPLAY_BASE + DISPLAY_SCALE * (mu - 3 * sigma))


def decide_rating(room: Room) -> RaceRated | None:
    """The ``race_rated`` event of a finished rated room; None when its race is not rated (not
    a rated room, not finished, or fewer than two logged-in racers)."""
    if not room.rated or room.finished is None or room.started_at is None:
        return None
    racers = []
    for rank in room.finished.ranking:
        seat = room.seats.get(rank["player"])
        if seat is None or seat.account is None:
            continue
        won = rank.get("status") == "won"
        finished_at = rank.get("finished_at")
        racers.append(
            {
                # The account's own name, not the seat's (a guest may have had it first).
                "account": fold_name(seat.account),
                "name": seat.account,
                "place": int(rank["place"]),
                "won": won,
                "time_ms": finished_at - room.started_at if won and finished_at else None,
                "timed_out": rank.get("status") == PlayerStatus.TIMED_OUT.value,
            }
        )
    if len(racers) < 2:
        return None
    return RaceRated(room.finished.at, room.id, room.settings.variant, tuple(racers))


@dataclass(frozen=True, slots=True)
class Change:
    """One racer's rating before and after a rated race, as shown."""

    account: str
    name: str
    place: int
    before: int
    after: int
    provisional: bool

    def wire(self) -> dict[str, Any]:
        return {
            "account": self.account,
            "name": self.name,
            "place": self.place,
            "before": self.before,
            "after": self.after,
            "delta": self.after - self.before,
            "provisional": self.provisional,
        }


@dataclass
class Standing:
    """One account's rating in one variant, and what its profile shows."""

    name: str
    skill: Any = field(default_factory=MODEL.rating)  # openskill's rating object (mu, sigma)
    games: int = 0
    wins: int = 0
    best_ms: int | None = None
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))

    @property
    def mu(self) -> float:
        return float(self.skill.mu)

    @property
    def sigma(self) -> float:
        return float(self.skill.sigma)

    @property
    def rating(self) -> int:
        return display(self.skill.mu, self.skill.sigma)

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES

    def row(self, account: str) -> dict[str, Any]:
        return {
            "account": account,
            "name": self.name,
            "rating": self.rating,
            "provisional": self.provisional,
            "games": self.games,
            "wins": self.wins,
        }


@dataclass
class RatingTable:
    """A variant's ratings as folded from its stream up to ``version``.

    A fair-play mark makes every race its account rated in count for nobody, from the start of
    the log: the table notes the mark and ``refold_from_start``, and whoever folds it folds the
    log again from the start into ``refolding()``, a table that knows the marked accounts from
    the first race on (``refold`` does it at once; the server does it a page at a time)."""

    variant: str
    version: int = 0
    players: dict[str, Standing] = field(default_factory=dict)
    races: dict[str, tuple[Change, ...]] = field(default_factory=dict)
    marked: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)  # account -> the name a rename gave
    refold_from_start: bool = False  # a mark or unmark changed the marked accounts
    replaying: bool = False  # folding the log again with ``marked`` known from the start

    def apply(self, version: int, data: dict[str, Any]) -> tuple[Change, ...]:
        """Fold the event at ``version`` (the next one); a race already rated changes nothing
        (a second append of it is never made, but a fold must not count it twice)."""
        if version != self.version + 1:
            raise ValueError(f"ratings {self.variant}: version {version} after {self.version}")
        self.version = version
        event = decode(data)
        if isinstance(event, FairPlayMarked | FairPlayUnmarked):
            if not self.replaying:  # a replay knows the marks that hold at its end
                held = set(self.marked)
                if isinstance(event, FairPlayMarked):
                    self.marked.add(event.account)
                else:
                    self.marked.discard(event.account)
                self.refold_from_start |= self.marked != held
            return ()
        if isinstance(event, RacerRenamed):
            self.names[event.account] = event.name
            if event.account in self.players:
                self.players[event.account].name = event.name
            return ()
        if event.room in self.races:
            return self.races[event.room]
        if any(r["account"] in self.marked for r in event.racers):
            self.races[event.room] = ()  # rated, and counting for nobody while the mark holds
            return ()
        names = [self.names.get(r["account"], r["name"]) for r in event.racers]
        standings = [
            self.players.setdefault(r["account"], Standing(name))
            for r, name in zip(event.racers, names, strict=True)
        ]
        # The rating objects themselves: rate() copies them, so ours are never changed in place.
        rated = MODEL.rate([[s.skill] for s in standings], ranks=[r["place"] for r in event.racers])
        changes = []
        for racer, name, standing, team in zip(event.racers, names, standings, rated, strict=True):
            before = standing.rating
            standing.name = name
            standing.skill = team[0]
            standing.games += 1
            if racer["won"]:
                standing.wins += 1
                time_ms = racer.get("time_ms")
                if time_ms is not None and (standing.best_ms is None or time_ms < standing.best_ms):
                    standing.best_ms = time_ms
            change = Change(
                racer["account"],
                name,
                racer["place"],
                before,
                standing.rating,
                standing.provisional,
            )
            changes.append(change)
            standing.recent.appendleft(
                {
                    "room": event.room,
                    "at": event.at,
                    "place": racer["place"],
                    "of": len(event.racers),
                    "timed_out": bool(racer.get("timed_out")),
                    "won": racer["won"],
                    "rating": change.after,
                    "delta": change.after - change.before,
                }
            )
        self.races[event.room] = tuple(changes)
        return self.races[event.room]

    def refolding(self) -> RatingTable:
        """An empty table to fold this one's log into again, its marks known from the start."""
        return RatingTable(self.variant, marked=set(self.marked), replaying=True)


def refold(table: RatingTable, log: list[dict[str, Any]]) -> RatingTable:
    """``table`` folded again from ``log`` (its stream from version 1) once a mark changed:
    everyone's ratings as if the marked accounts' races had never been rated."""
    fresh = table.refolding()
    for version, data in enumerate(log[: table.version], 1):
        fresh.apply(version, data)
    fresh.replaying = False
    return fresh


NEW_RATING = display(MODEL.rating().mu, MODEL.rating().sigma)
"""The rating of a logged-in player with no rated race yet (a quick race queues them at it)."""
