"""A tournament as the terminal shows it: the standings table, a player's sheet, the line that
says what the player waits for, the podium, and the list of tournaments.

Pure functions of plain values (the standings as the server sends them, the time as an
argument), tested against fixed-width strings. Every line fits 80 columns; names are measured
by display width (a wide name never pushes a column out of line).
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from client.screen import format_clock
from client.text import cut, ljust, plural, rjust

WIDTH = 80
NAME_COLUMNS = 20
RATING_COLUMNS = 5
BOLD = "\x1b[1m"
YELLOW = "\x1b[33m"
RESET = "\x1b[0m"
STREAK_MARK = "x2"
"""After the score of a player on a streak: their next first place counts double."""
ELLIPSIS = "…"


class Presence(enum.Enum):
    """Where a player of a running tournament is: in a race, waiting to be paired, or paused
    (withdrawn: keeps their points, is not paired)."""

    RACING = "racing"
    WAITING = "waiting"
    PAUSED = "paused"
    DONE = "done"  # no more pairings (the tournament is over, or its last races are on)


@dataclass(frozen=True)
class Result:
    """One race on a player's sheet: the points it earned, whether they counted double (a
    streak), and whether the player went berserk in it."""

    points: int
    double: bool = False
    berserk: bool = False
    timed_out: bool = False  # the clock ended the player's game, not the player


@dataclass(frozen=True)
class Standing:
    """One row of the standings."""

    rank: int
    name: str
    score: int
    sheet: tuple[Result, ...] = ()
    streak: bool = False
    rating: int | None = None
    presence: Presence = Presence.WAITING
    me: bool = False


def _tokens(sheet: Sequence[Result], columns: int) -> tuple[list[int], str, bool]:
    """Which races fit in ``columns`` (the newest, oldest dropped first), the glue between
    their figures, and whether any was dropped."""
    texts = [_figure(r) for r in sheet]
    glue = " "  # always: a 2 then a 0 must not read as 20
    shown = list(range(len(sheet)))
    while shown:
        used = sum(len(texts[i]) for i in shown) + len(glue) * (len(shown) - 1)
        dropped = len(shown) < len(sheet)
        if used + (len(ELLIPSIS) + len(glue) if dropped else 0) <= columns:
            return shown, glue, dropped
        shown.pop(0)
    return shown, glue, bool(sheet)


def _figure(result: Result) -> str:
    return f"{result.points}{'b' if result.berserk else ''}"


def sheet_text(sheet: Sequence[Result], columns: int, *, color: bool = False) -> str:
    """The sheet as lichess writes it: one figure per race, oldest first, a berserk race's
    marked ``b``; races that counted double (a streak) in colour. When it is too long, the
    oldest races give way to ``…``."""
    shown, glue, dropped = _tokens(sheet, columns)
    figures = [
        f"{YELLOW}{_figure(sheet[i])}{RESET}" if color and sheet[i].double else _figure(sheet[i])
        for i in shown
    ]
    return (ELLIPSIS + glue if dropped else "") + glue.join(figures)


def _header_row(sheet_columns: int) -> str:
    return (
        f"  {'#':>4}  {ljust('name', NAME_COLUMNS)}  {'score':>6}  {ljust('sheet', sheet_columns)}"
        f"  {'rating':>{RATING_COLUMNS + 1}}  state"
    ).rstrip()


def _fixed_columns() -> int:
    # marker, rank, name, score, rating, state: what the sheet leaves to the others.
    return 2 + 4 + 2 + NAME_COLUMNS + 2 + 6 + 2 + 2 + RATING_COLUMNS + 1 + 2 + len("waiting")


def standings_lines(
    rows: Sequence[Standing],
    *,
    mine: Standing | None = None,
    players: int | None = None,
    page: int = 1,
    pages: int = 1,
    width: int = WIDTH,
    color: bool = False,
) -> list[str]:
    """The table: rank, name, score (``x2`` when on a streak), sheet, rating and where each
    player is; the player's own row marked with ``>`` and, when it is not on the page shown
    (``mine``), after a gap. ``players`` is how many the whole table holds."""
    sheet_columns = max(6, width - _fixed_columns())
    lines = [_header_row(sheet_columns)]

    def line(row: Standing) -> str:
        score = f"{row.score}{' ' + STREAK_MARK if row.streak else ''}"
        rating = "" if row.rating is None else str(row.rating)
        sheet = sheet_text(row.sheet, sheet_columns)
        painted = sheet_text(row.sheet, sheet_columns, color=color)
        text = (
            f"{'>' if row.me else ' '} {row.rank:>4}  "
            f"{ljust(cut(row.name, NAME_COLUMNS, ellipsis=ELLIPSIS), NAME_COLUMNS)}  "
            f"{score:>6}  {painted}{' ' * max(0, sheet_columns - len(sheet))}  "
            f"{rjust(rating, RATING_COLUMNS + 1)}  {row.presence.value}"
        )
        return f"{BOLD}{text}{RESET}" if row.me and color else text

    lines.extend(line(row) for row in rows)
    if mine is not None and all(not row.me for row in rows):
        lines.append(f"  {'...':>4}")
        lines.append(line(mine))
    if not rows:
        lines.append("  nobody has joined yet")
    elif pages > 1:
        total = "" if players is None else f"{plural(players, 'player')}, "
        lines.append(f"  {total}page {page} of {pages}: 'page N' shows another")
    return lines


def sheet_line(row: Standing) -> str:
    """The player's own sheet in words: "Your sheet: 2 0 4 4 = 10 points, rank 3, 4 races. On
    a streak: your next first place counts double."."""
    if not row.sheet:
        return f"Your sheet: no race yet; rank {row.rank}, {plural(row.score, 'point')}."
    figures = " ".join(f"{r.points}{'b' if r.berserk else ''}" for r in row.sheet)
    streak = " On a streak: your next first place counts double." if row.streak else ""
    late = [str(i) for i, r in enumerate(row.sheet, 1) if r.timed_out]
    clock = (
        f" You ran out of time in race {', '.join(late)}."
        if len(late) == 1
        else f" You ran out of time in races {', '.join(late)}."
        if late
        else ""
    )
    return (
        f"Your sheet: {figures} = {plural(row.score, 'point')}, rank {row.rank}, "
        f"{plural(len(row.sheet), 'race')}.{streak}{clock}"
    )


