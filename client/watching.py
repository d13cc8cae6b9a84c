"""Following a room without a seat: `solitaire watch` (boards redrawn live, one racer or all)
and `solitaire replay` (a game's public events fetched, then replayed)."""

from __future__ import annotations

from typing import Any

from client.analysis import fetch_analysis
from client.app import App
from client.cli import Output
from client.commands import Kind, parse_command
from client.race_panel import OPEN_SEED
from client.replay import run_replay
from client.room_client import RoomClient
from client.room_entry import connected, join_as_spectator
from client.room_play import wait_results
from client.session import Session
from shared.errors import ArenaError, ClientError


async def watch_online(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire watch CODE [--player NAME]`: boards redrawn live as events arrive."""
    app, client = await connected(
        args,
        output,
        script,
        f"Solitaire Arena - watching room {args.code}",
        room=args.code,
        spectator=True,
    )
    conn = client.conn
    assert conn is not None
    try:
        async with app:
            await join_as_spectator(client, args.code)
            if args.player is not None:
                client.view.focus = client.view.player_id(args.player)
            watch_title(client, app)
            app.session.status = (
                "Watching live."
                if client.view.started.is_set()
                else "Waiting for the race to start..."
            )
            if client.state.open_seed:
                app.session.say(f"This room has an {OPEN_SEED}.")
            app.session.say(WATCH_HELP)
            await client.send_watch()
            app.refresh()
            await watch_loop(client, app)
    finally:
        await conn.close()
    return 0


WATCH_HELP = (
    "Type a racer's number or name to follow one, 'all' for everyone, 'help rules' for the "
    "rules, 'quit' to leave."
)


async def watch_loop(client: RoomClient, app: App) -> None:
    """Until quit or end of input; a number or a name focuses one racer, 'all' shows all."""
    while True:
        line = await app.readline()
        if line is None:
            if app.scripted or not app.output.tty:
                await wait_results(client, client.conn)  # type: ignore[arg-type]
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
        if command.kind is Kind.REMATCH:
            await follow_rematch(client, app)
            continue
        if command.kind is Kind.RULES:
            from client.rules import plain, rules_for

            variant = client.state.room.get("variant")
            app.page(f"The rules of {str(variant).capitalize()}", plain(rules_for(variant)))
            continue
        if word.lower() == "all":
            client.view.focus = None
        else:
            try:
                client.view.focus = client.view.player_id(word)
            except ClientError as error:
                app.session.error = error.reason
                app.refresh()
                continue
        client.view.show_watched()
        watch_title(client, app)
        await client.send_watch()
        app.refresh()


async def follow_rematch(client: RoomClient, app: App) -> None:
    """`rematch` while watching: from the finished race to its rematch's room, still watching
    (everyone, as the new race has its own numbering)."""
    rematch = client.view.rematch
    if rematch is None:
        app.session.error = "no rematch yet: the racers ask for one once the race is over"
        app.refresh()
        return
    assert client.conn is not None
    await client.conn.request({"type": "leave"}, expect="left")
    client.forget_room()
    await join_as_spectator(client, rematch)
    client.view.focus = None
    watch_title(client, app)
    app.session.clear_messages()
    app.session.say(f"Watching the rematch in room {rematch}.")
    app.session.status = (
        "Watching live." if client.view.started.is_set() else "Waiting for the race to start..."
    )
    await client.send_watch()
    app.refresh()


def watch_title(client: RoomClient, app: App) -> None:
    """A spectator's title says whose board it is."""
    code = client.state.room_id
    if client.view.focus is None:
        app.session.title = f"Solitaire Arena - watching room {code} - everyone"
    else:
        name = client.state.names.get(client.view.focus, client.view.focus)
        app.session.title = f"Solitaire Arena - watching {name} in room {code}"


async def fetch_game(args: Any, title: str) -> tuple[RoomClient, str, list[dict[str, Any]]]:
    """Watch room ``args.code`` as a spectator just long enough to take one game's public
    events: ``args.player``'s, or the first racer's. The server shows a spectator what fair
    watching allows (a daily's only after its day, behind the spectator delay)."""
    if args.code is None:
        raise ClientError(f"{title} needs a room CODE")
    # Fetching shows nothing (JSON output aside); what follows has its own screen.
    quiet = Output(color=False, tty=False, json=False)
    _fetch_app, client = await connected(args, quiet, [], title, room=args.code, spectator=True)
    conn = client.conn
    assert conn is not None
    try:
        await join_as_spectator(client, args.code)
        players = client.state.room.get("players", [])
        if not players:
            raise ClientError(f"room {args.code} has no games")
        if args.player is not None:
            player = client.view.player_id(args.player)
        else:
            player = players[0]["player"]
        client.view.focus = player
        await conn.send({"type": "watch", "room": args.code, "player": player})
        if not await client.wait_for(lambda: player in client.state.games, 15.0):
            raise ClientError(f"room {args.code}: the game has not started, nothing to {title}")
        events = list(client.state.games[player].events)
    finally:
        await conn.close()
    return client, player, events


async def replay_online(args: Any, output: Output) -> int:
    """`solitaire replay CODE [--player NAME]`: fetch a game's public events, then replay them."""
    if args.code is None:
        raise ClientError("replay needs a room CODE (or --offline with --seed and --moves)")
    client, player, events = await fetch_game(args, "replay")
    name = client.state.names.get(player, player)
    session = Session(
        title=f"Solitaire Arena - replay of {name} - room {args.code}", color=output.color
    )
    app = App(session, output, script=[] if args.speed is None and output.json else None)
    analysis = await analysis_of(args, player)
    async with app:
        await run_replay(app, events, args.speed, analysis)
    return 0


async def analysis_of(args: Any, player: str) -> dict[str, Any] | None:
    """The server's analysis of the game, if it has made it (a replay goes on without)."""
    quiet = Output(color=False, tty=False, json=False)
    _app, client = await connected(args, quiet, [], "replay", room=args.code, spectator=True)
    assert client.conn is not None
    try:
        return await fetch_analysis(client.conn, args.code, player, wait_s=0)
    except ArenaError:
        return None
    finally:
        await client.conn.close()
