"""`solitaire race quick`: wait in the server's queue for a race with players of a similar
rating, shown as "searching for a swiss race: 3 waiting, 0:12, range ±150"; Ctrl-C leaves the
queue. Once the server has formed a room it seats the player itself, and the race goes on as
any other (client/online.py)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from client.app import App, interrupts_set
from client.room_client import RoomClient
from shared import protocol as p
from shared.errors import ArenaError


def searching_line(msg: dict[str, Any], *, ascii_only: bool = False) -> str:
    """The waiting line from a `queued` message."""
    seconds = max(0, int(msg["waited_ms"])) // 1000
    size = "" if msg["players"] == 2 else f" of {msg['players']}"
    kind = "" if msg["rated"] else " (guests, unrated)"
    span = msg["range"].replace("±", "+-") if ascii_only else msg["range"]
    bot_in = msg.get("bot_in_ms")
    bot = "" if bot_in is None else f", a bot in {(int(bot_in) + 999) // 1000}s"
    return (
        f"searching for a {msg['variant']} race{size}{kind}: {msg['waiting']} waiting, "
        f"{seconds // 60}:{seconds % 60:02d}, range {span}{bot}"
    )


def quick_msg(args: Any) -> dict[str, Any]:
    return {"type": p.QUICK, "variant": args.variant, "players": args.players}


async def find_match(client: RoomClient, app: App, args: Any) -> str | None:
    """Queue, show the waiting line until a room is formed; its code, or None after Ctrl-C
    (the queue left)."""
    conn = client.conn
    assert conn is not None
    matched: asyncio.Future[tuple[str, int]] = asyncio.get_running_loop().create_future()

    def on_queue_message(msg: dict[str, Any]) -> None:
        if msg["type"] == p.QUEUED:
            app.session.status = searching_line(msg, ascii_only=app.output.ascii)
            app.refresh()
        elif msg["type"] == p.MATCHED and not matched.done():
            matched.set_result((msg["room"], int(msg.get("bots", 0))))

    client.view.on_queue = on_queue_message
    on_queue_message(await conn.request(quick_msg(args), expect=p.QUEUED))
    interrupted = asyncio.Event()
    with interrupts_set(interrupted):
        stopped: asyncio.Future[Any] = asyncio.ensure_future(interrupted.wait())
        waiters: set[asyncio.Future[Any]] = {matched, stopped}
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
    if matched.done():
        room, bots = matched.result()
        app.session.status = f"Matched: room {room}. The race starts when everyone is seated..."
        if bots:  # said below the board, where it stays through the race
            app.session.say(
                f"Nobody found in time: you race {bots} bot{'s' if bots > 1 else ''}, unrated "
                "(docs/bots.md)."
            )
        app.refresh()
        return room
    with contextlib.suppress(ArenaError):
        await conn.request({"type": p.LEAVE_QUEUE}, expect=p.LEFT_QUEUE)
    return None
