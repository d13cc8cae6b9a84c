"""A network mode's session with its room: the connection, and what it asks of the server.

`RoomClient` opens the `Connection` with its callbacks, takes the room back after a reconnect
(a seat resumes, a spectator joins again), sends the requests the view needs on its own (a fresh
snapshot after a gap, `start` once enough racers are in) as tasks it keeps until done, and lets
the modes wait for the folded state to reach a point. What the messages mean is `RoomView`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from client.accounts import ratings_line, saved_key
from client.analysis import end_line, fetch_analysis
from client.app import App
from client.commands import WATCH_FIRST
from client.connection import Connection, RequestFailed, State
from client.room_state import RoomState
from client.room_view import RoomView
from shared import protocol as p
from shared.errors import ArenaError, ClientError

ANALYSIS_WAIT_S = 120.0  # how long the end of a game waits for the server's analysis


class RoomClient:
    """Server messages in (through ``view``), requests out; one per run of a network mode."""

    def __init__(self, app: App, *, spectator: bool = False, solo: bool = False) -> None:
        self.app = app
        self.session = app.session
        self.state = RoomState()
        self.view = RoomView(
            app,
            self.state,
            spectator=spectator,
            solo=solo,
            offset_ms=self._offset_ms,
            ask_watch=self._ask_watch,
            in_lobby=self._maybe_auto_start,
        )
        self.lost = False  # the server forgot this seat (an in-memory server restarted)
        self.interrupted = False  # Ctrl-C: leave without resigning
        # Writes this seat's file (resume token) when a `welcome` brings a fresh token.
        self.save_seat: Callable[[], None] | None = None
        self.conn: Connection | None = None
        self.auto_start_at: int | None = None
        # What a mode asks again after every reconnect (a tournament followed, say).
        self.after_welcome: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._start_sent = False
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def my_view(self) -> Any:
        """My game's current view, or None before it starts."""
        return self.state.my_view

    def on_message(self, msg: dict[str, Any]) -> None:
        """One server message (the connection's ``on_message``)."""
        self.view.on_message(msg)
        if msg["type"] == p.FINISHED and self.state.room.get("rated") and self._logged_in():
            self._spawn(self._rating_changes(msg["room"]))
        if msg["type"] == p.FINISHED and self._analysed():
            assert self.state.me is not None
            self._spawn(self._analysis(msg["room"], self.state.me))

    def forget_room(self) -> None:
        """Out of a room that closed before its race, or whose race is over (a rematch
        follows): ready to be seated in another."""
        self.state.forget_room()
        self.view.forget_room()
        self._start_sent = False

    def _analysed(self) -> bool:
        """A racer's own game that ended on a connection: its analysis is worth waiting for."""
        return self.conn is not None and self.state.me is not None and not self.view.spectator

    def _logged_in(self) -> bool:
        return self.conn is not None and bool(self.conn.welcome.get("account"))

    async def _rating_changes(self, room: str) -> None:
        """A rated race's rating changes, once the server has rated it: `1523 → 1541 (+18)`."""
        assert self.conn is not None
        try:
            answer = await self.conn.request({"type": p.RACE_RATINGS, "room": room})
        except ArenaError:
            return  # fewer than two logged-in racers: the race was not rated
        self.session.say(ratings_line(answer["changes"], ascii=self.app.output.ascii))
        self.app.refresh()

    async def _analysis(self, room: str, me: str) -> None:
        """Once the server has analysed the game: could the deal be won, and which move lost
        it (`move 37: t3t5 lost a won game`)."""
        assert self.conn is not None
        try:
            analysis = await fetch_analysis(self.conn, room, me, wait_s=ANALYSIS_WAIT_S)
        except ArenaError:
            return  # not analysed in time (a busy server, or none of this variant)
        if self.state.room_id == room:
            self.session.say(end_line(analysis))
            self.app.refresh()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a request in the background, keeping a reference until it is done."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _offset_ms(self) -> int:
        return self.conn.clock_offset_ms if self.conn is not None else 0

    # -- the connection ------------------------------------------------------------------------

    async def connect(
        self, url: str, name: str, *, resume: str | None = None, room: str | None = None
    ) -> Connection:
        """Open the connection (taking a seat back with ``resume``; naming ``room``, the one it
        will join, so a server with --workers serves it where the room is); ConnectionLost if
        the server is unreachable."""
        self.conn = Connection(
            url,
            name,
            on_message=self.on_message,
            on_state=self.on_state,
            on_welcome=self.on_welcome,
            resume=resume,
            on_token=self.on_token,
            key=saved_key(url),  # a logged-in user's account key (client/accounts.py)
            room=room,
        )
        await self.conn.start()
        return self.conn

    def on_token(self, token: str, welcome: dict[str, Any]) -> None:
        """A fresh token after a `hello`: keep the seat's file up to date (set by the modes)."""
        if self.save_seat is not None:
            self.save_seat()

    def on_state(self, state: State, detail: str) -> None:
        """Show connection trouble in the status area, and when it is over."""
        if state is State.RECONNECTING:
            self.session.error = f"Connection lost: reconnecting ({detail})..."
        elif state is State.CONNECTED and self.conn is not None and self.conn.reconnects:
            self.session.error = None
            if detail == "resumed" or self.state.me is None:
                self.session.say("Reconnected" + (": the game goes on." if detail else "."))
        elif state is State.CLOSED and detail:
            self.session.error = detail
        self.app.refresh()

    async def on_welcome(self, welcome: dict[str, Any]) -> None:
        """After a reconnect, get back where we were: a seat resumes, a spectator re-joins, a
        mode asks again for what it follows. A moderator's rename is told once, here."""
        if isinstance(welcome.get("notice"), str):
            self.session.say(f"Notice: {welcome['notice']}")
            self.app.refresh()
        if self.conn is not None and self.conn.reconnects and self.after_welcome is not None:
            self._spawn(self.after_welcome())
        if self.conn is None or not self.conn.reconnects or self.state.room_id is None:
            return
        if self.state.me is not None and not welcome["resumed"]:
            self.lost = True
            self.session.error = None
            self.session.status = (
                "The server restarted and lost this game (a server keeps games across restarts "
                "only with Redis). Type 'quit', then start a new game."
            )
            self.session.say("Reconnected, but the game was lost.")
            self.app.refresh()
            return
        if self.view.spectator:
            with contextlib.suppress(ArenaError):
                await self.conn.request(
                    {"type": "join", "room": self.state.room_id, "role": "spectator"},
                    expect="joined",
                )
                await self.send_watch()
        elif self.view.watching_others:
            # What a resumed seat watches is not part of the seat: ask again.
            await self.send_watch()

    # -- requests ------------------------------------------------------------------------------

    async def send_watch(self, player: str | None = None) -> None:
        """Ask for the watched games' snapshots and events (``player``'s, or the focus's)."""
        assert self.conn is not None
        msg: dict[str, Any] = {"type": "watch", "room": self.state.room_id}
        if player is not None or self.view.focus is not None:
            msg["player"] = player or self.view.focus
        with contextlib.suppress(RequestFailed):
            await self.conn.send(msg)

    def _ask_watch(self, player: str | None) -> None:
        self._spawn(self.send_watch() if player is None else self.send_watch(player))

    def _maybe_auto_start(self) -> None:
        if (
            self.auto_start_at is not None
            and not self._start_sent
            and len(self.state.room.get("players", [])) >= self.auto_start_at
            and self.conn is not None
        ):
            self._start_sent = True
            self._spawn(self.conn.send({"type": "start"}))

    async def watch_others(self, who: str) -> str:
        """Show another racer's live board (``who``: a name or panel number), or every racer's
        (``who`` empty or 'all'); returns whom, for the message. ClientError before the racer's
        own game is done, RequestFailed if the server refuses."""
        assert self.conn is not None
        if not self.view.can_watch():
            raise ClientError(WATCH_FIRST)
        target = None if who.lower() in ("", "all") else self.view.player_id(who)
        if target is not None and target == self.state.me:
            self.view.watch_back()
            return "your own board"
        msg: dict[str, Any] = {"type": "watch", "room": self.state.room_id}
        if target is not None:
            msg["player"] = target
        # The snapshot (`game`) is the answer; an `error` with the ref is a refusal.
        await self.conn.request(msg, expect="game", wait=10.0)
        self.view.focus = target
        self.view.watching_others = True
        self.view.show_watched()
        return "every racer" if target is None else self.state.names.get(target, target)

    # -- waiting -------------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[], bool], wait: float = 30.0) -> bool:
        """Wait until ``predicate()`` holds after some game event (or ``wait`` seconds pass)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        changed = self.view.game_changed
        while not predicate():
            changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)
            if self.conn is not None and self.conn.failure is not None:
                raise self.conn.failure
        return True
