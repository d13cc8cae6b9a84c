"""The network modes: solo play on a server, races, watching, listing rooms and replays.

`RoomClient` folds what the server sends (room state, progress, public game events) into the
`Session` the screen shows, with the same `shared` fold the server uses; the mode functions
below only choose which requests to send and when to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from typing import Any

from client.app import App, now_ms
from client.cli import Output
from client.commands import WATCH_FIRST, Command, Kind, confirm_texts, parse_command
from client.connection import Connection, RequestFailed, State
from client.hint import suggestion_text
from client.offline import exit_status, seed_value
from client.play import Outcome, play_loop, update_status
from client.replay import run_replay
from client.screen import Racer, RacerState
from client.seats import RACE, SOLO, Seat, SeatStore, state_dir
from client.session import Session, game_status, ranked
from client.terminal import write_lines
from client.text import cards_as_shown, cut, ljust, plural
from shared.errors import ArenaError, ClientError
from shared.protocol import commitment_ok
from shared.views import public_fold_event

OPEN_SEED = "open seed: the creator knows the deck"
WINNABLE = "a winnable deal: the server has solved it"
GRACE_TEXT = "the server's grace (a minute by default)"

_RACER_STATES = {
    "waiting": RacerState.WAITING,
    "playing": RacerState.PLAYING,
    "won": RacerState.WON,
    "over": RacerState.OVER,
    "resigned": RacerState.RESIGNED,
    "left": RacerState.LEFT,
}
_DONE = {"won", "over", "resigned"}


@dataclass
class Track:
    """One game as this client follows it: the last stream version folded, and its view."""

    version: int = 0
    view: Any = None
    events: list[dict[str, Any]] = field(default_factory=list)


class RoomClient:
    """Server messages in, session state out; one per run of a network mode."""

    def __init__(self, app: App, *, spectator: bool = False, solo: bool = False) -> None:
        self.app = app
        self.session = app.session
        self.spectator = spectator
        self.solo = solo
        self.lost = False  # the server forgot this seat (an in-memory server restarted)
        self.open_seed = False
        self.finish_reason = ""
        self.interrupted = False  # Ctrl-C: leave without resigning
        # Writes this seat's file (resume token) when a `welcome` brings a fresh token.
        self.save_seat: Any = None
        self.conn: Connection | None = None
        self.room: dict[str, Any] = {}
        self.room_id: str | None = None
        self.me: str | None = None
        self.names: dict[str, str] = {}
        self.progress: dict[str, dict[str, Any]] = {}
        self.games: dict[str, Track] = {}
        self.focus: str | None = None  # the watched player, or None for all
        self.watch_all = False
        # A racer whose game is done may look at the others' boards instead of their own.
        self.watching_others = False
        self.ranking: list[dict[str, Any]] | None = None
        self.started = asyncio.Event()
        self.finished = asyncio.Event()
        self.game_changed = asyncio.Event()
        self.auto_start_at: int | None = None
        self._start_sent = False
        self.lobby_hint = ""
        self._tasks: set[asyncio.Task[Any]] = set()

    def _spawn(self, coro: Any) -> None:
        """Run a request in the background, keeping a reference until it is done."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- connection ----------------------------------------------------------------------------

    async def connect(self, url: str, name: str, *, resume: str | None = None) -> Connection:
        """Open the connection (taking a seat back with ``resume``); ConnectionLost if the server
        is unreachable."""
        self.conn = Connection(
            url,
            name,
            on_message=self.on_message,
            on_state=self.on_state,
            on_welcome=self.on_welcome,
            resume=resume,
            on_token=self.on_token,
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
            if detail == "resumed" or self.me is None:
                self.session.say("Reconnected" + (": the game goes on." if detail else "."))
        elif state is State.CLOSED and detail:
            self.session.error = detail
        self.app.refresh()

    async def on_welcome(self, welcome: dict[str, Any]) -> None:
        """After a reconnect, get back where we were: a seat resumes, a spectator re-joins."""
        if self.conn is None or not self.conn.reconnects or self.room_id is None:
            return
        if self.me is not None and not welcome["resumed"]:
            self.lost = True
            self.session.error = None
            self.session.status = (
                "The server restarted and lost this game (a server keeps games across restarts "
                "only with Redis). Type 'quit', then start a new game."
            )
            self.session.say("Reconnected, but the game was lost.")
            self.app.refresh()
            return
        if self.spectator:
            with contextlib.suppress(ArenaError):
                await self.conn.request(
                    {"type": "join", "room": self.room_id, "role": "spectator"}, expect="joined"
                )
                await self.send_watch()
        elif self.watching_others:
            # What a resumed seat watches is not part of the seat: ask again.
            await self.send_watch()

    async def send_watch(self, player: str | None = None) -> None:
        """Ask for the watched games' snapshots and events (``player``'s, or the focus's)."""
        assert self.conn is not None
        msg: dict[str, Any] = {"type": "watch", "room": self.room_id}
        if player is not None or self.focus is not None:
            msg["player"] = player or self.focus
        with contextlib.suppress(RequestFailed):
            await self.conn.send(msg)

    # -- messages ------------------------------------------------------------------------------

    def on_message(self, msg: dict[str, Any]) -> None:
        """Fold one server message into the session and schedule a redraw."""
        if msg["type"] != "pong":
            self.app.emit(msg)
        handler = getattr(self, "_on_" + msg["type"], None)
        if handler is not None:
            handler(msg)
        self.game_changed.set()
        self.refresh_panel()
        if (self.spectator or self.watching_others) and self.session.boards:
            self.show_watched()  # the boards follow the panel's order and numbers
        self.app.refresh()

    def _on_room(self, msg: dict[str, Any]) -> None:
        room = msg["room"]
        if self.room_id is not None and str(room.get("id", "")).lower() != self.room_id.lower():
            return
        self.room = room
        self.open_seed = bool(room.get("open_seed", self.open_seed))
        now = self.app.clock()
        for player in room.get("players", []):
            pid = player["player"]
            self.names[pid] = player["name"]
            self.progress[pid] = {**self.progress.get(pid, {}), **player}
            self._away(pid, player, now)
        current = {player["player"] for player in room.get("players", [])}
        for gone in set(self.progress) - current:
            if self.progress[gone].get("status") == "waiting":
                del self.progress[gone]
        status = room.get("status")
        if status == "countdown" and room.get("go_at"):
            self._countdown(room["go_at"])
        elif status == "racing" and room.get("started_at"):
            self._start(room["started_at"], room.get("ends_at"))
        elif status == "finished":
            self.session.clock_end_ms = self._local(room.get("finished_at"))
        if status == "lobby":
            self.session.status = self.lobby_hint
            self._maybe_auto_start()

    def _away(self, pid: str, player: dict[str, Any], now: int) -> None:
        """Whether a racer's connection is gone, and since when on this client's clock."""
        away = self.session.away_since
        if player.get("connected", True) or pid == self.me:
            away.pop(pid, None)
            return
        since = player.get("away_since")
        local = self._local(since) if isinstance(since, int) else None
        if local is not None:
            away[pid] = min(local, now)
        else:
            away.setdefault(pid, now)

    def _on_joined(self, msg: dict[str, Any]) -> None:
        self.room_id = msg["room"]
        if msg.get("player"):
            self.me = msg["player"]

    def _on_countdown(self, msg: dict[str, Any]) -> None:
        self._countdown(msg["go_at"])
        seconds = -(-max(0, msg["go_at"] - msg["at"]) // 1000)
        if not self.solo and seconds > 0:
            self.session.say(f"The race starts in {plural(seconds, 'second')}.")

    def _countdown(self, go_at: int) -> None:
        self.session.countdown_to_ms = self._local(go_at)
        self.session.status = "Get ready..."

    def _on_started(self, msg: dict[str, Any]) -> None:
        self._start(msg["at"], msg.get("ends_at"))
        if not self.solo:
            limit = msg.get("ends_at")
            self.session.say(
                "Go! The race has started"
                + (f": {_duration(limit - msg['at'])} to play." if limit else ".")
            )
        if self.spectator:
            self._spawn(self.send_watch())

    def _start(self, at: int, ends_at: int | None) -> None:
        self.session.countdown_to_ms = None
        self.session.clock_start_ms = self._local(at)
        self.session.time_limit_ms = ends_at - at if ends_at else None
        if not self.started.is_set():
            self.started.set()
            if self.spectator:
                self.session.status = "Watching live."
            else:
                update_status(self.app, self.my_view)

    def _on_progress(self, msg: dict[str, Any]) -> None:
        player = msg["player"]
        self.progress[player] = {**self.progress.get(player, {}), **msg}
        if player == self.me and msg["status"] in _DONE and not self.finished.is_set():
            self.session.status = self.done_status(msg)
        elif msg["status"] in _DONE and player != self.me:
            name = self.names.get(player, player)
            cards = plural(msg["foundation"], "card")
            self.session.say(
                {
                    "won": f"{name} won: all 52 cards up in {plural(msg['moves'], 'move')}.",
                    "over": f"{name} is stuck (no move left) with {cards} on the foundations.",
                    "resigned": f"{name} resigned with {cards} on the foundations.",
                }[msg["status"]]
            )

    def _on_game(self, msg: dict[str, Any]) -> None:
        track = Track()
        try:
            for event in msg["events"]:
                track.view = public_fold_event(track.view, event)
        except ArenaError as error:
            self.session.error = f"Could not follow {msg['player']}'s game: {error.reason}"
            return
        track.version = msg["version"]
        track.events = list(msg["events"])
        self.games[msg["player"]] = track
        self._game_updated(msg["player"])

    def _on_game_event(self, msg: dict[str, Any]) -> None:
        track = self.games.setdefault(msg["player"], Track())
        if msg["version"] <= track.version:
            return
        if msg["version"] != track.version + 1:
            if self.spectator:
                self._spawn(self.send_watch())
            elif msg["player"] != self.me:
                self._spawn(self.send_watch(msg["player"]))
            return
        try:
            track.view = public_fold_event(track.view, msg["event"])
        except ArenaError as error:
            self.session.error = f"Could not follow {msg['player']}'s game: {error.reason}"
            return
        track.version = msg["version"]
        track.events.append(msg["event"])
        event = msg["event"]
        if event.get("type") == "resigned" and event.get("reason") == "abandoned":
            name = (
                "You were" if msg["player"] == self.me else f"{self.names.get(msg['player'])} was"
            )
            self.session.say(f"{name} away too long: resigned by the server.")
        self._game_updated(msg["player"])

    def _game_updated(self, player: str) -> None:
        self.game_changed.set()
        if self.spectator:
            self.show_watched()
            return
        if self.watching_others:
            self.show_watched()
        if player == self.me:
            track = self.games[player]
            self.session.view = track.view
            if track.view is not None and track.view.over and self.session.clock_end_ms is None:
                # My clock stops with my game, not when the race ends.
                at = track.events[-1].get("at") if track.events else None
                self.session.clock_end_ms = self._local(at) if isinstance(at, int) else None
            if self.started.is_set() and not self.finished.is_set():
                mine = self.progress.get(player, {}).get("status")
                if mine not in _DONE:
                    update_status(self.app, self.session.view)

    def _on_finished(self, msg: dict[str, Any]) -> None:
        self.ranking = msg["ranking"]
        self.finish_reason = msg["reason"]
        self.session.clock_end_ms = self._local(msg["at"])
        self.session.countdown_to_ms = None
        reason = {"all_done": "every game is done", "time_limit": "time is up"}.get(
            msg["reason"], msg["reason"]
        )
        for rank in msg["ranking"]:
            self.progress[rank["player"]] = {**self.progress.get(rank["player"], {}), **rank}
            self.names.setdefault(rank["player"], rank["name"])
        self.session.away_since.clear()
        if self.solo or (len(self.ranking) <= 1 and not self.spectator):
            done = game_status(self.my_view) or "The game is over."
            self.session.status = f"{done} {self.app.next_steps}".strip()
        else:
            self.session.status = f"Race over: {reason}. {self.app.next_steps}".strip()
            places = ", ".join(
                f"{r['place']}. {r['name']} ({r['foundation']})" for r in self.ranking
            )
            self.session.say(f"Results: {places}")
        for line in fairness_lines(msg, open_seed=self.open_seed and not self.solo):
            self.session.say(line)
        self.finished.set()

    def _on_error(self, msg: dict[str, Any]) -> None:
        if msg.get("ref") is not None:
            return  # the answer to a request: whoever sent it says what went wrong
        self.session.error = f"Server: {cards_as_shown(msg['reason'])}"

    # -- a finished racer watching the others -------------------------------------------------

    def can_watch(self) -> bool:
        """Whether the server lets this racer watch the others: own game done, or race over."""
        if self.finished.is_set():
            return True
        view = self.my_view
        mine = self.progress.get(self.me or "", {}).get("status")
        return bool(view is not None and view.over) or mine in _DONE

    async def watch_others(self, who: str) -> str:
        """Show another racer's live board (``who``: a name or panel number), or every racer's
        (``who`` empty or 'all'); returns whom, for the message. ClientError before the racer's
        own game is done, RequestFailed if the server refuses."""
        assert self.conn is not None
        if not self.can_watch():
            raise ClientError(WATCH_FIRST)
        target = None if who.lower() in ("", "all") else _player_id(self, who)
        if target is not None and target == self.me:
            self.watch_back()
            return "your own board"
        msg: dict[str, Any] = {"type": "watch", "room": self.room_id}
        if target is not None:
            msg["player"] = target
        # The snapshot (`game`) is the answer; an `error` with the ref is a refusal.
        await self.conn.request(msg, expect="game", wait=10.0)
        self.focus = target
        self.watching_others = True
        self.show_watched()
        return "every racer" if target is None else self.names.get(target, target)

    def watch_back(self) -> None:
        """Back to the racer's own board."""
        self.watching_others = False
        self.focus = None
        self.session.boards = ()
        self.session.view = self.my_view

    def done_status(self, progress: dict[str, Any]) -> str:
        """The status line once this racer's game is done and the race goes on."""
        view = self.my_view
        if view is not None and view.over:
            text = game_status(view)
        else:  # progress and the game's last event travel separately (protocol.md)
            verb = {"won": "You won", "over": "No legal move left", "resigned": "You resigned"}
            cards = plural(progress["foundation"], "card")
            text = f"{verb[progress['status']]}: {cards} on the foundations."
        if len(self.progress) <= 1:
            return text
        return (
            f"{text} Waiting for the others: 'watch' shows their boards, 'watch N' one of "
            "them (N: their number in the panel), 'back' yours."
        )

    # -- derived state -------------------------------------------------------------------------

    @property
    def my_view(self) -> Any:
        """My game's current view, or None before it starts."""
        track = self.games.get(self.me or "")
        return track.view if track else None

    def my_version(self) -> int:
        track = self.games.get(self.me or "")
        return track.version if track else 0

    def _server_ms(self, local_ms: int) -> int:
        offset = self.conn.clock_offset_ms if self.conn is not None else 0
        return local_ms + offset

    def _local(self, server_ms: int | None) -> int | None:
        if server_ms is None:
            return None
        offset = self.conn.clock_offset_ms if self.conn is not None else 0
        return server_ms - offset

    def refresh_panel(self) -> None:
        """The race panel from progress and ranking, numbered in ranking order from the start;
        hidden in a room of one."""
        if (len(self.progress) <= 1 or self.solo) and not self.spectator:
            self.session.racers = {}
            return
        started = self.session.clock_start_ms
        places = {r["player"]: r["place"] for r in self.ranking or []}
        time_up = self.ranking is not None and getattr(self, "finish_reason", "") == "time_limit"
        racers = {}
        for player, info in self.progress.items():
            finished_at = info.get("finished_at")
            reached_at = info.get("reached_at")
            state = _RACER_STATES.get(info.get("status", "waiting"), RacerState.PLAYING)
            if self.ranking is not None and state is RacerState.PLAYING:
                state = RacerState.TIME_UP if time_up else RacerState.OVER
            racers[player] = Racer(
                name=self.names.get(player, info.get("name", player)),
                cards=info.get("foundation", 0),
                moves=info.get("moves", 0),
                state=state,
                finished_ms=(
                    finished_at - self._server_ms(started)
                    if finished_at is not None and started is not None
                    else None
                ),
                rank=places.get(player),
                me=player == self.me,
                reached_ms=reached_at if isinstance(reached_at, int) else None,
            )
        self.session.racers = ranked(racers)

    def show_watched(self) -> None:
        """The watched board(s): the focused player's, or everyone's in panel order, each
        labelled with its panel number and name, so it is always clear whose board it is."""
        self.refresh_panel()
        order = list(self.session.racers)
        players = sorted(
            self.room.get("players", []),
            key=lambda p: order.index(p["player"]) if p["player"] in order else len(order),
        )
        boards = []
        for player in players:
            pid = player["player"]
            if self.focus is not None and pid != self.focus:
                continue
            track = self.games.get(pid)
            if track is not None and track.view is not None:
                number = order.index(pid) + 1 if pid in order else 0
                label = (f"{number}. " if number else "") + player["name"]
                boards.append((label + (" (you)" if pid == self.me else ""), track.view))
        self.session.boards = tuple(boards)

    def _maybe_auto_start(self) -> None:
        if (
            self.auto_start_at is not None
            and not self._start_sent
            and len(self.room.get("players", [])) >= self.auto_start_at
            and self.conn is not None
        ):
            self._start_sent = True
            self._spawn(self.conn.send({"type": "start"}))

    # -- waiting -------------------------------------------------------------------------------

    async def wait_for(self, predicate: Any, wait: float = 30.0) -> bool:
        """Wait until ``predicate()`` holds after some game event (or ``wait`` seconds pass)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not predicate():
            self.game_changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.game_changed.wait(), left)
            if self.conn is not None and self.conn.failure is not None:
                raise self.conn.failure
        return True


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
        track = self.client.games.get(self.client.me or "")
        return list(track.events) if track else []

    async def move(self, move: str) -> None:
        assert self.client.conn is not None
        if self.client.lost:
            raise ClientError(LOST)
        ack = await self.client.conn.move(move)
        # The ack and the game's events travel separate paths; wait for the board to catch up
        # so the next friendly move is parsed against the position it follows.
        await self.client.wait_for(lambda: self.client.my_version() >= ack["version"], 10.0)

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


LOST = "this game was lost when the server restarted: type 'quit', then start a new one"


def _duration(ms: int) -> str:
    seconds = max(0, ms) // 1000
    if seconds % 60 == 0 and seconds >= 60:
        return plural(seconds // 60, "minute")
    return plural(seconds, "second") if seconds < 60 else f"{seconds // 60}:{seconds % 60:02d}"


def fairness_lines(msg: dict[str, Any], *, open_seed: bool) -> list[str]:
    """What the revealed seed means for the race, in plain words."""
    lines = []
    if msg.get("seed") is not None:
        if commitment_ok(msg["seed"], msg["salt"], msg["commitment"]):
            lines.append(
                f"Fair deal: the seed revealed now ({msg['seed']}) is the one the server locked "
                "in before the start."
            )
        else:
            lines.append(
                f"Warning: the seed revealed now ({msg['seed']}) is NOT the one the server locked "
                "in before the start: this deal cannot be trusted."
            )
    if open_seed:
        lines.append(f"This room had an {OPEN_SEED}.")
    return lines


def _title(kind: str, variant: str, room: str | None, *, open_seed: bool = False) -> str:
    where = f"room {room}" if room else "connecting"
    return f"Solitaire Arena - {variant.capitalize()} - {kind} - {where}" + (
        " - open seed" if open_seed else ""
    )


async def _play_room(
    client: RoomClient, app: App, *, race: bool, wait_for_results: bool
) -> Outcome:
    """The player's loop in a room: moves once the race starts, `start` in the lobby. Ctrl-C
    leaves without resigning (the seat waits for the server's grace); `quit` resigns."""
    driver = ServerDriver(client)
    assert client.conn is not None
    conn = client.conn

    async def extra(command: Command) -> bool:
        if command.kind is Kind.START:
            try:
                await conn.send({"type": "start"})
            except ArenaError as error:
                app.session.error = f"start: {error.reason}"
            return True
        if race and command.kind in (Kind.WATCH, Kind.BACK):
            await _watch_command(client, app, command)
            return True
        if command.kind is Kind.HINT and client.my_view is not None:
            return await _server_hint(conn, app)
        if command.kind is Kind.NEW and race:
            app.session.error = "new: start another race with 'solitaire race create'"
            return True
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

    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, interrupted.set)
    reader = asyncio.create_task(play_loop(app, driver, extra=extra))
    failed = asyncio.create_task(_until_failed(conn))
    stopped = asyncio.create_task(interrupted.wait())
    try:
        await asyncio.wait({reader, failed, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGINT)
        for task in (reader, failed, stopped):
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
    outcome = reader.result()
    view = client.my_view
    left = False
    if view is not None and not view.over and not client.finished.is_set() and not client.lost:
        left = True
        # Quitting a race in progress resigns (docs/protocol.md): the race can still end for
        # the others, instead of waiting for a player who is gone.
        with contextlib.suppress(ArenaError, TimeoutError):
            await conn.request({"type": "leave"}, expect="left", wait=5.0)
        app.log("left the game: resigned")
    if wait_for_results and app.scripted and client.my_view is not None and not left:
        await _wait_results(client, conn)
    return outcome


async def _server_hint(conn: Connection, app: App) -> bool:
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


async def _watch_command(client: RoomClient, app: App, command: Command) -> None:
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
        client.watch_back()
    if client.watching_others:
        note = f"Watching {whom} live: 'watch NAME' for another racer, 'back' for your board."
        app.log(f"watching {whom}")
    else:
        note = "Back to your board."
        app.log("back to my board")
    mine = client.progress.get(client.me or "", {})
    if client.finished.is_set() or mine.get("status") not in _DONE:
        app.session.say(note)  # the status line keeps the results, or the playing hint
    elif client.watching_others:
        app.session.status = note
    else:
        app.session.status = client.done_status(mine)
        app.session.say(note)


async def _until_failed(conn: Connection) -> None:
    await conn.wait_failed()


async def _wait_results(client: RoomClient, conn: Connection) -> None:
    while not client.finished.is_set():
        if conn.failure is not None:
            raise conn.failure
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.finished.wait(), 1.0)


def _create_msg(args: Any, capacity: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "create_room", "variant": args.variant, "capacity": capacity}
    if args.seed is not None:
        msg["seed"] = seed_value(args.seed)
    if getattr(args, "winnable", False):
        msg["winnable"] = True
    return msg


def seat_store() -> SeatStore:
    """The seat files of this user (XDG state directory)."""
    return SeatStore(state_dir(os.environ))


async def _connected(  # type: ignore[no-untyped-def]
    args: Any,
    output: Output,
    script: list[str] | None,
    title: str,
    *,
    resume: Seat | None = None,
    **kw: Any,
):
    session = Session(title=title, color=output.color)
    app = App(session, output, script=script)
    app.variant = getattr(args, "variant", None)
    client = RoomClient(app, **kw)
    if resume is not None:
        # Known before the `welcome`: the server sends the room and the game right after it.
        client.me, client.room_id = resume.player, resume.room
    await client.connect(args.server, args.name, resume=resume.token if resume else None)
    if resume is not None and not _resumed(client, resume):
        client.me = client.room_id = None
        client.games.clear()
        client.progress.clear()
        client.room = {}
    return app, client


def _keep_seat(client: RoomClient, store: SeatStore, args: Any, kind: str) -> None:
    """From now on, this seat's token is on disk (and refreshed after every `welcome`)."""

    def save() -> None:
        conn = client.conn
        if conn is None or conn.resume_token is None or client.room_id is None:
            return
        store.save(
            Seat(
                server=args.server,
                room=client.room_id,
                player=client.me,
                name=args.name,
                token=conn.resume_token,
                kind=kind,
                saved_at=client.app.clock(),
            )
        )

    client.save_seat = save
    save()


def _resumed(client: RoomClient, seat: Seat | None) -> bool:
    """Whether the `welcome` gave back the seat kept on disk, in a race still on."""
    conn = client.conn
    assert conn is not None
    return bool(
        seat is not None
        and conn.resumed
        and str(conn.welcome.get("room") or "").lower() == seat.room.lower()
    )


async def _take_seat_back(client: RoomClient, app: App, seat: Seat) -> bool:
    """After a resumed `welcome`: wait for the room, and say the seat is back. False when the
    game is over already (nothing left to play in it)."""
    client.room_id = seat.room
    client.me = seat.player
    await client.wait_for(lambda: bool(client.room), 15.0)
    if client.room.get("status") == "finished":
        return False
    if client.room.get("status") == "racing":
        await client.wait_for(lambda: client.my_view is not None, 15.0)
        if client.my_view is not None and client.my_view.over:
            return False
    app.session.say(f"Took your seat back in room {seat.room}: the game goes on.")
    app.log(f"took the seat back in room {seat.room}")
    return True


def _left_note(client: RoomClient, kind: str) -> str:
    """What Ctrl-C left behind, and how to take it back."""
    code = client.room_id or ""
    again = "solitaire play" if kind == SOLO else f"solitaire race join {code}"
    grace = client.conn.welcome.get("limits", {}).get("abandon_grace_s") if client.conn else None
    within = f"{grace} seconds" if isinstance(grace, int) else GRACE_TEXT
    return (
        f"Left room {code} without resigning: your seat is kept for {within}. "
        f"Run '{again}' to take it back."
    )


async def play_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire play`: a room of one on the server, started at once; after a crash or Ctrl-C
    the same command takes the game back (the seat's token is on disk)."""
    store = seat_store()
    seat = store.latest(args.server, args.name, SOLO, now_ms()) if args.seed is None else None
    app, client = await _connected(
        args, output, script, _title("solo", args.variant, None), resume=seat, solo=True
    )
    conn = client.conn
    assert conn is not None
    app.confirm_texts = confirm_texts(online=True, race=False)
    app.next_steps = "Next: 'new' for another deal, 'replay' to see this game again, 'quit'."
    try:
        async with app:
            back = _resumed(client, seat) and seat is not None
            if back:
                assert seat is not None
                back = await _take_seat_back(client, app, seat)
                if back:
                    variant = client.room.get("variant", args.variant)
                    app.variant = variant
                    app.session.title = _title("solo", variant, seat.room)
                    _keep_seat(client, store, args, SOLO)
                    update_status(app, client.my_view)
                else:
                    store.forget(args.server, seat.room, args.name)
                    await conn.request({"type": "leave"}, expect="left", wait=5.0)
            elif seat is not None:
                store.forget(args.server, seat.room, args.name)
            while True:
                if not back:
                    await _new_solo_game(client, app, args, store)
                back = False
                outcome = await _play_room(client, app, race=False, wait_for_results=False)
                if client.my_view is not None and client.my_view.over:
                    store.forget(args.server, client.room_id or "", args.name)
                if outcome is not Outcome.NEW or client.interrupted:
                    break
                with contextlib.suppress(ArenaError, TimeoutError):
                    await conn.request({"type": "leave"}, expect="left", wait=5.0)
                store.forget(args.server, client.room_id or "", args.name)
                args.seed = None  # 'new' is a new deal: a fresh secret seed
    finally:
        await conn.close()
    if not client.interrupted:
        if client.room_id and not (client.my_view is not None and client.my_view.over):
            store.forget(args.server, client.room_id, args.name)
        app.final_screen()
        return exit_status(app)
    write_lines(app.out, [_left_note(client, SOLO)])
    return 130


async def _new_solo_game(client: RoomClient, app: App, args: Any, store: SeatStore) -> None:
    """Create, join and start a room of one; the seat is kept on disk."""
    conn = client.conn
    assert conn is not None
    client.games.clear()
    client.progress.clear()
    client.ranking = None
    client.finished.clear()
    client.started.clear()
    app.session.view = None
    app.session.clock_end_ms = None
    msg = {**_create_msg(args, 1), "countdown_ms": 0}
    room = (await conn.request(msg, expect="room"))["room"]
    client.room_id = room["id"]
    client.open_seed = bool(room.get("open_seed", args.seed is not None))
    app.session.title = _title("solo", args.variant, room["id"])
    await conn.request({"type": "join", "room": room["id"]}, expect="joined")
    _keep_seat(client, store, args, SOLO)
    await conn.send({"type": "start"})
    if not await client.wait_for(lambda: client.my_view is not None, 15.0):
        raise ClientError("the server did not start the game")
    update_status(app, client.my_view)


def _room_error(code: str, error: ArenaError) -> ArenaError:
    """A refused `join` said once, in words a player can act on."""
    if error.code == "no_such_room":
        return ClientError(
            f"there is no room {code} on this server (check the code; 'solitaire rooms' lists "
            "the open ones)",
            code=error.code,
        )
    if error.code == "wrong_status":
        return ClientError(
            f"room {code} has already started or finished: 'solitaire watch {code}' watches it",
            code=error.code,
        )
    return error


async def race_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire race create` / `race join CODE`: the lobby, the countdown, the race, results.
    `race join CODE` again after a crash or Ctrl-C takes the seat back."""
    creating = args.race_command == "create"
    store = seat_store()
    seat = None if creating else store.load(args.server, args.code, args.name, now_ms())
    app, client = await _connected(
        args, output, script, _title("race", args.variant, None), resume=seat
    )
    conn = client.conn
    assert conn is not None
    app.confirm_texts = confirm_texts(online=True, race=True)
    app.next_steps = (
        "Next: 'replay' to see your game again, 'quit' to leave "
        "('solitaire race create' starts another race)."
    )
    try:
        async with app:
            back = False
            if seat is not None and _resumed(client, seat):
                back = True  # in the room again, whether the game is still on or not
                if not await _take_seat_back(client, app, seat):
                    app.session.say(f"Back in room {seat.room}: your game there is over.")
                    if client.my_view is not None and not client.finished.is_set():
                        mine = client.progress.get(seat.player or "", {})
                        app.session.status = client.done_status(mine)
                code = seat.room
                if client.room.get("status") == "lobby":
                    client.lobby_hint = f"Room {code}: waiting for the race to start..."
                    app.session.status = client.lobby_hint
            if creating:
                limits = conn.welcome.get("limits", {})
                capacity = args.players or limits.get("max_players_per_room", 4)
                msg = _create_msg(args, capacity)
                if args.countdown is not None:
                    msg["countdown_ms"] = int(args.countdown * 1000)
                if args.time_limit is not None:
                    msg["time_limit_ms"] = int(args.time_limit * 1000)
                room = (await conn.request(msg, expect="room"))["room"]
                code = room["id"]
                client.open_seed = bool(room.get("open_seed", args.seed is not None))
                client.auto_start_at = args.players
                client.lobby_hint = f"Room {code}: join with 'solitaire race join {code}'. " + (
                    f"Starts at {args.players} players."
                    if args.players
                    else "Type 'start' to start."
                )
            elif not back:
                code = args.code
                client.lobby_hint = f"Room {code}: waiting for the race to start..."
            if client.open_seed or (creating and args.seed is not None):
                client.lobby_hint += f" ({OPEN_SEED}.)"
            client.room_id = code
            app.session.title = _title("race", client.room.get("variant", args.variant), code)
            if not back:
                app.session.status = client.lobby_hint
                app.log(f"room {code}")
                try:
                    await conn.request({"type": "join", "room": code}, expect="joined")
                except RequestFailed as error:
                    if seat is not None and error.code == "wrong_status":
                        store.forget(args.server, code, args.name)
                        raise ClientError(
                            f"your seat in room {code} is gone: you were away longer than the "
                            f"server's grace and were resigned ('solitaire watch {code}' "
                            "watches the race)",
                            code="seat_gone",
                        ) from None
                    raise _room_error(code, error) from None
                await client.wait_for(lambda: bool(client.room), 15.0)
            _keep_seat(client, store, args, RACE)
            variant = client.room.get("variant", args.variant)
            app.variant = variant
            notes = []
            if client.open_seed and OPEN_SEED not in client.lobby_hint:
                notes.append(f" ({OPEN_SEED}.)")
            if client.room.get("winnable") and WINNABLE not in client.lobby_hint:
                notes.append(f" ({WINNABLE}.)")
            client.lobby_hint += "".join(notes)
            if notes and client.room.get("status") == "lobby":
                app.session.status = client.lobby_hint
            app.session.title = _title("race", variant, code, open_seed=client.open_seed)
            client.refresh_panel()
            app.refresh()
            await _play_room(client, app, race=True, wait_for_results=True)
    finally:
        await conn.close()
    if client.interrupted:
        write_lines(app.out, [_left_note(client, RACE)])
        return 130
    if client.room_id:
        store.forget(args.server, client.room_id, args.name)
    if client.ranking is not None and app.scripted and not output.json:
        for rank in client.ranking:
            app.log(f"{rank['place']}. {rank['name']} {rank['status']} {rank['foundation']}")
    app.final_screen()
    return exit_status(app)


async def watch_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire watch CODE [--player NAME]`: boards redrawn live as events arrive."""
    app, client = await _connected(
        args, output, script, f"Solitaire Arena - watching room {args.code}", spectator=True
    )
    conn = client.conn
    assert conn is not None
    try:
        async with app:
            client.room_id = args.code
            try:
                await conn.request(
                    {"type": "join", "room": args.code, "role": "spectator"}, expect="joined"
                )
            except RequestFailed as error:
                raise _room_error(args.code, error) from None
            await client.wait_for(lambda: bool(client.room), 15.0)
            if args.player is not None:
                client.focus = _player_id(client, args.player)
            _watch_title(client, app)
            app.session.status = (
                "Watching live." if client.started.is_set() else "Waiting for the race to start..."
            )
            if client.open_seed:
                app.session.say(f"This room has an {OPEN_SEED}.")
            app.session.say(WATCH_HELP)
            await client.send_watch()
            app.refresh()
            await _watch_loop(client, app)
    finally:
        await conn.close()
    return 0


WATCH_HELP = (
    "Type a racer's number or name to follow one, 'all' for everyone, 'help rules' for the "
    "rules, 'quit' to leave."
)


async def _watch_loop(client: RoomClient, app: App) -> None:
    """Until quit or end of input; a number or a name focuses one racer, 'all' shows all."""
    while True:
        line = await app.readline()
        if line is None:
            if app.scripted or not app.output.tty:
                await _wait_results(client, client.conn)  # type: ignore[arg-type]
            return
        word = line.strip()
        if word.lower() in ("q", "quit", "exit"):
            return
        command = parse_command(word)
        if command.kind is Kind.WATCH:  # what racers type: `watch NAME` means NAME here too
            word = command.arg or "all"
        if not word:
            continue
        app.session.error = None
        if command.kind is Kind.HELP:
            app.session.say(WATCH_HELP)
            app.refresh()
            continue
        if command.kind is Kind.RULES:
            from client.rules import plain, rules_for

            variant = client.room.get("variant")
            app.page(f"The rules of {str(variant).capitalize()}", plain(rules_for(variant)))
            continue
        if word.lower() == "all":
            client.focus = None
        else:
            try:
                client.focus = _player_id(client, word)
            except ClientError as error:
                app.session.error = error.reason
                app.refresh()
                continue
        client.show_watched()
        _watch_title(client, app)
        await client.send_watch()
        app.refresh()


def _watch_title(client: RoomClient, app: App) -> None:
    """A spectator's title says whose board it is."""
    code = client.room_id
    if client.focus is None:
        app.session.title = f"Solitaire Arena - watching room {code} - everyone"
    else:
        name = client.names.get(client.focus, client.focus)
        app.session.title = f"Solitaire Arena - watching {name} in room {code}"


def _player_id(client: RoomClient, who: str) -> str:
    """A racer's id from a name, a player id, or a number: the line of the racers panel (the
    order on screen), or the join order while there is no panel."""
    players = client.room.get("players", [])
    order = list(client.session.racers) or [p["player"] for p in players]
    if who.isdigit() and 1 <= int(who) <= len(order):
        return order[int(who) - 1]
    for player in players:
        if who in (player["name"], player["player"]):
            return player["player"]
    folded = [p["player"] for p in players if p["name"].casefold() == who.casefold()]
    if len(folded) == 1:
        return folded[0]
    names = ", ".join(p["name"] for p in players) or "none yet"
    raise ClientError(f"no player {who!r} in this room (players: {names})")


async def rooms_online(args: Any, output: Output) -> int:
    """`solitaire rooms`: one line per room."""
    app, client = await _connected(args, output, [], "rooms")
    conn = client.conn
    assert conn is not None
    try:
        answer = await conn.request({"type": "list_rooms"}, expect="rooms")
    finally:
        await conn.close()
    if output.json:
        return 0  # the answer was printed as JSON by the client already
    write_lines(app.out, room_lines(answer["rooms"]))
    return 0


_STATUS_ORDER = {"lobby": 0, "countdown": 1, "racing": 2, "finished": 3}


def room_lines(rooms: list[dict[str, Any]]) -> list[str]:
    """`solitaire rooms`: rooms to join first, then races on, then finished ones (newest
    first); who is in each, and which seeds are open. Columns by display width."""

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
        line = (
            f"{ljust(str(room.get('id', '')), 10)} {room.get('variant', ''):<11} "
            f"{room.get('status', ''):<9} {seats:>5} {room.get('spectators', 0):>5}  "
            f"{cut(names, 40, ellipsis='…')}"
        )
        lines.append(line + (f"  ({'; '.join(notes)})" if notes else ""))
    if not rooms:
        lines.append("(no rooms: 'solitaire race create' opens one)")
    return lines


async def replay_online(args: Any, output: Output) -> int:
    """`solitaire replay CODE [--player NAME]`: fetch a game's public events, then replay them."""
    if args.code is None:
        raise ClientError("replay needs a room CODE (or --offline with --seed and --moves)")
    # Fetching shows nothing (JSON output aside); the replay below has its own screen.
    quiet = Output(color=False, tty=False, json=False)
    _fetch_app, client = await _connected(args, quiet, [], "replay", spectator=True)
    conn = client.conn
    assert conn is not None
    try:
        client.room_id = args.code
        try:
            await conn.request(
                {"type": "join", "room": args.code, "role": "spectator"}, expect="joined"
            )
        except RequestFailed as error:
            raise _room_error(args.code, error) from None
        await client.wait_for(lambda: bool(client.room), 15.0)
        players = client.room.get("players", [])
        if not players:
            raise ClientError(f"room {args.code} has no games")
        if args.player is not None:
            player = _player_id(client, args.player)
        else:
            player = players[0]["player"]
        client.focus = player
        await conn.send({"type": "watch", "room": args.code, "player": player})
        if not await client.wait_for(lambda: player in client.games, 15.0):
            raise ClientError(f"room {args.code}: the game has not started, nothing to replay")
        events = list(client.games[player].events)
    finally:
        await conn.close()
    name = client.names.get(player, player)
    session = Session(
        title=f"Solitaire Arena - replay of {name} - room {args.code}", color=output.color
    )
    app = App(session, output, script=[] if args.speed is None and output.json else None)
    async with app:
        await run_replay(app, events, args.speed)
    return 0


async def run_online(args: Any, output: Output, script: list[str] | None) -> int:
    """Dispatch a network subcommand."""
    if args.command == "play":
        return await play_online(args, output, script)
    if args.command == "race":
        return await race_online(args, output, script)
    if args.command == "watch":
        return await watch_online(args, output, script)
    if args.command == "rooms":
        return await rooms_online(args, output)
    if args.command == "replay":
        return await replay_online(args, output)
    raise ClientError(f"unknown command {args.command!r}")
