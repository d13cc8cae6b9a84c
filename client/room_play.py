"""The player's side of a room online: moves go to the server, and the commands only a room has.

`ServerDriver` is the `play_loop`'s driver online (the board follows the game's events, not the
moves sent); `play_room` runs that loop in a room with the commands of a room (`start`, `watch`,
`back`, the server's `hint`) until the player quits, is interrupted, or the connection fails.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from client.app import App, interrupts_set
from client.commands import Command, Kind
from client.connection import Connection, RequestFailed
from client.hint import suggestion_text
from client.play import Extra, Outcome, play_loop
from client.room_client import RoomClient
from client.room_state import DONE
from shared import protocol as p
from shared.errors import ArenaError, ClientError


class ServerDriver:
    """A player's moves go to the server; the board follows the game's events."""

    def __init__(self, client: RoomClient) -> None:
        self.client = client

    @property
    def view(self) -> Any:
        return self.client.my_view

    @property
    def lost(self) -> bool:
        """The server forgot the game: quitting gives nothing up."""
        return self.client.lost

    def events(self) -> list[dict[str, Any]]:
        return self.client.state.my_events()

    async def move(self, move: str) -> None:
        assert self.client.conn is not None
        if self.client.lost:
            raise ClientError(LOST)
        ack = await self.client.conn.move(move)
        # The ack and the game's events travel separate paths; wait for the board to catch up
        # so the next friendly move is parsed against the position it follows.
        await self.client.wait_for(lambda: self.client.state.my_version() >= ack["version"], 10.0)

    async def resign(self) -> None:
        assert self.client.conn is not None
        view = self.view
        if view is None:
            raise ClientError("the game has not started yet")
        if view.won or view.resigned:
            raise ClientError("the game is already over")
        if self.client.lost:
            raise ClientError(LOST)
        await self.client.conn.send({"type": "resign"})
        await self.client.wait_for(lambda: bool(self.view and self.view.resigned), 10.0)

    def undo(self) -> None:
        raise ClientError("undo is only possible offline (the server keeps every move)")


async def add_bot(conn: Any, app: App, level: str) -> bool:
    """`bot [LEVEL]` in a race's lobby: the server seats a bot (only for the room's creator)."""
    msg: dict[str, Any] = {"type": "add_bot"}
    if level:
        msg["level"] = int(level)
    since = app.session.said
    try:
        await conn.request(msg, expect="room")
    except ArenaError as error:
        app.session.error = f"bot: {error.reason}"
    else:
        # Before the countdown it may have started (the last seat taken): in order.
        app.session.say_before("A bot took a seat: this race is unrated.", since)
    return True


LOST = "this game was lost when the server restarted: type 'quit', then start a new one"


async def play_room(
    client: RoomClient,
    app: App,
    *,
    race: bool,
    wait_for_results: bool,
    until: asyncio.Event | None = None,
    more: Extra | None = None,
    stay: bool = False,
) -> Outcome:
    """The player's loop in a room: moves once the race starts, `start` in the lobby. Ctrl-C
    leaves without resigning (the seat waits for the server's grace); `quit` resigns;
    `rematch` once the race is over ends it with Outcome.REMATCH (the caller moves rooms).
    ``until`` set ends it with Outcome.END (a tournament's race is over: the standings follow);
    ``more`` takes a mode's own commands first. The end of a script leaves a live game
    (resigned), or with ``stay`` resigns it in its seat, so the results still come."""
    driver = ServerDriver(client)
    assert client.conn is not None
    conn = client.conn

    async def extra(command: Command) -> bool | Outcome:
        if more is not None:
            took = await more(command)
            if took:
                return took
        if command.kind is Kind.START:
            try:
                await conn.send({"type": "start"})
            except ArenaError as error:
                app.session.error = f"start: {error.reason}"
            return True
        if command.kind is Kind.BOT and race:
            return await add_bot(conn, app, command.arg)
        if race and command.kind in (Kind.WATCH, Kind.BACK):
            await watch_command(client, app, command)
            return True
        if command.kind is Kind.HINT and client.my_view is not None:
            return await server_hint(conn, app)
        if command.kind is Kind.NEW and race:
            app.session.error = (
                "new: 'rematch' races the same players again once the race is over; "
                "'solitaire race create' starts another race"
            )
            return True
        if command.kind is Kind.REMATCH and race:
            if not client.view.finished.is_set():
                app.session.error = "rematch: once the race is over"
                return True
            return Outcome.REMATCH
        if command.kind in (Kind.MOVE, Kind.MOVES, Kind.RESIGN) and client.my_view is None:
            if app.scripted:
                # A script plays as soon as it can: wait for the start instead of failing.
                app.session.status = "Waiting for the race to start..."
                app.refresh()
                await client.wait_for(lambda: client.my_view is not None, 24 * 3600)
                return False
            app.session.error = "The race has not started yet" + (
                ": type 'start' to start it." if race else "."
            )
            return True
        return False

    async def ready(command: Command) -> None:
        # "Go!" is said when the race starts; the racer's own game is the next frame. A move,
        # `resign` or `quit` typed in between waits for it: refused, or not asked about, it
        # would contradict the "Go!" on the screen.
        if (
            command.kind in (Kind.MOVE, Kind.MOVES, Kind.RESIGN, Kind.QUIT)
            and client.my_view is None
            and client.view.started.is_set()
        ):
            await client.wait_for(lambda: client.my_view is not None, 5.0)

    interrupted = asyncio.Event()
    with interrupts_set(interrupted):
        reader = asyncio.create_task(play_loop(app, driver, extra=extra, ready=ready))
        failed = asyncio.create_task(_until_failed(conn))
        stopped = asyncio.create_task(interrupted.wait())
        closed = asyncio.create_task(client.view.closed_now.wait())
        ended = asyncio.create_task((until or asyncio.Event()).wait())
        try:
            await asyncio.wait(
                {reader, failed, stopped, closed, ended}, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for task in (reader, failed, stopped, closed, ended):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
    if interrupted.is_set():
        client.interrupted = True
        return Outcome.QUIT
    if reader.done() and not reader.cancelled() and reader.exception() is not None:
        raise reader.exception()  # type: ignore[misc]
    if failed.done() and conn.failure is not None:
        raise conn.failure
    if client.view.closed is not None:
        raise ClientError(closed_text(client.state.room_id, client.view.closed), code="room_closed")
    outcome = reader.result() if reader.done() and not reader.cancelled() else Outcome.END
    if stay and outcome is Outcome.END and not client.view.finished.is_set():
        await _resign_in_seat(client, driver, app)
        if client.view.closed is not None:
            raise ClientError(
                closed_text(client.state.room_id, client.view.closed), code="room_closed"
            )
    view = client.my_view
    left = False
    if view is not None and not view.over and not client.view.finished.is_set() and not client.lost:
        left = True
        # Quitting a race in progress resigns (docs/protocol.md): the race can still end for
        # the others, instead of waiting for a player who is gone.
        with contextlib.suppress(ArenaError, TimeoutError):
            await conn.request({"type": "leave"}, expect="left", wait=5.0)
        app.log("left the game: resigned")
    elif (
        view is None
        and outcome is Outcome.QUIT
        and client.state.me is not None
        and client.state.room.get("status") in ("lobby", "countdown")
        and not client.lost
    ):
        # Quitting before the start frees the seat at once, instead of holding it until the
        # server's grace (a matched rival then searches again instead of racing alone).
        with contextlib.suppress(ArenaError, TimeoutError):
            await conn.request({"type": "leave"}, expect="left", wait=5.0)
        app.log("left the room before the start")
    if wait_for_results and app.scripted and client.my_view is not None and not left:
        await wait_results(client, conn)
    return outcome


async def _resign_in_seat(client: RoomClient, driver: ServerDriver, app: App) -> None:
    """A script that ran out in a race of a tournament: once the game is on (a script may end
    before the start), a live one is resigned, and the seat kept for the results."""
    await client.wait_for(
        lambda: (
            client.my_view is not None
            or client.view.finished.is_set()
            or client.view.closed is not None
        ),
        24 * 3600,
    )
    if client.my_view is None or client.my_view.over or client.view.finished.is_set():
        return
    if client.lost:
        return
    try:
        await driver.resign()
    except ArenaError as error:
        app.session.error = f"resign: {error.reason}"
    else:
        app.log("resigned")


def log_ranking(app: App, client: RoomClient) -> None:
    """A scripted run's lines for a race's results: place, name, how it ended, cards."""
    if client.state.ranking is None:
        return
    for rank in client.state.ranking:
        app.log(f"{rank['place']}. {rank['name']} {rank['status']} {rank['foundation']}")


UNFILLED_TEXT = "not enough of the players matched with you sat down, or stayed, for the start"


def closed_text(room: str | None, reason: str) -> str:
    """What the player is told when the server closes their room before the race."""
    if reason == p.CLOSED_UNFILLED:
        return f"room {room} closed: {UNFILLED_TEXT} ('solitaire race quick' searches again)"
    return f"room {room} closed: nobody stayed in its lobby"


async def server_hint(conn: Connection, app: App) -> bool:
    """`hint` online: the server's solver on the real position (solo rooms only). False when
    the server refuses hints here (a race), so the public-view heuristic answers instead."""
    try:
        answer = await conn.request({"type": "hint"}, expect="suggestion", wait=60.0)
    except RequestFailed as error:
        if error.code == "not_allowed":
            return False
        app.session.error = f"hint: {error.reason}"
        return True
    except TimeoutError:
        app.session.error = "hint: the server did not answer"
        return True
    text = suggestion_text(answer)
    app.session.say(text)
    app.log(text)
    return True


async def watch_command(client: RoomClient, app: App, command: Command) -> None:
    """`watch [NAME|N|all]` and `back`/`me` in a race: whose board the board area shows."""
    whom = ""
    if command.kind is Kind.WATCH:
        try:
            whom = await client.watch_others(command.arg)
        except ArenaError as error:
            app.session.error = f"watch: {error.reason}"
            app.log(f"watch: {error.reason}")
            return
        except TimeoutError:
            app.session.error = "watch: the server did not answer"
            return
    else:
        client.view.watch_back()
    if client.view.watching_others:
        note = f"Watching {whom} live: 'watch NAME' for another racer, 'back' for your board."
        app.log(f"watching {whom}")
    else:
        note = "Back to your board."
        app.log("back to my board")
    mine = client.state.my_progress()
    if client.view.finished.is_set() or mine.get("status") not in DONE:
        app.session.say(note)  # the status line keeps the results, or the playing hint
    elif client.view.watching_others:
        app.session.status = note
    else:
        app.session.status = client.view.done_status(mine)
        app.session.say(note)


async def _until_failed(conn: Connection) -> None:
    await conn.wait_failed()


async def wait_results(client: RoomClient, conn: Connection) -> None:
    while not client.view.finished.is_set():
        if conn.failure is not None:
            raise conn.failure
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.view.finished.wait(), 1.0)