class Phase(enum.Enum):
    """A tournament's life as a client shows it."""

    UPCOMING = "upcoming"
    RUNNING = "running"
    FINISHING = "finishing"  # time is up; the races still on are played and count
    FINISHED = "finished"


def wait_line(
    *,
    phase: Phase,
    now_ms: int,
    starts_at: int,
    ends_at: int,
    presence: Presence | None,
    waiting_since: int | None = None,
    waiting: int | None = None,
    pairing_until: int | None = None,
) -> str:
    """What the player waits for, on the server's clock (``now_ms``): the start, the next
    pairing, the last races, or nothing (paused, over, or the last stretch: from
    ``pairing_until`` no race is paired, less than a race's time being left)."""
    if phase is Phase.UPCOMING:
        return (
            f"The tournament starts in {format_clock(starts_at - now_ms)}: stay here to be paired."
        )
    if phase is Phase.FINISHED:
        return "The tournament is over: the standings are final."
    if phase is Phase.FINISHING:
        return "No more pairings: the last races are being played; the standings follow them."
    left = format_clock(ends_at - now_ms)
    last_stretch = pairing_until is not None and now_ms >= pairing_until
    if last_stretch and presence is not Presence.RACING:
        return (
            f"No more races: the last stretch ({left} left, less than a race). The races still "
            "on are played out; the standings follow them."
        )
    if presence is Presence.PAUSED:
        return f"Paused: you are not paired. {left} left; 'join' to play again."
    if presence is Presence.RACING:
        return f"In a race. {left} left."
    since = "" if waiting_since is None else f" for {format_clock(now_ms - waiting_since)}"
    others = "" if waiting is None else f", {waiting} waiting"
    return f"Waiting to be paired{since}{others}. {left} left in the tournament."


BERSERK_MIN_MOVES = 20
"""A berserk racer's first place earns +1 when made in at least this many moves."""


