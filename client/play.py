"""The input loop every playing mode shares: commands, friendly moves, and how a reject shows.

A `Driver` is where moves go: the local game offline, the server online. The loop parses
friendly input with `shared.parse_move` against the board on screen and sends the canonical move.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from client.app import App
from client.commands import HELP_TEXT, Command, Kind, parse_command
from client.session import game_status
from shared.errors import ArenaError, ClientError

PLAYING_HINT = "Your move: a move (t3t5, 3 5, wf, d), 'moves', 'help', 'resign' or 'quit'."


class Driver(Protocol):
    """Where the moves of the player go."""

    @property
    def view(self) -> Any:
        """The current public view of the player's game (None before it starts)."""

    async def move(self, move: str) -> None:
        """Play a canonical move; raise an ArenaError with the reason if it is rejected."""

    async def resign(self) -> None:
        """Give up the game."""

    def undo(self) -> None:
        """Take back the last move, or raise ClientError (only offline allows it)."""


def sort_moves(moves: set[str] | list[str]) -> list[str]:
    """Legal moves in a readable order: deal and redeal first, then by source pile."""
    return sorted(moves, key=lambda m: (m not in ("d", "redeal"), m))


def update_status(app: App, view: Any, *, playing_hint: str = PLAYING_HINT) -> None:
    """The status line from the game's state."""
    app.session.status = game_status(view) or playing_hint


Extra = Callable[[Command], Awaitable[bool]]


async def play_loop(app: App, driver: Driver, *, extra: Extra | None = None) -> None:
    """Read lines until quit or end of input, playing moves through ``driver``.

    ``extra`` handles commands particular to a mode (e.g. `start` in a race); it returns
    True when it took the command.
    """
    session = app.session
    while True:
        line = await app.readline()
        if line is None:
            return
        command = parse_command(line)
        if command.kind is Kind.EMPTY:
            continue
        session.error = None
        if extra is not None and await extra(command):
            app.refresh()
            continue
        if command.kind is Kind.QUIT:
            return
        await _handle(app, driver, command)
        app.refresh()


async def _handle(app: App, driver: Driver, command: Command) -> None:
    session = app.session
    view = driver.view
    if command.kind is Kind.HELP:
        session.say(HELP_TEXT)
        return
    if command.kind is Kind.MOVES:
        if view is None:
            session.error = "No game yet."
            return
        from shared.views import public_legal_moves

        legal = sort_moves(public_legal_moves(view))
        text = "Legal moves: " + (" ".join(legal) if legal else "none")
        session.say(text)
        app.log(text)
        return
    if command.kind is Kind.RESIGN:
        try:
            await driver.resign()
        except ArenaError as error:
            _reject(app, "resign", error)
        else:
            app.log("resigned")
        return
    if command.kind is Kind.UNDO:
        try:
            driver.undo()
        except ClientError as error:
            _reject(app, "undo", error)
        else:
            session.clear_messages()
            session.say("Took back the last move.")
            app.log("undo")
        return
    if command.kind is Kind.START:
        _reject(app, "start", ClientError("there is nothing to start here"))
        return
    if command.kind in (Kind.WATCH, Kind.BACK):
        _reject(app, command.text, ClientError("only racers can watch the others, in a race"))
        return
    await play_move(app, driver, command.text)


async def play_move(app: App, driver: Driver, text: str) -> bool:
    """Parse and play one typed move; on a reject, show the reason and keep the board."""
    from shared.moves import parse_move

    if driver.view is None:
        _reject(app, text, ClientError("the game has not started yet"))
        return False
    try:
        move = parse_move(text, driver.view)
        await driver.move(move)
    except ArenaError as error:
        _reject(app, text, error)
        return False
    session = app.session
    session.clear_messages()
    session.say(f"{text} -> {move}" if text != move else f"played {move}")
    app.log(f"{text} -> {move}" if text != move else move)
    return True


def _reject(app: App, text: str, error: ArenaError) -> None:
    app.session.error = f"{text}: {error.reason}"
    app.emit({"type": "rejected", "move": text, "code": error.code, "reason": error.reason})
    app.log(f"{text}: rejected: {error.reason}")
