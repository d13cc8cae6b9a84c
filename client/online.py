"""The network modes: solo play on a server and races, and the dispatch of every network command.

Each mode opens a `RoomClient` (room_client.py), chooses which requests to send and when to stop;
the player's loop in a room is room_play.py's, watching and replays are watching.py's, the list
of rooms is rooms.py's. A seat's resume token is kept on disk (seats.py), so the same command
takes the seat back after a crash or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from client.app import App, now_ms
from client.cli import Output
from client.commands import confirm_texts
from client.connection import RequestFailed
from client.offline import exit_status, seed_value
from client.play import Outcome, update_status
from client.quick import find_match
from client.race_panel import OPEN_SEED
from client.room_client import RoomClient
from client.room_entry import connected, resumed, room_error
from client.room_play import UNFILLED_TEXT, log_ranking, play_room
from client.rooms import rooms_online
from client.seats import RACE, SOLO, Seat, SeatStore, state_dir
from client.terminal import write_lines
from client.watching import replay_online, watch_online
from shared import protocol as p
from shared.errors import ArenaError, ClientError

WINNABLE = "a winnable deal: the server has solved it"
RATED = "rated: counts for the racers who are logged in"
BOTS = "bot(s) racing: unrated"
GRACE_TEXT = "the server's grace (a minute by default)"


def _title(
    kind: str, variant: str, room: str | None, *, open_seed: bool = False, searching: bool = False
) -> str:
    where = f"room {room}" if room else "searching" if searching else "connecting"
    return f"Solitaire Arena - {variant.capitalize()} - {kind} - {where}" + (
        " - open seed" if open_seed else ""
    )


def _create_msg(args: Any, capacity: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "create_room", "variant": args.variant, "capacity": capacity}
    if args.seed is not None:
        msg["seed"] = seed_value(args.seed)
    if getattr(args, "winnable", False):
        msg["winnable"] = True
    if getattr(args, "unrated", False):
        msg["rated"] = False
    if getattr(args, "bots", 0):
        msg["bots"] = args.bots
        msg["bot_level"] = args.bot_level
    return msg


def seat_store() -> SeatStore:
    """The seat files of this user (XDG state directory)."""
    return SeatStore(state_dir(os.environ))


def _keep_seat(client: RoomClient, store: SeatStore, args: Any, kind: str) -> None:
    """From now on, this seat's token is on disk (and refreshed after every `welcome`)."""

    def save() -> None:
        conn = client.conn
        if conn is None or conn.resume_token is None or client.state.room_id is None:
            return
        store.save(
            Seat(
                server=args.server,
                room=client.state.room_id,
                player=client.state.me,
                name=args.name,
                token=conn.resume_token,
                kind=kind,
                saved_at=client.app.clock(),
            )
        )

    client.save_seat = save
    save()


async def _take_seat_back(client: RoomClient, app: App, seat: Seat) -> bool:
    """After a resumed `welcome`: wait for the room, and say the seat is back. False when the
    game is over already (nothing left to play in it)."""
    client.state.room_id = seat.room
    client.state.me = seat.player
    await client.wait_for(lambda: bool(client.state.room), 15.0)
    if client.state.room.get("status") == "finished":
        return False
    if client.state.room.get("status") == "racing":
        await client.wait_for(lambda: client.my_view is not None, 15.0)
        if client.my_view is not None and client.my_view.over:
            return False
    app.session.say(f"Took your seat back in room {seat.room}: the game goes on.")
    app.log(f"took the seat back in room {seat.room}")
    return True


def _left_note(client: RoomClient, kind: str) -> str:
    """What Ctrl-C left behind, and how to take it back."""
    code = client.state.room_id or ""
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
    app, client = await connected(
        args, output, script, _title("solo", args.variant, None), resume=seat, solo=True
    )
    conn = client.conn
    assert conn is not None
    app.confirm_texts = confirm_texts(online=True, race=False)
    app.next_steps = "Next: 'new' for another deal, 'replay' to see this game again, 'quit'."
    try:
        async with app:
            back = resumed(client, seat) and seat is not None
            if back:
                assert seat is not None
                back = await _take_seat_back(client, app, seat)
                if back:
                    variant = client.state.room.get("variant", args.variant)
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
                outcome = await play_room(client, app, race=False, wait_for_results=False)
                if client.my_view is not None and client.my_view.over:
                    store.forget(args.server, client.state.room_id or "", args.name)
                if outcome is not Outcome.NEW or client.interrupted:
                    break
                with contextlib.suppress(ArenaError, TimeoutError):
                    await conn.request({"type": "leave"}, expect="left", wait=5.0)
                store.forget(args.server, client.state.room_id or "", args.name)
                args.seed = None  # 'new' is a new deal: a fresh secret seed
    finally:
        await conn.close()
    if not client.interrupted:
        if client.state.room_id and not (client.my_view is not None and client.my_view.over):
            store.forget(args.server, client.state.room_id, args.name)
        app.final_screen()
        return exit_status(app)
    write_lines(app.out, [_left_note(client, SOLO)])
    return 130


