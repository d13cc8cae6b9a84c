"""The first view of /tournament/ID, rendered on the server (server/net/first_view.py): its
name, facts, clock and first page of standings, from the very ``tournament`` and
``tournament_standings`` maps a follower is sent, so a link preview or a page without scripts
shows no more than any follower sees. The page's script (web/tournament.js) takes over."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from server.kernel.errors import NoSuchTournament
from server.net.first_view import FirstView, Markup, PageView, element
from server.runtime.clock import Clock
from server.tournaments.domain.standings import page_message, state
from server.tournaments.services.book import TournamentBook

PATH = re.compile(r"/tournament/([A-Za-z0-9]{1,64})")
VARIANT_NAME = {"swiss": "Swiss", "quadrennial": "Quadrennial"}
MEDALS = ("1st", "2nd", "3rd")


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else words or word + 's'}"


def clock(ms: int) -> str:
    """0:42, 12:05, 1:02:05: as the page's clock shows it."""
    s = max(0, -(-ms // 1000))
    hours, minutes, seconds = s // 3600, s % 3600 // 60, s % 60
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


def length(ms: int) -> str:
    minutes = round(ms / 60000)
    if minutes < 1:
        return f"{round(ms / 1000)} s"
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h" + (f" {minutes % 60}" if minutes % 60 else "")


def facts(t: dict[str, Any]) -> str:
    """The variant, length, races, rating and options: the page's facts line."""
    parts = [
        VARIANT_NAME.get(t["variant"], t["variant"]),
        length(t["length_ms"]),
        f"races of {t['race_size']} ({clock(t['time_limit_ms'])} each)",
        "rated" if t["rated"] else "unrated",
    ]
    parts += ["berserk allowed"] if t["berserk"] else []
    parts += ["streaks"] if t["streaks"] else []
    parts.append(plural(t["players"], "player"))
    return " · ".join(parts) + (f" · by {t['creator']}" if t["creator"] else "")


def when(t: dict[str, Any], now: int) -> str:
    """How it stands in time, as the page's clock line says it."""
    if t["status"] == "upcoming":
        return f"starts in {clock(t['starts_at'] - now)}"
    if t["status"] == "running":
        left = f"{clock(t['ends_at'] - now)} left"
        return left + (" · no more races: the last stretch" if now >= t["pairing_until"] else "")
    if t["status"] == "finishing":
        return "time is up: the last races are being played"
    return "finished"


def state_word(t: dict[str, Any], row: dict[str, Any], now: int) -> str:
    """A player's state in the standings: nobody waits once no race will be paired."""
    if row["racing"]:
        return "racing"
    if t["status"] in ("finishing", "finished") or now >= t["pairing_until"]:
        return "done"
    return "waiting" if row["active"] else "paused"


def summary(t: dict[str, Any], rows: list[dict[str, Any]], now: int) -> str:
    """The description of a shared link: what it is, when, and who leads."""
    time = when(t, now)
    text = f"A solitaire tournament: {facts(t)}. {time[:1].upper()}{time[1:]}."
    if rows and rows[0]["races"]:
        lead = rows[0]
        leads = "won" if t["status"] == "finished" else "leads"
        text += f" {lead['name']} {leads} with {plural(lead['score'], 'point')}."
    return text


def standings_table(t: dict[str, Any], rows: list[dict[str, Any]], now: int) -> Markup:
    columns = ("#", "player", "score", "sheet", "rating", "state")
    head = element("tr", {}, [element("th", {"scope": "col"}, c) for c in columns])
    body = [
        element(
            "tr",
            {"data-account": r["account"]},
            element("td", {}, r["rank"]),
            element("td", {}, element("a", {"href": f"/@/{quote(r['name'])}"}, r["name"])),
            element("td", {}, r["score"]),
            element("td", {}, " ".join(str(result["points"]) for result in r["sheet"])),
            element("td", {}, r["rating"]),
            element("td", {}, state_word(t, r, now)),
        )
        for r in rows
    ] or [element("tr", {}, element("td", {"colspan": "6"}, "Nobody has joined yet."))]
    return element(
        "table",
        {"class": "standings"},
        element("caption", {}, "Standings"),
        element("thead", {}, head),
        element("tbody", {}, body),
    )


def podium(t: dict[str, Any]) -> Markup | None:
    if not t["podium"]:
        return None
    steps = [
        element(
            "li",
            {},
            f"{MEDALS[i]} {r['name']}: {plural(r['score'], 'point')}, "
            f"{plural(r['races'], 'race')}, {plural(r['wins'], 'first place')}",
        )
        for i, r in enumerate(t["podium"][:3])
    ]
    return element(
        "section", {"aria-label": "podium"}, element("h2", {}, "Podium"), element("ol", {}, steps)
    )


def first_view(t: dict[str, Any], standings: dict[str, Any], now: int) -> FirstView:
    """The first view of a tournament's page from its ``tournament`` and first standings."""
    rows = standings["rows"]
    body = element(
        "div",
        {"class": "first-view"},
        element("h1", {}, t["name"]),
        element("p", {"class": "facts"}, facts(t)),
        element("p", {"class": "tournament-clock"}, when(t, now)),
        podium(t),
        standings_table(t, rows, now),
    )
    return FirstView(
        title=f"{t['name']} · tournament · Solitaire Arena",
        description=summary(t, rows, now),
        body=body,
    )


class TournamentPage:
    """Renders /tournament/ID through the book, as ``follow_tournament`` reads it."""

    def __init__(self, book: TournamentBook, clock: Clock) -> None:
        self.book = book
        self.clock = clock

    def view(self) -> PageView:
        return PageView(PATH, self.render)

    async def render(self, match: re.Match[str]) -> FirstView | None:
        try:
            tournament = await self.book.get(match.group(1).lower())
        except NoSuchTournament:
            return None
        now = self.clock.now_ms()
        return first_view(state(tournament, now), page_message(tournament, 1), now)
