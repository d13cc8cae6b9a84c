"""The first view of /watch/ROOM, rendered on the server (server/net/first_view.py): the room as
the room list shows it to anyone (``room_summary``: variant, status, racers' names), never a
card, a move or a place, which the spectator delay and fair spectating hold back. A challenge's
attempt, which the room list keeps out, gets the plain page. The page's script takes over."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from server.kernel.errors import NoSuchRoom
from server.net.first_view import FirstView, PageView, element
from server.race.services.commands import Commands

PATH = re.compile(r"/watch/([A-Za-z0-9]{1,32})")
VARIANT_NAME = {"swiss": "Swiss", "quadrennial": "Quadrennial"}
STATUS = {
    "lobby": "waiting for racers",
    "countdown": "about to start",
    "racing": "racing now",
    "finished": "finished",
}


def facts(summary: dict[str, Any]) -> str:
    """What the race is: its variant, racers, status and options, as the room list says."""
    variant = VARIANT_NAME.get(summary["variant"], summary["variant"])
    racers = summary["players"]
    text = f"A {variant} race of {racers} racer{'' if racers == 1 else 's'}"
    if summary["status"] == "lobby":
        text += f" ({racers} of {summary['capacity']} seats taken)"
    text += f", {STATUS.get(summary['status'], summary['status'])}"
    text += ". " + ("Rated" if summary["rated"] else "Unrated")
    text += ", an open seed." if summary["open_seed"] else ", a secret seed."
    return text


def first_view(summary: dict[str, Any]) -> FirstView:
    """A room's first view from its ``room_summary``."""
    names = summary["names"]
    racers = [element("li", {}, element("a", {"href": f"/@/{quote(n)}"}, n)) for n in names]
    body = element(
        "div",
        {"class": "first-view"},
        element("h1", {}, f"Room {summary['id']}"),
        element("p", {"class": "facts"}, facts(summary)),
        element("ul", {"aria-label": "racers"}, racers) if racers else None,
    )
    who = f" Racers: {', '.join(names)}." if names else ""
    return FirstView(
        title=f"Room {summary['id']}: a {VARIANT_NAME.get(summary['variant'], 'solitaire')} "
        "race · Solitaire Arena",
        description=f"{facts(summary)}{who} Watch every racer's board live.",
        body=body,
    )


class RacePage:
    """Renders /watch/ROOM through the race's commands, as ``list_rooms`` reads a room."""

    def __init__(self, commands: Commands) -> None:
        self.commands = commands

    def view(self) -> PageView:
        return PageView(PATH, self.render)

    async def render(self, match: re.Match[str]) -> FirstView | None:
        try:
            room = await self.commands.room(match.group(1))
        except NoSuchRoom:
            return None
        summary = room.summary()
        if summary.get("challenge"):
            return None  # kept out of the room list: its players find it, nobody else
        return first_view(summary)