async def _new_solo_game(client: RoomClient, app: App, args: Any, store: SeatStore) -> None:
    """Create, join and start a room of one; the seat is kept on disk."""
    conn = client.conn
    assert conn is not None
    client.state.new_game()
    client.view.finished.clear()
    client.view.started.clear()
    app.session.view = None
    app.session.clock_end_ms = None
    msg = {**_create_msg(args, 1), "countdown_ms": 0}
    room = (await conn.request(msg, expect="room"))["room"]
    client.state.room_id = room["id"]
    client.state.open_seed = bool(room.get("open_seed", args.seed is not None))
    app.session.title = _title("solo", args.variant, room["id"])
    await conn.request({"type": "join", "room": room["id"]}, expect="joined")
    _keep_seat(client, store, args, SOLO)
    await conn.send({"type": "start"})
    if not await client.wait_for(lambda: client.my_view is not None, 15.0):
        raise ClientError("the server did not start the game")
    update_status(app, client.my_view)


async def _search(client: RoomClient, app: App, args: Any) -> str | None:
    """Wait in the queue until the server forms a room; its code, or None after Ctrl-C (the
    queue left)."""
    app.session.title = _title("race", args.variant, None, searching=True)
    found = await find_match(client, app, args)
    if found is None:
        client.interrupted = True
        return None
    client.view.lobby_hint = f"Room {found}: the race starts when everyone is seated..."
    return found


async def _rematch(client: RoomClient, app: App, args: Any, store: SeatStore, code: str) -> str:
    """Out of room ``code``, whose race is over, into its rematch: the room a rival offered
    already, or a new one like it (docs/protocol.md, "Rematch"). Its code."""
    conn = client.conn
    assert conn is not None
    offered = client.view.rematch  # a rival's, if one was told
    store.forget(args.server, code, args.name)
    client.forget_room()
    try:
        joined = await conn.request({"type": "rematch"}, expect="joined")
    except RequestFailed as error:
        if offered is not None and error.code in ("wrong_status", "room_full"):
            started = error.code == "wrong_status"
            raise ClientError(
                f"the rematch in room {offered} "
                + ("has already started" if started else "is full")
                + f": 'solitaire watch {offered}' watches it",
                code=error.code,
            ) from None
        raise
    rematch = str(joined["room"])
    client.view.lobby_hint = (
        f"Room {rematch}: the rematch. Type 'start' to start; the others type 'rematch', or "
        f"'solitaire race join {rematch}'."
    )
    app.session.clear_messages()  # the last race's lines: its room is behind us
    app.session.say(f"Rematch of room {code}: you are in room {rematch}.")
    app.log(f"rematch in room {rematch}")
    return rematch


async def _enter_room(
    client: RoomClient,
    app: App,
    args: Any,
    store: SeatStore,
    seat: Seat | None,
    code: str,
    *,
    back: bool,
    join: bool,
) -> None:
    """Into room ``code`` as a racer, its seat kept on disk and its lobby shown: a seat taken
    back (``back``) is there already, a quick race's room seats its players itself, and any
    other room is joined (``join``)."""
    conn = client.conn
    assert conn is not None
    client.state.room_id = code
    app.session.title = _title("race", client.state.room.get("variant", args.variant), code)
    if not back:
        app.session.status = client.view.lobby_hint
        app.log(f"room {code}")
        try:
            if join:
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
            raise room_error(code, error) from None
        await client.wait_for(lambda: bool(client.state.room), 15.0)
    _keep_seat(client, store, args, RACE)
    variant = client.state.room.get("variant", args.variant)
    app.variant = variant
    notes = []
    if client.state.open_seed and OPEN_SEED not in client.view.lobby_hint:
        notes.append(f" ({OPEN_SEED}.)")
    if client.state.room.get("winnable") and WINNABLE not in client.view.lobby_hint:
        notes.append(f" ({WINNABLE}.)")
    if client.state.room.get("rated") and RATED not in client.view.lobby_hint:
        notes.append(f" ({RATED}.)")
    bots = sum(1 for racer in client.state.room.get("players", []) if racer.get("bot"))
    if bots and BOTS not in client.view.lobby_hint:
        notes.append(f" ({bots} {BOTS}.)")
    shown = app.session.status == client.view.lobby_hint
    client.view.lobby_hint += "".join(notes)
    # Only while the lobby's hint is what the status line shows: the race may have
    # started while this waited for the room (no `room` message says so, `started` does).
    if notes and shown:
        app.session.status = client.view.lobby_hint
    app.session.title = _title("race", variant, code, open_seed=client.state.open_seed)
    client.view.refresh_panel()
    app.refresh()


