"""The first view of /@/NAME, rendered on the server (server/net/first_view.py): the player's
name and ratings, read from the accounts and the ratings as the ``profile`` request reads them
(its ``player_card``, which any guest may ask for). The page's script takes over."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from server.accounts.domain.ratings import VARIANTS
from server.accounts.services.accounts import Accounts
from server.accounts.services.ratings import Ratings
from server.kernel.names import bot_level_of_name, clean_name
from server.net.first_view import FirstView, PageView, element
from shared.errors import ArenaError

PATH = re.compile(r"/@/([^/]{1,80})")
VARIANT_NAME = {"swiss": "Swiss", "quadrennial": "Quadrennial"}


def rating_text(r: dict[str, Any]) -> str:
    """ "Swiss 1569? (rank 3 of 40, 12 races, 2 won)": a rating as the profile shows it."""
    shown = f"{r['rating']}{'?' if r['provisional'] else ''}"
    rank = f"rank {r['rank']} of {r['players']}, " if r["rank"] is not None else ""
    races = f"{r['games']} race{'' if r['games'] == 1 else 's'}"
    return (
        f"{VARIANT_NAME.get(r['variant'], r['variant'])} {shown} ({rank}{races}, {r['wins']} won)"
    )


def first_view(name: str, ratings: list[dict[str, Any]]) -> FirstView:
    """A player's first view from their name and ratings."""
    said = "; ".join(rating_text(r) for r in ratings) if ratings else "no rated race yet"
    body = element(
        "div",
        {"class": "first-view"},
        element("h1", {}, name),
        element(
            "ul", {"aria-label": "ratings"}, [element("li", {}, rating_text(r)) for r in ratings]
        )
        if ratings
        else element("p", {}, "No rated race yet."),
    )
    return FirstView(
        title=f"{name} · Solitaire Arena",
        description=f"{name}, a solitaire racer: {said}.",
        body=body,
        kind="profile",
    )


def bot_view(name: str, level: int) -> FirstView:
    said = f"{name} is a bot of level {level} of 5: a racer the server plays, never rated."
    card = element("div", {"class": "first-view"}, element("h1", {}, name), element("p", {}, said))
    return FirstView(
        title=f"{name} · Solitaire Arena",
        description=said,
        body=card,
        kind="profile",
    )


class ProfilePage:
    """Renders /@/NAME through the accounts and the ratings."""

    def __init__(self, accounts: Accounts, ratings: Ratings) -> None:
        self.accounts = accounts
        self.ratings = ratings

    def view(self) -> PageView:
        return PageView(PATH, self.render)

    async def render(self, match: re.Match[str]) -> FirstView | None:
        try:
            name = clean_name(unquote(match.group(1)))
        except ArenaError:  # not a name anyone may have: the page says so
            return None
        level = bot_level_of_name(name)
        if level is not None:
            return bot_view(name, level)
        account = await self.accounts.named(name)  # its name now, or one it had
        if account is None:
            return None
        ratings: list[dict[str, Any]] = []
        for variant in VARIANTS:
            standing = (await self.ratings.catch_up(variant)).players.get(account.id)
            if standing is None:
                continue
            rows = await self.ratings.leaderboard(variant)
            ratings.append(
                {
                    "variant": variant,
                    "rating": standing.rating,
                    "provisional": standing.provisional,
                    "rank": next((r["rank"] for r in rows if r["account"] == account.id), None),
                    "players": len(rows),
                    "games": standing.games,
                    "wins": standing.wins,
                }
            )
        return first_view(account.name, ratings)
