"""The network modes: solo play on a server, races, watching, listing rooms and replays.

`RoomClient` folds what the server sends (room state, progress, public game events) into the
`Session` the screen shows, with the same `shared` fold the server uses; the mode functions
below only choose which requests to send and when to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from client.app import App
from client.cli import Output
from client.commands import WATCH_FIRST, Command, Kind, parse_command
from client.connection import Connection, ConnectionLost, RequestFailed, State
from client.offline import seed_value
from client.play import PLAYING_HINT, play_loop, update_status
from client.replay import run_replay
from client.screen import Racer, RacerState
from client.session import Session, game_status, ranked
from client.terminal import write_lines
from shared.errors import ArenaError, ClientError
from shared.views import public_fold_event

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


def commitment_ok(seed: str | None, salt: str, commitment: str) -> bool:
    """Whether the revealed seed and salt match the commitment published at the start."""
    if seed is None:
        return False
    digest = hashlib.sha256(f"{seed}:{salt}".encode()).hexdigest()
    return digest == commitment


class RoomClient:
    """Server messages in, session state out; one per run of a network mode."""

    def __init__(self, app: App, *, spectator: bool = False) -> None:
        self.app = app
        self.session = app.session
        self.spectator = spectator
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

    async def connect(self, url: str, name: str) -> Connection:
        """Open the connection; raise ConnectionLost if the server is unreachable."""
        self.conn = Connection(
            url,
            name,
            on_message=self.on_message,
            on_state=self.on_state,
            on_welcome=self.on_welcome,
        )
        await self.conn.start()
        return self.conn

    def on_state(self, state: State, detail: str) -> None:
        """Show connection trouble in the status area, and when it is over."""
        if state is State.RECONNECTING:
            self.session.error = f"Connection lost: reconnecting ({detail})..."
        elif state is State.CONNECTED and self.conn is not None and self.conn.reconnects:
            self.session.error = None
            self.session.say("Reconnected" + (": the game goes on." if detail else "."))
        elif state is State.CLOSED and detail:
            self.session.error = detail
        self.app.refresh()

    async def on_welcome(self, welcome: dict[str, Any]) -> None:
        """After a reconnect, get back where we were: a seat resumes, a spectator re-joins."""
        if self.conn is None or not self.conn.reconnects or self.room_id is None:
            return
        if self.me is not None and not welcome["resumed"]:
            self.session.error = "The server no longer knows this seat: the game is lost."
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
        self.app.refresh()

    def _on_room(self, msg: dict[str, Any]) -> None:
        room = msg["room"]
        if self.room_id is not None and room.get("id") != self.room_id:
            return
        self.room = room
        for player in room.get("players", []):
            self.names[player["player"]] = player["name"]
            self.progress[player["player"]] = player
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

    def _on_joined(self, msg: dict[str, Any]) -> None:
        self.room_id = msg["room"]
        if msg.get("player"):
            self.me = msg["player"]

    def _on_countdown(self, msg: dict[str, Any]) -> None:
        self._countdown(msg["go_at"])
        self.session.say("Countdown started.")

    def _countdown(self, go_at: int) -> None:
        self.session.countdown_to_ms = self._local(go_at)
        self.session.status = "Get ready..."

    def _on_started(self, msg: dict[str, Any]) -> None:
        self._start(msg["at"], msg.get("ends_at"))
        self.session.say("Go! The race has started.")
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
            verb = {"won": "finished", "over": "is stuck", "resigned": "resigned"}[msg["status"]]
            self.session.say(f"{name} {verb} with {msg['foundation']} cards on the foundations.")

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
        self._game_updated(msg["player"])

    def _game_updated(self, player: str) -> None:
        self.game_changed.set()
        if self.spectator:
            self.show_watched()
            return
        if self.watching_others:
            self.show_watched()
        if player == self.me:
            self.session.view = self.games[player].view
            if self.started.is_set() and not self.finished.is_set():
                mine = self.progress.get(player, {}).get("status")
                if mine not in _DONE:
                    update_status(self.app, self.session.view)

    def _on_finished(self, msg: dict[str, Any]) -> None:
        self.ranking = msg["ranking"]
        self.session.clock_end_ms = self._local(msg["at"])
        self.session.countdown_to_ms = None
        reason = {"all_done": "every game is done", "time_limit": "time is up"}.get(
            msg["reason"], msg["reason"]
        )
        for rank in msg["ranking"]:
            self.progress[rank["player"]] = {**self.progress.get(rank["player"], {}), **rank}
            self.names.setdefault(rank["player"], rank["name"])
        if len(self.ranking) <= 1 and not self.spectator:
            self.session.status = game_status(self.my_view) or "The game is over."
        else:
            self.session.status = f"Race over: {reason}."
            places = ", ".join(
                f"{r['place']}. {r['name']} ({r['foundation']})" for r in self.ranking
            )
            self.session.say(f"Results: {places}")
        if msg.get("seed") is not None:
            ok = commitment_ok(msg["seed"], msg["salt"], msg["commitment"])
            verdict = "matches the commitment" if ok else "does NOT match the commitment"
            self.session.say(f"Seed revealed: {msg['seed']} ({verdict}).")
        self.finished.set()

    def _on_error(self, msg: dict[str, Any]) -> None:
        self.session.error = f"Server: {msg['reason']}"

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
            text = f"{verb[progress['status']]}: {progress['foundation']} cards on the foundations."
        if len(self.progress) <= 1:
            return text
        return (
            f"{text} Waiting for the others: 'watch' shows their boards, 'watch NAME' one of "
            "them, 'back' yours."
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

    def _local(self, server_ms: int | None) -> int | None:
        if server_ms is None:
            return None
        offset = self.conn.clock_offset_ms if self.conn is not None else 0
        return server_ms - offset

    def refresh_panel(self) -> None:
        """The race panel from progress and ranking; hidden in a room of one."""
        if len(self.progress) <= 1 and not self.spectator:
            self.session.racers = {}
            return
        started = self.session.clock_start_ms
        places = {r["player"]: r["place"] for r in self.ranking or []}
        racers = {}
        for player, info in self.progress.items():
            finished_at = info.get("finished_at")
            racers[player] = Racer(
                name=self.names.get(player, info.get("name", player)),
                cards=info.get("foundation", 0),
                moves=info.get("moves", 0),
                state=_RACER_STATES.get(info.get("status", "waiting"), RacerState.PLAYING),
                finished_ms=(
                    self._local(finished_at) - started
                    if finished_at is not None and started is not None
                    else None
                ),
                rank=places.get(player),
                me=player == self.me,
            )
        self.session.racers = ranked(racers)

    def show_watched(self) -> None:
        """The watched board(s): the focused player, or everyone stacked. A spectator's title
        names the focused player; a racer's boards are labelled, theirs included."""
        if self.focus is not None and self.spectator:
            track = self.games.get(self.focus)
            self.session.view = track.view if track else None
            self.session.boards = ()
            return
        boards = []
        for player in self.room.get("players", []):
            pid = player["player"]
            if self.focus is not None and pid != self.focus:
                continue
            track = self.games.get(pid)
            if track is not None and track.view is not None:
                label = player["name"] + (" (you)" if pid == self.me else "")
                boards.append((label, track.view))
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

    async def move(self, move: str) -> None:
        assert self.client.conn is not None
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
        await self.client.conn.send({"type": "resign"})
        await self.client.wait_for(lambda: bool(self.view and self.view.resigned), 10.0)

    def undo(self) -> None:
        raise ClientError("undo is only possible offline (the server keeps every move)")


