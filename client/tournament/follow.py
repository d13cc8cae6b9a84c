"""`solitaire tournament list | create | show ID` (docs/protocol.md, "Tournaments"), and
`Follow`: the tournament a client follows, which `join` (join.py) plays in.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import textwrap
from collections.abc import Callable
from typing import Any, TextIO

from client.accounts import saved_key
from client.cli import Output
from client.connection import Connection, RequestFailed
from client.terminal import write_lines
from client.tournament.panel import (
    Phase,
    Presence,
    facts_line,
    list_lines,
    listing,
    lobby_lines,
    standing,
    wait_line,
)
from shared import protocol as p
from shared.errors import ArenaError, ClientError

SEAT_KIND = "tournament:"
"""A race seat kept on disk is of kind ``tournament:<id>``: `join ID` takes back only its own."""

LOBBY_HELP = (
    "Between races: 'pause' stops your pairings (your points stay), 'join' carries on, "
    "'page N' shows another page of the standings, 'me' the page with your row, 'quit' pauses "
    "and leaves. In a race: your moves, and 'berserk' before the start halves your clock for "
    "a bonus point for a first place in 20 moves or more."
)


class Follow:
    """The tournament this client follows, folded from `tournament`, `tournament_standings`,
    `tournament_paired` and `berserked` (standings never go back a version)."""

    def __init__(self, tournament: str, account: str | None) -> None:
        self.id = tournament.lower()
        self.account = account
        self.tournament: dict[str, Any] = {}
        self.standings: dict[str, Any] | None = None
        self.pairings: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.changed = asyncio.Event()
        self.final = asyncio.Event()

    def fold(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == p.TOURNAMENT and str(msg["tournament"]["id"]).lower() == self.id:
            self.tournament = msg["tournament"]
        elif kind == p.TOURNAMENT_STANDINGS and str(msg["tournament"]).lower() == self.id:
            if self.standings is None or msg["version"] >= self.standings["version"]:
                self.standings = msg
            if msg["final"]:
                self.final.set()
        elif kind == p.TOURNAMENT_PAIRED and str(msg["tournament"]).lower() == self.id:
            self.pairings.put_nowait(msg)
        self.changed.set()

    @property
    def phase(self) -> Phase:
        return Phase(self.tournament.get("status", Phase.UPCOMING.value))

    @property
    def name(self) -> str:
        return str(self.tournament.get("name") or self.id)

    @property
    def title(self) -> str:
        """The header between races: the tournament's name and id, the id once until the
        name is known."""
        name = self.tournament.get("name")
        return f"Solitaire Arena - tournament {f'{name} - ' if name else ''}{self.id}"

    def presence(self) -> Presence | None:
        mine = (self.standings or {}).get("me")
        return standing(mine, me=self.account).presence if mine else None


def refused(tournament: str, error: RequestFailed) -> ArenaError:
    """A refused tournament request, in words a player can act on."""
    if error.code == "not_logged_in":
        return ClientError(
            "tournaments are for logged-in players: 'solitaire login NAME' (or 'register') first",
            code=error.code,
        )
    if error.code == "no_such_tournament":
        return ClientError(
            f"there is no tournament {tournament} ('solitaire tournament list' lists them)",
            code=error.code,
        )
    if error.code == "tournament_over":
        return ClientError(
            f"tournament {tournament} is over: 'solitaire tournament show {tournament}' shows "
            "its standings",
            code=error.code,
        )
    return error


# -- list, show, create: one request each ------------------------------------------------------


async def _open(args: Any, on_message: Callable[[dict[str, Any]], None]) -> Connection:
    conn = Connection(args.server, args.name, on_message=on_message, key=saved_key(args.server))
    await conn.start()
    return conn


async def list_tournaments(args: Any, out: TextIO) -> int:
    conn = await _open(args, lambda msg: None)
    try:
        answer = await conn.request({"type": p.LIST_TOURNAMENTS}, expect=p.TOURNAMENTS)
        now = conn.server_now()
    finally:
        await conn.close()
    items = [listing(s) for key in ("live", "upcoming", "finished") for s in answer[key]]
    write_lines(out, list_lines(items, now_ms=now))
    return 0


async def show_tournament(args: Any, output: Output, out: TextIO) -> int:
    follow = Follow(args.tournament, None)
    conn = await _open(args, follow.fold)
    try:
        follow.account = conn.welcome.get("account")
        try:
            await conn.request(
                {"type": p.FOLLOW_TOURNAMENT, "tournament": args.tournament}, expect=p.TOURNAMENT
            )
        except RequestFailed as error:
            raise refused(args.tournament, error) from None
        while follow.standings is None:
            follow.changed.clear()
            await asyncio.wait_for(follow.changed.wait(), 15.0)
        now = conn.server_now()
    finally:
        await conn.close()
    lines = [f"Tournament {follow.id}: {follow.name}"]
    lines.extend(
        lobby_lines(follow.tournament, follow.standings, me=follow.account, color=output.color)
    )
    lines.append(wait_text(follow, now, None))
    write_lines(out, lines)
    return 0


async def create_tournament(args: Any, out: TextIO) -> int:
    msg: dict[str, Any] = {
        "type": p.CREATE_TOURNAMENT,
        "name": args.title,
        "variant": args.variant,
        "length_ms": int(args.minutes * 60_000),
        "race_size": args.racers,
        "rated": not args.unrated,
        "berserk": not args.no_berserk,
        "streaks": not args.no_streaks,
    }
    if args.race_time is not None:
        msg["time_limit_ms"] = int(args.race_time * 1000)
    conn = await _open(args, lambda msg: None)
    try:
        if args.starts_in:
            msg["starts_at"] = conn.server_now() + int(args.starts_in * 60_000)
        try:
            answer = await conn.request(msg, expect=p.TOURNAMENT, retry_rate_limited=False)
        except RequestFailed as error:
            raise refused("", error) from None
    finally:
        await conn.close()
    made = answer["tournament"]
    said = (
        f"Tournament {made['id']}: {made['name']} ({facts_line(made)}).",
        f"Join it with 'solitaire tournament join {made['id']}'.",
    )
    columns = shutil.get_terminal_size().columns
    write_lines(out, [line for text in said for line in wrapped(text, columns)])
    return 0


def wrapped(text: str, columns: int) -> list[str]:
    """A sentence printed at a terminal's width: broken between words, never inside one."""
    return textwrap.wrap(text, columns, break_on_hyphens=False, break_long_words=False)


def wait_text(follow: Follow, now: int, waiting_since: int | None) -> str:
    if not follow.tournament:
        return "Following the tournament..."
    return wait_line(
        phase=follow.phase,
        now_ms=now,
        starts_at=int(follow.tournament["starts_at"]),
        ends_at=int(follow.tournament["ends_at"]),
        presence=follow.presence(),
        waiting_since=waiting_since,
        pairing_until=follow.tournament.get("pairing_until"),
    )


async def tournament_command(args: Any, output: Output) -> int:
    """`solitaire tournament list | show | create` (`join` is join.py's)."""
    if args.tournament_command == "list":
        return await list_tournaments(args, sys.stdout)
    if args.tournament_command == "show":
        return await show_tournament(args, output, sys.stdout)
    if args.tournament_command == "create":
        return await create_tournament(args, sys.stdout)
    raise ClientError(f"unknown tournament action {args.tournament_command!r}")