async def race_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire race create` / `race join CODE`: the lobby, the countdown, the race, results.
    `race join CODE` again after a crash or Ctrl-C takes the seat back."""
    creating = args.race_command == "create"
    quick = args.race_command == "quick"
    store = seat_store()
    seat = None if creating or quick else store.load(args.server, args.code, args.name, now_ms())
    app, client = await connected(
        args,
        output,
        script,
        _title("race", args.variant, None),
        resume=seat,
        room=None if creating or quick else args.code,
    )
    conn = client.conn
    assert conn is not None
    app.confirm_texts = confirm_texts(online=True, race=True)
    app.next_steps = (
        "Next: 'rematch' to race them again, 'replay' to see your game again, 'quit' to leave."
    )
    try:
        async with app:
            back = False
            if seat is not None and resumed(client, seat):
                back = True  # in the room again, whether the game is still on or not
                if not await _take_seat_back(client, app, seat):
                    app.session.say(f"Back in room {seat.room}: your game there is over.")
                    if client.my_view is not None and not client.view.finished.is_set():
                        mine = client.state.progress.get(seat.player or "", {})
                        app.session.status = client.view.done_status(mine)
                code = seat.room
                if client.state.room.get("status") == "lobby":
                    client.view.lobby_hint = f"Room {code}: waiting for the race to start..."
                    app.session.status = client.view.lobby_hint
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
                client.state.open_seed = bool(room.get("open_seed", args.seed is not None))
                client.auto_start_at = args.players
                client.view.lobby_hint = (
                    f"Room {code}: join with 'solitaire race join {code}'. "
                    + (
                        f"Starts at {args.players} players."
                        if args.players
                        else "Type 'start' to start."
                    )
                )
            elif quick:
                found = await _search(client, app, args)
                if found is None:
                    return 130
                code = found
            elif not back:
                code = args.code
                client.view.lobby_hint = f"Room {code}: waiting for the race to start..."
            if client.state.open_seed or (creating and args.seed is not None):
                client.view.lobby_hint += f" ({OPEN_SEED}.)"
            await _enter_room(client, app, args, store, seat, code, back=back, join=not quick)
            while True:
                try:
                    outcome = await play_room(client, app, race=True, wait_for_results=True)
                except ClientError as error:
                    closed = client.view.closed if error.code == "room_closed" else None
                    if not quick or closed != p.CLOSED_UNFILLED:
                        raise
                    # Matched players who did not sit down, or left before the start: the
                    # player asked for a race, so the search goes on instead of an error.
                    store.forget(args.server, code, args.name)
                    client.forget_room()
                    app.session.say(f"Room {code} closed: {UNFILLED_TEXT}. Searching again...")
                    found = await _search(client, app, args)
                    if found is None:
                        return 130
                    code = found
                else:
                    if outcome is not Outcome.REMATCH:
                        break
                    code = await _rematch(client, app, args, store, code)
                await _enter_room(client, app, args, store, None, code, back=False, join=False)
    finally:
        await conn.close()
        if quick and client.interrupted and client.state.room_id is None:
            write_lines(app.out, ["Left the queue."])
    if client.interrupted:
        if client.state.room_id:
            write_lines(app.out, [_left_note(client, RACE)])
        return 130
    if client.state.room_id:
        store.forget(args.server, client.state.room_id, args.name)
    log_ranking(app, client)
    app.final_screen()
    return exit_status(app)


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
