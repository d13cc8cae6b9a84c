"""The input loop every playing mode shares: commands, friendly moves, and how a reject shows.

A `Driver` is where moves go: the local game offline, the server online. The loop parses
friendly input with `shared.parse_move` against the board on screen and sends the canonical move.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from client.app import App
from client.commands import BARE_F_HINTS, Command, Kind, help_text, parse_command, prompt_hint
from client.session import game_status
from client.text import cards_as_shown, plural
from shared.errors import ArenaError, ClientError

PLAYING_HINT = prompt_hint("swiss")


class Outcome(enum.Enum):
    """How a play loop ended: input over, the player quit, asked for a new deal, or for a
    rematch of the race that is over."""

    END = "end"
    QUIT = "quit"
    NEW = "new"
    REMATCH = "rematch"


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

    def events(self) -> list[dict[str, Any]]:
        """The game's public events so far, for `replay`."""


def sort_moves(moves: set[str] | list[str]) -> list[str]:
    """Legal moves in a readable order: deal and redeal first, then by source pile."""
    return sorted(moves, key=lambda m: (m not in ("d", "redeal"), m))


def update_status(
    app: App, view: Any, *, playing_hint: str | None = None, out_of_time: bool = False
) -> None:
    """The status line from the game's state: how it ended and what to type next, or the
    variant's move hint (``out_of_time``: the clock ended the game)."""
    done = game_status(view, out_of_time=out_of_time)
    if done:
        app.session.status = f"{done} {app.next_steps}".strip()
    else:
        app.session.status = playing_hint or prompt_hint(getattr(view, "variant", None))


Extra = Callable[[Command], Awaitable[bool | Outcome]]
Ready = Callable[[Command], Awaitable[None]]
"""A mode's own commands: True when it took the command, an Outcome to end the loop with."""
_PREFIX = re.compile(r"^'?([a-z0-9 ]{1,16})'?: ")


def reason_text(text: str, move: str | None, reason: str) -> str:
    """A refusal as a player reads it: the typed text once (the core's reason often repeats the
    move), cards as on the board."""
    match = _PREFIX.match(reason)
    if match and match.group(1) in (text, move, text.lower()):
        reason = reason[match.end() :]
    return f"{text}: {cards_as_shown(reason)}"


def live(view: Any) -> bool:
    """Whether a game is on: quitting or resigning it would lose something."""
    return view is not None and not view.over


async def play_loop(
    app: App, driver: Driver, *, extra: Extra | None = None, ready: Ready | None = None
) -> Outcome:
    """Read lines until quit or end of input, playing moves through ``driver``.

    ``extra`` handles commands particular to a mode (e.g. `start` in a race); it returns
    True when it took the command, or the Outcome to end the loop with. `quit` and `resign`
    of a live game ask first (interactive only: a script means what it says). ``ready`` is
    awaited before a command is looked at, so that it can wait for what the command needs.
    """
    session = app.session
    confirming: Kind | None = None
    while True:
        line = await app.readline()
        if line is None:
            return Outcome.END
        command = parse_command(line)
        if command.kind is Kind.EMPTY:
            continue
        if ready is not None:
            await ready(command)
        session.error = None
        if confirming is not None:
            pending, confirming = confirming, None
            if command.kind in (Kind.YES, pending):
                if pending is Kind.QUIT:
                    return Outcome.QUIT
                await _handle(app, driver, Command(Kind.RESIGN, "resign"))
                app.refresh()
                continue
            session.say("Kept playing.")
            if command.text in ("n", "no"):
                app.refresh()
                continue
        at_stake = live(driver.view) and not getattr(driver, "lost", False)
        if command.kind in (Kind.QUIT, Kind.RESIGN) and at_stake and not app.scripted:
            confirming = command.kind
            session.say(app.confirm_texts[command.kind])
            app.refresh()
            continue
        took = await extra(command) if extra is not None else False
        if isinstance(took, Outcome):
            return took
        if took:
            app.refresh()
            continue
        if command.kind is Kind.QUIT:
            return Outcome.QUIT
        if command.kind is Kind.NEW:
            if live(driver.view) and not app.scripted:
                session.error = "new: finish or resign this game first ('resign')"
                app.refresh()
                continue
            return Outcome.NEW
        await _handle(app, driver, command)
        app.refresh()


