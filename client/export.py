"""`solitaire export CODE` saves a finished game as its plain-text record (docs/records.md), and
`solitaire replay --file FILE` steps through such a file offline.

The export takes the game as a replay does, as a spectator: the server shows a spectator a race's
end (and its seed) only once the race is over and the spectator delay has passed, so a game is
exported only then. The server's analysis of the game, when it has made one, goes in as
comments (docs/records.md), which `replay --file` and `verify --file` skip.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from client.analysis import record_comments
from client.app import App
from client.cli import Output
from client.replay import run_replay
from client.session import Session
from client.watching import analysis_of, fetch_game
from shared.errors import ClientError
from shared.export import ExportHeader, parse_export, write_export

RESULT_WORDS = {"timed_out": "out of time"}
"""A record's ``Result`` as a title says it, where the tag is not a word."""


async def export_online(args: Any, output: Output) -> int:
    """Write the game's record to ``args.output`` (a file) or standard output."""
    client, player, events = await fetch_game(args, "export")
    analysis = await analysis_of(args, player)
    state = client.state
    if state.finished is None or state.ranking is None:
        raise ClientError(
            f"room {args.code}: the race is not over (or its spectators do not see its end yet): "
            "a game is exported once it is"
        )
    rank = next((r for r in state.ranking if r["player"] == player), None)
    status = str(state.progress.get(player, {}).get("status", "unfinished"))
    header = ExportHeader(
        room=str(state.room.get("id", args.code)),
        player=state.names.get(player, player),
        result=status if status in ("won", "over", "resigned", "timed_out") else "unfinished",
        place=int(rank["place"]) if rank is not None else None,
        seed=state.finished.get("seed"),
        salt=state.finished.get("salt"),
        commitment=state.finished.get("commitment"),
    )
    notes, comments = record_comments(analysis) if analysis is not None else ([], {})
    text = write_export(header, events, notes=notes, comments=comments)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    _save(args.output, text)
    print(f"Saved the game of {header.player} in room {header.room} to {args.output}.")
    return 0


async def replay_file(args: Any, output: Output) -> int:
    """`solitaire replay --file FILE`: an exported game, stepped through with no server."""
    game = parse_export(load_text(args.file))
    head = game.header
    result = RESULT_WORDS.get(head.result, head.result)
    session = Session(
        title=f"Solitaire Arena - replay of {head.player} - room {head.room} ({result})",
        color=output.color,
    )
    app = App(session, output, script=[] if args.speed is None and output.json else None)
    async with app:
        await run_replay(app, game.events, args.speed)
    return 0


def _save(path: str, text: str) -> None:
    """A small file written at once (blocking is nothing next to the fetch before it)."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise ClientError(f"{path}: {error.strerror or error}") from None


def load_text(path: str) -> str:
    """A game record's text, or a ClientError naming the file."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ClientError(f"{path}: {reason}") from None