def berserk_hint(tournament: Mapping[str, Any]) -> str:
    """What a racer may type before a race's start, when the tournament allows berserk: the
    clock it leaves them, said before they choose."""
    if not tournament.get("berserk") or not tournament.get("time_limit_ms"):
        return ""
    limit = int(tournament["time_limit_ms"])
    return f"Type 'berserk' to race on {format_clock(limit // 2)} instead of {format_clock(limit)}."


def berserk_line(tournament: Mapping[str, Any]) -> str:
    """What a racer is told once they went berserk: the clock they now have, and the bonus."""
    limit = int(tournament.get("time_limit_ms") or 0)
    clock = f" to {format_clock(limit // 2)}" if limit else ""
    return (
        f"Berserk: your clock is halved{clock}; a first place in {BERSERK_MIN_MOVES} moves or "
        "more earns +1."
    )


@dataclass(frozen=True)
class Place:
    """One step of the podium."""

    rank: int
    name: str
    score: int
    races: int
    wins: int


_MEDALS = {1: "1st", 2: "2nd", 3: "3rd"}


def podium_lines(podium: Sequence[Place], *, name: str) -> list[str]:
    """The podium once the tournament is over: the first three, with score, races and first
    places (a race's; a *win* is all 52 cards up)."""
    lines = [f"{name}: the podium"]
    for place in podium[:3]:
        lines.append(
            f"  {_MEDALS.get(place.rank, str(place.rank)):>3}  "
            f"{ljust(cut(place.name, NAME_COLUMNS, ellipsis=ELLIPSIS), NAME_COLUMNS)}  "
            f"{plural(place.score, 'point'):>10}  {plural(place.races, 'race'):>9}, "
            f"{plural(place.wins, 'first place')}"
        )
    if not podium:
        lines.append("  nobody played a race")
    return lines


@dataclass(frozen=True)
class Listing:
    """One tournament of the list."""

    id: str
    name: str
    variant: str
    phase: Phase
    starts_at: int
    ends_at: int
    players: int
    rated: bool = True
    winner: str | None = None


def _when(item: Listing, now_ms: int) -> str:
    if item.phase is Phase.UPCOMING:
        return f"in {format_clock(item.starts_at - now_ms)}"
    if item.phase is Phase.RUNNING:
        return f"{format_clock(item.ends_at - now_ms)} left"
    if item.phase is Phase.FINISHING:
        return "last races on"
    return f"won by {item.winner}" if item.winner else "over"


def list_lines(items: Sequence[Listing], *, now_ms: int, width: int = WIDTH) -> list[str]:
    """`solitaire tournament list`: live ones first, then upcoming (soonest first), then
    finished (newest first); id, name, variant, length, players and when."""
    order = {Phase.RUNNING: 0, Phase.FINISHING: 0, Phase.UPCOMING: 1, Phase.FINISHED: 2}

    def key(item: Listing) -> tuple[int, int]:
        return (
            order[item.phase],
            -item.starts_at if item.phase is Phase.FINISHED else item.starts_at,
        )

    lines = [f"{'id':<10} {ljust('name', 24)} {'game':<11} {'length':>6} {'players':>7}  when"]
    for item in sorted(items, key=key):
        line = (
            f"{ljust(cut(item.id, 10), 10)} {ljust(cut(item.name, 24, ellipsis=ELLIPSIS), 24)} "
            f"{item.variant:<11} {length_text(item.ends_at - item.starts_at):>6} "
            f"{item.players:>7}  {_when(item, now_ms)}"
        )
        lines.append(cut(line, width, ellipsis=ELLIPSIS))
    if not items:
        lines.append("(no tournaments: 'solitaire tournament create' makes one)")
    return lines


# -- from the wire (docs/protocol.md, "Tournaments") -------------------------------------------


