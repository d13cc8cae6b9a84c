"""`solitaire rooms`: the server's rooms, one line each."""

from __future__ import annotations

import shutil
from typing import Any

from client.challenge import list_line
from client.cli import Output
from client.race_panel import OPEN_SEED
from client.room_entry import connected
from client.terminal import write_lines
from client.text import cut, hang, ljust


async def rooms_online(args: Any, output: Output) -> int:
    """`solitaire rooms`: one line per room."""
    app, client = await connected(args, output, [], "rooms")
    conn = client.conn
    assert conn is not None
    try:
        answer = await conn.request({"type": "list_rooms"}, expect="rooms")
        mine = []
        if conn.welcome.get("account"):  # logged in: your challenges still open too
            listed = await conn.request({"type": "challenges"}, expect="challenge_list")
            mine = [c for c in listed["challenges"] if c["status"] == "open"]
    finally:
        await conn.close()
    if output.json:
        return 0  # the answer was printed as JSON by the client already
    write_lines(app.out, room_lines(answer["rooms"], columns=shutil.get_terminal_size().columns))
    if mine:
        write_lines(app.out, ["", "Your open challenges:", *(list_line(c) for c in mine)])
    return 0


_STATUS_ORDER = {"lobby": 0, "countdown": 1, "racing": 2, "finished": 3}


PLAYERS_AT = 46
"""Where the players column starts: the notes that do not fit after it go on below it."""


def room_lines(rooms: list[dict[str, Any]], *, columns: int = 80) -> list[str]:
    """`solitaire rooms`: rooms to join first, then races on, then finished ones (newest
    first); who is in each, and which seeds are open. Columns by display width; within
    ``columns``, the notes wrapped at words under the players."""

    def key(room: dict[str, Any]) -> tuple[int, int, str]:
        finished = room.get("finished_at")
        return (
            _STATUS_ORDER.get(room.get("status", ""), 9),
            -finished if isinstance(finished, int) else 0,
            str(room.get("id", "")),
        )

    lines = [f"{'room':<10} {'game':<11} {'status':<9} {'seats':>5} {'watch':>5}  players"]
    for room in sorted(rooms, key=key):
        seats = f"{room.get('players', 0)}/{room.get('capacity', 0)}"
        if room.get("capacity") == 1:
            seats = "solo"
        names = ", ".join(str(n) for n in room.get("names") or []) or "-"
        notes = []
        if room.get("open_seed"):
            notes.append(OPEN_SEED)
        if room.get("winnable"):
            notes.append("winnable deal")
        bots = sum(1 for level in room.get("bots") or [] if level)
        if bots:
            notes.append(f"{bots} bot{'s' if bots > 1 else ''}: unrated")
        line = (
            f"{ljust(str(room.get('id', '')), 10)} {room.get('variant', ''):<11} "
            f"{room.get('status', ''):<9} {seats:>5} {room.get('spectators', 0):>5}  "
            f"{cut(names, max(10, columns - PLAYERS_AT), ellipsis='…')}"
        )
        lines.extend(
            hang(line, f"({'; '.join(notes)})" if notes else "", columns, indent=PLAYERS_AT)
        )
    if not rooms:
        lines.append("(no rooms: 'solitaire race create' opens one)")
    return lines