def _title(kind: str, variant: str, room: str | None) -> str:
    where = f"room {room}" if room else "connecting"
    return f"Solitaire Arena - {variant.capitalize()} - {kind} - {where}"


async def _play_room(client: RoomClient, app: App, *, race: bool, wait_for_results: bool) -> None:
    """The player's loop in a room: moves once the race starts, `start` in the lobby."""
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

    reader = asyncio.create_task(play_loop(app, driver, extra=extra))
    failed = asyncio.create_task(_until_failed(conn))
    try:
        await asyncio.wait({reader, failed}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (reader, failed):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if reader.done() and not reader.cancelled() and reader.exception() is not None:
        raise reader.exception()  # type: ignore[misc]
    if failed.done() and conn.failure is not None:
        raise conn.failure
    view = client.my_view
    left = False
    if view is not None and not view.over and not client.finished.is_set():
        left = True
        # Leaving a race in progress resigns (docs/protocol.md): the race can still end for
        # the others, instead of waiting for a player who is gone.
        with contextlib.suppress(ArenaError, TimeoutError):
            await conn.request({"type": "leave"}, expect="left", wait=5.0)
        app.log("left the game: resigned")
    if wait_for_results and app.scripted and client.my_view is not None and not left:
        await _wait_results(client, conn)


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
    return msg


async def _connected(args: Any, output: Output, script: list[str] | None, title: str, **kw: Any):  # type: ignore[no-untyped-def]
    session = Session(title=title, color=output.color)
    app = App(session, output, script=script)
    client = RoomClient(app, **kw)
    await client.connect(args.server, args.name)
    return app, client


async def play_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire play`: a room of one on the server, started at once."""
    app, client = await _connected(args, output, script, _title("solo", args.variant, None))
    conn = client.conn
    assert conn is not None
    try:
        async with app:
            msg = {**_create_msg(args, 1), "countdown_ms": 0}
            room = (await conn.request(msg, expect="room"))["room"]
            client.room_id = room["id"]
            app.session.title = _title("solo", args.variant, room["id"])
            await conn.request({"type": "join", "room": room["id"]}, expect="joined")
            await conn.send({"type": "start"})
            if not await client.wait_for(lambda: client.my_view is not None, 15.0):
                raise ClientError("the server did not start the game")
            app.session.status = PLAYING_HINT
            await _play_room(client, app, race=False, wait_for_results=False)
    finally:
        await conn.close()
    app.final_screen()
    return 0


async def race_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire race create` / `race join CODE`: the lobby, the countdown, the race, results."""
    creating = args.race_command == "create"
    app, client = await _connected(args, output, script, _title("race", args.variant, None))
    conn = client.conn
    assert conn is not None
    try:
        async with app:
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
                client.auto_start_at = args.players
                client.lobby_hint = f"Room {code}: join with 'solitaire race join {code}'. " + (
                    f"Starts at {args.players} players."
                    if args.players
                    else "Type 'start' to start."
                )
            else:
                code = args.code
                client.lobby_hint = f"Room {code}: waiting for the race to start..."
            client.room_id = code
            app.session.title = _title("race", client.room.get("variant", args.variant), code)
            app.session.status = client.lobby_hint
            app.log(f"room {code}")
            await conn.request({"type": "join", "room": code}, expect="joined")
            await client.wait_for(lambda: bool(client.room), 15.0)
            app.session.title = _title("race", client.room.get("variant", args.variant), code)
            client.refresh_panel()
            app.refresh()
            await _play_room(client, app, race=True, wait_for_results=True)
    finally:
        await conn.close()
    if client.ranking is not None and app.scripted and not output.json:
        for rank in client.ranking:
            app.log(f"{rank['place']}. {rank['name']} {rank['status']} {rank['foundation']}")
    app.final_screen()
    return 0


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
            await conn.request(
                {"type": "join", "room": args.code, "role": "spectator"}, expect="joined"
            )
            await client.wait_for(lambda: bool(client.room), 15.0)
            if args.player is not None:
                client.focus = _player_id(client, args.player)
                app.session.title = f"Solitaire Arena - watching {args.player} in room {args.code}"
            app.session.status = (
                "Watching live." if client.started.is_set() else "Waiting for the race to start..."
            )
            app.session.say(WATCH_HELP)
            await client.send_watch()
            app.refresh()
            await _watch_loop(client, app)
    finally:
        await conn.close()
    return 0


WATCH_HELP = "Type a racer's number or name to follow one, 'all' for everyone, 'quit' to leave."


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
        await client.send_watch()
        app.refresh()


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
    rooms = answer["rooms"]
    lines = [f"{'room':<12} {'variant':<12} {'status':<10} {'players':>7} {'watching':>8}"]
    for room in rooms:
        seats = f"{room['players']}/{room['capacity']}"
        lines.append(
            f"{room['id']:<12} {room['variant']:<12} {room['status']:<10} "
            f"{seats:>7} {room['spectators']:>8}"
        )
    if not rooms:
        lines.append("(no rooms)")
    write_lines(app.out, lines)
    return 0


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
        await conn.request(
            {"type": "join", "room": args.code, "role": "spectator"}, expect="joined"
        )
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
    try:
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
    except ConnectionLost as error:
        raise ClientError(error.reason, code=error.code) from None
    raise ClientError(f"unknown command {args.command!r}")