def standing(row: Mapping[str, Any], *, me: str | None) -> Standing:
    """A `row` of `tournament_standings`; ``me`` is this client's account (case-folded). The
    rating shown is the live one (``rating_now``), the one at entry from a server before it."""
    ratings = (row.get("rating_now"), row.get("rating"))
    if row.get("racing"):
        presence = Presence.RACING
    elif row.get("active"):
        presence = Presence.WAITING
    else:
        presence = Presence.PAUSED
    return Standing(
        rank=int(row["rank"]),
        name=str(row["name"]),
        score=int(row["score"]),
        sheet=tuple(
            Result(
                int(r["points"]),
                bool(r.get("doubled")),
                bool(r.get("berserk")),
                bool(r.get("timed_out")),
            )
            for r in row.get("sheet") or ()
        ),
        streak=bool(row.get("fire")),
        rating=next((r for r in ratings if isinstance(r, int)), None),
        presence=presence,
        me=me is not None and str(row.get("account", "")).casefold() == me.casefold(),
    )


def done(row: Standing, *, over: bool) -> Standing:
    """A row once nobody is paired any more: not racing means done, not waiting."""
    if over and row.presence is not Presence.RACING:
        return replace(row, presence=Presence.DONE)
    return row


def places(rows: Sequence[Mapping[str, Any]]) -> list[Place]:
    """The podium of a finished `tournament` from its rows."""
    return [
        Place(int(r["rank"]), str(r["name"]), int(r["score"]), int(r["races"]), int(r["wins"]))
        for r in rows
    ]


def listing(summary: Mapping[str, Any]) -> Listing:
    """One `summary` of `tournaments`."""
    podium = summary.get("podium") or []
    return Listing(
        id=str(summary["id"]),
        name=str(summary["name"]),
        variant=str(summary["variant"]),
        phase=Phase(summary["status"]),
        starts_at=int(summary["starts_at"]),
        ends_at=int(summary["ends_at"]),
        players=int(summary["players"]),
        rated=bool(summary.get("rated", True)),
        winner=str(podium[0]["name"]) if podium else None,
    )


def length_text(ms: int) -> str:
    """A length as people say it: "30 min", "2 h", "1 h 30"."""
    minutes = max(0, ms) // 60_000
    if minutes < 60:
        return f"{minutes} min" if minutes else f"{max(0, ms) // 1000} s"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h" + (f" {rest:02d}" if rest else "")


def facts_line(tournament: Mapping[str, Any]) -> str:
    """What kind of tournament it is, in one line: "Swiss, 30 min, races of 2 (3:00 each),
    rated, berserk, streaks; 12 players"."""
    each = format_clock(int(tournament["time_limit_ms"]))
    parts = [
        str(tournament["variant"]).capitalize(),
        length_text(int(tournament["length_ms"])),
        f"races of {tournament['race_size']} ({each} each)",
        "rated" if tournament.get("rated") else "unrated",
    ]
    if tournament.get("berserk"):
        parts.append("berserk")
    if tournament.get("streaks"):
        parts.append("streaks")
    return ", ".join(parts) + f"; {plural(int(tournament.get('players', 0)), 'player')}"


def lobby_lines(
    tournament: Mapping[str, Any],
    standings: Mapping[str, Any] | None,
    *,
    me: str | None,
    width: int = WIDTH,
    color: bool = False,
) -> list[str]:
    """What the screen shows between races: what kind of tournament it is, the podium once it
    is over, the standings page followed, and the player's own sheet."""
    lines = textwrap.wrap(facts_line(tournament), width=width)
    podium = tournament.get("podium")
    if tournament.get("status") == Phase.FINISHED.value and podium is not None:
        lines.extend(podium_lines(places(podium), name=str(tournament["name"])))
    if standings is None:
        return lines
    over = tournament.get("status") in (Phase.FINISHING.value, Phase.FINISHED.value)
    rows = [done(standing(row, me=me), over=over) for row in standings["rows"]]
    mine = done(standing(standings["me"], me=me), over=over) if standings.get("me") else None
    lines.append("")
    lines.extend(
        standings_lines(
            rows,
            mine=mine,
            players=int(standings["players"]),
            page=int(standings["page"]),
            pages=int(standings["pages"]),
            width=width,
            color=color,
        )
    )
    if mine is not None:
        lines.extend(textwrap.wrap(sheet_line(mine), width=width))
    return lines
