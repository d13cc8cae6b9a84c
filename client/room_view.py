"""Server messages in, the screen's session out: one `RoomView` per run of a network mode.

Each message is folded into the `RoomState` (a dispatch table by message type), then the view
says what it means for the player: the status line and messages, the clocks (the server's times
on this client's clock), the race panel and the watched boards. What needs the network (asking
for a fresh snapshot, starting the race) goes through the callbacks it is given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from client.app import App
from client.board_focus import BoardFocus
from client.play import update_status
from client.race_panel import (
    done_status,
    duration,
    fairness_lines,
    results_line,
    someone_done,
)
from client.room_state import DONE, Fold, RoomState
from client.session import game_status
from client.text import cards_as_shown, plural
from shared import protocol as p
from shared.errors import ArenaError

TOURNAMENT_MESSAGES = (
    p.TOURNAMENT,
    p.TOURNAMENT_STANDINGS,
    p.TOURNAMENT_JOINED,
    p.TOURNAMENT_WITHDRAWN,
    p.TOURNAMENT_UNFOLLOWED,
    p.TOURNAMENT_PAIRED,
    p.BERSERKED,
)
_REASONS = {"all_done": "every game is done", "time_limit": "time is up"}


class RoomView(BoardFocus):
    """The room's state as the player sees it, message by message; whose boards the board area
    and the panel show is ``BoardFocus``'s."""

    def __init__(
        self,
        app: App,
        state: RoomState,
        *,
        spectator: bool,
        solo: bool,
        offset_ms: Callable[[], int],
        ask_watch: Callable[[str | None], None],
        in_lobby: Callable[[], None],
    ) -> None:
        super().__init__(app.session, state, spectator=spectator, solo=solo, offset_ms=offset_ms)
        self.app = app
        self._ask_watch = ask_watch  # a fresh snapshot of one game (or of the watched ones)
        self._in_lobby = in_lobby
        # `queued` and `matched` of a quick race go to whoever waits for them (client/quick.py),
        # a tournament's messages to the mode that follows it (client/tournament/join.py).
        self.on_queue: Callable[[dict[str, Any]], None] = lambda msg: None
        self.on_tournament: Callable[[dict[str, Any]], None] = lambda msg: None  # the same
        self.lobby_hint = ""
        self.started = asyncio.Event()
        self.finished = asyncio.Event()
        self.closed: str | None = None  # why the room closed under us (its closed_reason)
        self.closed_now = asyncio.Event()
        self.rematch: str | None = None  # the room of this race's rematch, once told of one
        self.game_changed = asyncio.Event()
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            p.ROOM: self._on_room,
            p.JOINED: self.state.fold_joined,
            p.COUNTDOWN: self._on_countdown,
            p.STARTED: self._on_started,
            p.PROGRESS: self._on_progress,
            p.GAME: self._on_game,
            p.GAME_EVENT: self._on_game_event,
            p.FINISHED: self._on_finished,
            p.ERROR: self._on_error,
            p.LOGGED_OUT: self._on_logged_out,
            p.QUEUED: lambda msg: self.on_queue(msg),
            p.MATCHED: lambda msg: self.on_queue(msg),
            **{kind: lambda msg: self.on_tournament(msg) for kind in TOURNAMENT_MESSAGES},
        }

    def forget_room(self) -> None:
        """What this view knew of a room that closed before its race, or whose race is over
        (a rematch follows): the next room's race starts from nothing."""
        self.closed = None
        self.closed_now.clear()
        self.started.clear()
        self.finished.clear()
        self.rematch = None
        self.focus = None
        self.watching_others = False
        session = self.session
        session.countdown_to_ms = session.clock_start_ms = session.clock_end_ms = None
        session.time_limit_ms = None
        session.view = None
        session.boards = ()
        session.racers.clear()
        session.away_since.clear()

    def on_message(self, msg: dict[str, Any]) -> None:
        """Fold one server message into the session and schedule a redraw."""
        if msg["type"] != p.PONG:
            self.app.emit(msg)
        handler = self._handlers.get(msg["type"])
        if handler is not None:
            handler(msg)
        self.game_changed.set()
        self.refresh_panel()
        if (self.spectator or self.watching_others) and self.session.boards:
            self.show_watched()  # the boards follow the panel's order and numbers
        self.app.refresh()

    # -- the room and the race -----------------------------------------------------------------

    def _on_room(self, msg: dict[str, Any]) -> None:
        room = msg["room"]
        if not self.state.fold_room(room):
            return
        now = self.app.clock()
        for player in room.get("players", []):
            self._away(player["player"], player, now)
        status = room.get("status")
        if status == "countdown" and room.get("go_at"):
            self._countdown(room["go_at"])
        elif status == "racing" and room.get("started_at"):
            self._start(room["started_at"], room.get("ends_at"))
        elif status == "finished":
            self.session.clock_end_ms = self.local(room.get("finished_at"))
            self._rematch(room.get("rematch"))
        if status == "lobby":
            self.session.countdown_to_ms = None  # a countdown cancelled
            self.session.status = self.lobby_hint
            self._in_lobby()
        elif status == "closed":
            self.closed = str(room.get("closed_reason") or "idle")
            self.closed_now.set()

    def _rematch(self, room: str | None) -> None:
        """A racer asked for a rematch: where it is, and how to get there, said once."""
        if room is None or self.rematch is not None:
            return
        self.rematch = room
        if self.spectator:
            self.session.say(f"A rematch is on in room {room}: type 'rematch' to watch it.")
        else:
            self.session.say(f"A rematch is on in room {room}: type 'rematch' to race again.")

    def _on_logged_out(self, msg: dict[str, Any]) -> None:
        """The key was revoked elsewhere (a new password, a logout): said, the game goes on."""
        self.session.say(
            "Logged out: this account's password was changed, or this login ended, elsewhere. "
            "'solitaire login NAME' logs in again."
        )

    def _away(self, pid: str, player: dict[str, Any], now: int) -> None:
        """Whether a racer's connection is gone, and since when on this client's clock."""
        away = self.session.away_since
        if player.get("connected", True) or pid == self.state.me:
            away.pop(pid, None)
            return
        since = player.get("away_since")
        local = self.local(since) if isinstance(since, int) else None
        if local is not None:
            away[pid] = min(local, now)
        else:
            away.setdefault(pid, now)

    def _on_countdown(self, msg: dict[str, Any]) -> None:
        self._countdown(msg["go_at"])
        seconds = -(-max(0, msg["go_at"] - msg["at"]) // 1000)
        if not self.solo and seconds > 0:
            self.session.say(f"The race starts in {plural(seconds, 'second')}.")

    def _countdown(self, go_at: int) -> None:
        self.session.countdown_to_ms = self.local(go_at)
        self.session.status = "Get ready..."

    def _on_started(self, msg: dict[str, Any]) -> None:
        self._start(msg["at"], msg.get("ends_at"))
        if not self.solo:
            limit = self.state.time_limit(msg["at"], msg.get("ends_at"))  # berserk: half
            self.session.say(
                "Go! The race has started" + (f": {duration(limit)} to play." if limit else ".")
            )
        if self.spectator:
            self._ask_watch(None)

    def _start(self, at: int, ends_at: int | None) -> None:
        self.session.countdown_to_ms = None
        self.session.clock_start_ms = self.local(at)
        self.session.time_limit_ms = self.state.time_limit(at, ends_at)
        if not self.started.is_set():
            self.started.set()
            if self.spectator:
                self.session.status = "Watching live."
            else:
                update_status(self.app, self.state.my_view)

    def _on_progress(self, msg: dict[str, Any]) -> None:
        self.state.fold_progress(msg)
        player, me = msg["player"], self.state.me
        if player == me and msg["status"] in DONE and not self.finished.is_set():
            self.session.status = done_status(self.state, msg)
        elif msg["status"] in DONE and player != me:
            self.session.say(someone_done(self.state.names.get(player, player), msg))

    def _on_finished(self, msg: dict[str, Any]) -> None:
        self.state.fold_finished(msg)
        self.session.clock_end_ms = self.local(msg["at"])
        self.session.countdown_to_ms = None
        self.session.away_since.clear()
        ranking = msg["ranking"]
        if self.solo or (len(ranking) <= 1 and not self.spectator):
            done = game_status(self.state.my_view, out_of_time=self.state.out_of_time())
            done = done or "The game is over."
            self.session.status = f"{done} {self.app.next_steps}".strip()
        else:
            reason = _REASONS.get(msg["reason"], msg["reason"])
            self.session.status = f"Race over: {reason}. {self.app.next_steps}".strip()
            self.session.say(results_line(ranking))
        for line in fairness_lines(msg, open_seed=self.state.open_seed and not self.solo):
            self.session.say(line)
        self.finished.set()

    def _on_error(self, msg: dict[str, Any]) -> None:
        if msg.get("ref") is not None:
            return  # the answer to a request: whoever sent it says what went wrong
        self.session.error = f"Server: {cards_as_shown(msg['reason'])}"

    # -- games ---------------------------------------------------------------------------------

    def _on_game(self, msg: dict[str, Any]) -> None:
        try:
            self.state.fold_game(msg)
        except ArenaError as error:
            self.session.error = f"Could not follow {msg['player']}'s game: {error.reason}"
            return
        self._game_updated(msg["player"])

    def _on_game_event(self, msg: dict[str, Any]) -> None:
        player = msg["player"]
        try:
            fold = self.state.fold_game_event(msg)
        except ArenaError as error:
            self.session.error = f"Could not follow {player}'s game: {error.reason}"
            return
        if fold is Fold.GAP:
            if self.spectator:
                self._ask_watch(None)
            elif player != self.state.me:
                self._ask_watch(player)
        if fold is not Fold.APPLIED:
            return
        event = msg["event"]
        if event.get("type") == "resigned" and event.get("reason") == "abandoned":
            name = "You were" if player == self.state.me else f"{self.state.names.get(player)} was"
            self.session.say(f"{name} away too long: resigned by the server.")
        self._game_updated(player)

    def _game_updated(self, player: str) -> None:
        self.game_changed.set()
        if self.spectator:
            self.show_watched()
            return
        if self.watching_others:
            self.show_watched()
        if player == self.state.me:
            track = self.state.games[player]
            self.session.view = track.view
            if track.view is not None and track.view.over and self.session.clock_end_ms is None:
                # My clock stops with my game, not when the race ends.
                at = track.events[-1].get("at") if track.events else None
                self.session.clock_end_ms = self.local(at) if isinstance(at, int) else None
            mine = self.state.progress.get(player, {}).get("status")
            if self.started.is_set() and not self.finished.is_set() and mine not in DONE:
                update_status(self.app, self.session.view, out_of_time=self.state.out_of_time())

    def can_watch(self) -> bool:
        """Whether the server lets this racer watch the others: own game done, or race over."""
        if self.finished.is_set():
            return True
        view = self.state.my_view
        return (
            bool(view is not None and view.over) or self.state.my_progress().get("status") in DONE
        )