async def _handle(app: App, driver: Driver, command: Command) -> None:
    session = app.session
    view = driver.view
    variant = getattr(view, "variant", None) or app.variant
    if command.kind is Kind.HELP:
        session.say(help_text(variant))
        app.log(help_text(variant))
        return
    if command.kind is Kind.RULES:
        from client.rules import plain, rules_for

        app.page(f"The rules of {(variant or 'swiss').capitalize()}", plain(rules_for(variant)))
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
    if command.kind is Kind.HINT:
        if view is None:
            session.error = "No game yet."
            return
        text = hint_text(view)
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
    if command.kind is Kind.REPLAY:
        await _replay_here(app, driver)
        return
    if command.kind is Kind.START:
        _reject(app, "start", ClientError("there is nothing to start here"))
        return
    if command.kind is Kind.BOT:
        _reject(app, "bot", ClientError("bots race in a race's lobby: 'solitaire race create'"))
        return
    if command.kind in (Kind.WATCH, Kind.BACK):
        _reject(app, command.text, ClientError("only racers can watch the others, in a race"))
        return
    if command.kind is Kind.YES:
        _reject(app, command.text, ClientError("there is nothing to confirm"))
        return
    if command.kind is Kind.REMATCH:
        _reject(app, "rematch", ClientError("a rematch is for a race, once it is over"))
        return
    await play_move(app, driver, command.text)


def hint(view: Any) -> str | None:
    """A legal move worth trying: a card to a foundation first, then a tableau move, then the
    waste onto a pile, then dealing or redealing; never a foundation card back down."""
    from shared.views import public_legal_moves

    legal = public_legal_moves(view)

    def rank(move: str) -> tuple[int, str]:
        if move.endswith("f"):
            return (0, move)
        if move.startswith("t"):
            return (1, move)
        if move.startswith("w"):
            return (2, move)
        if move in ("d", "redeal"):
            return (3, move)
        return (4, move)  # fc/fd/fh/fs back to a pile: rarely what helps

    return min(legal, key=rank) if legal else None


def hint_text(view: Any) -> str:
    """The hint as a sentence."""
    move = hint(view)
    if move is None:
        return "Hint: no move is left."
    return f"Hint: try {move} ('moves' lists every legal move)."


async def _replay_here(app: App, driver: Driver) -> None:
    """`replay` at the prompt: step through this game so far, then back to the board."""
    from client.replay import run_replay

    events = driver.events()
    if not events:
        _reject(app, "replay", ClientError("there is no game to replay yet"))
        return
    session = app.session
    saved = (session.view, session.status, session.clock_start_ms, session.clock_end_ms)
    await run_replay(app, events, None)
    session.view, session.status, session.clock_start_ms, session.clock_end_ms = saved
    session.say("Back to your game.")


async def play_move(app: App, driver: Driver, text: str) -> bool:
    """Parse and play one typed move; on a reject, show the reason and keep the board."""
    from shared.moves import parse_move

    if driver.view is None:
        _reject(app, text, ClientError("the game has not started yet"))
        return False
    if text.lower() == "f" or re.fullmatch(r"f \d", text.lower()):
        _reject(app, text, ClientError(BARE_F_HINTS[driver.view.variant], code="bad_move"))
        return False
    move = None
    session = app.session
    said = session.said
    try:
        move = parse_move(text, driver.view)
        await driver.move(move)
    except ArenaError as error:
        _reject(app, text, error, move)
        return False
    # What was said while the move waited (it may wait out a reconnect) stays on screen.
    session.clear_messages(keep_after=said)
    session.say(f"{text} -> {move}" if text != move else f"played {move}")
    app.log(f"{text} -> {move}" if text != move else move)
    return True


def _reject(app: App, text: str, error: ArenaError, move: str | None = None) -> None:
    shown = reason_text(text, move, error.reason)
    app.session.error = shown
    app.refused += 1
    app.emit({"type": "rejected", "move": text, "code": error.code, "reason": error.reason})
    app.log(f"{text}: rejected: {shown.partition(': ')[2]}")


def refused_line(count: int) -> str:
    """The last line of a script with refused moves."""
    return f"{plural(count, 'scripted move')} refused"
