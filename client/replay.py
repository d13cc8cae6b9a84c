"""Replaying a finished game: every position is a prefix fold of its public events.

Stepping forward and back is indexing into the list of views, so both directions cost the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

from client.app import App
from client.commands import REPLAY_HELP_TEXT, Kind, parse_command
from client.session import game_status, timed_out
from shared.errors import ClientError
from shared.views import public_fold_event


def replay_views(events: list[dict[str, Any]]) -> list[Any]:
    """The view after the start and after each later event: ``views[i]`` follows event ``i``."""
    views: list[Any] = []
    view = None
    for event in events:
        view = public_fold_event(view, event)
        views.append(view)
    if not views:
        raise ClientError("this game has no events to replay", code="empty_replay")
    return views


def step_label(event: dict[str, Any]) -> str:
    """What a replay step shows happening, in words."""
    kind = event.get("type")
    if kind == "game_started":
        return "the deal"
    if kind == "moved":
        return str(event.get("move"))
    if kind == "resigned":
        if timed_out(event):
            return "ran out of time"
        return "left the race: away too long" if event.get("reason") == "abandoned" else "resigned"
    return str(kind).replace("_", " ")


class Replay:
    """A position in a replay, moved by steps; with the server's analysis of the game, each
    position's verdict beside it and the move that lost a won game marked."""

    def __init__(
        self, app: App, events: list[dict[str, Any]], analysis: dict[str, Any] | None = None
    ) -> None:
        self.app = app
        self.events = events
        self.views = replay_views(events)
        self.analysis = analysis
        # The game's position (moves made) at each step, as the analysis counts them.
        self.positions = list(itertools.accumulate(e.get("type") == "moved" for e in events))
        self.pos = 0
        self.show()

    @property
    def last(self) -> int:
        return len(self.views) - 1

    def show(self) -> None:
        session = self.app.session
        session.view = self.views[self.pos]
        event = self.events[self.pos]
        done = game_status(
            session.view, who="The player", out_of_time=timed_out(self.events[self.last])
        )
        session.status = f"Replay: step {self.pos}/{self.last} ({step_label(event)})" + (
            f". {done}" if done and self.pos == self.last else ""
        )
        if self.analysis is not None:
            session.status += ". " + position_note(self.analysis, self.positions[self.pos])
        self.app.emit(event)
        self.app.refresh()

    def step(self, delta: int) -> bool:
        """Move by ``delta`` events; False (and nothing changes) at either end."""
        target = self.pos + delta
        if not 0 <= target <= self.last:
            return False
        self.pos = target
        self.show()
        return True

    def say_line(self) -> None:
        """`analysis` at the prompt: a winning line from the position shown, if it is won."""
        if self.analysis is None:
            self.app.session.error = "analysis: the server has not analysed this game (yet)"
            return
        line = line_from(self.analysis, self.positions[self.pos])
        if line is None:
            verdict = verdict_at(self.analysis, self.positions[self.pos])
            why = "lost" if verdict == "lost" else "not settled by the analysis"
            self.app.session.say(f"No winning line from here: this position is {why}.")
        elif not line:
            self.app.session.say("The game is won here.")
        else:
            self.app.session.say(f"A winning line from here: {' '.join(line)}")


def verdict_at(analysis: dict[str, Any], position: int) -> str:
    """The verdict (won, lost, unknown) of the game's position after ``position`` moves."""
    moves = analysis["moves"]
    return str(moves[position - 1]["after"] if position else analysis["deal"])


def position_note(analysis: dict[str, Any], position: int) -> str:
    """What a replay step says of the analysis: the position's verdict, and the move that
    lost a won game."""
    verdict = verdict_at(analysis, position)
    shown = {"won": "won", "lost": "lost", "unknown": "not settled"}[verdict]
    if position and analysis["moves"][position - 1]["lost"]:
        return f"Analysis: {shown}: this move lost a won game"
    return f"Analysis: {shown}" + (" ('analysis' shows a winning line)" if verdict == "won" else "")


def line_from(analysis: dict[str, Any], position: int) -> list[str] | None:
    """A winning line from the position after ``position`` moves (None unless it is won): the
    game's own moves to the last won position, then the analysis's line from there."""
    if verdict_at(analysis, position) != "won":
        return None
    moves = [m["move"] for m in analysis["moves"]]
    return moves[position : analysis["won_until"]] + list(analysis["line"])


async def run_replay(
    app: App,
    events: list[dict[str, Any]],
    speed: float | None,
    analysis: dict[str, Any] | None = None,
) -> None:
    """Step by hand (n/p/Enter, q) or, with ``speed``, play on alone until the end or q;
    `analysis` shows a winning line from the position on screen (with ``analysis``, the
    server's)."""
    replay = Replay(app, events, analysis)
    app.session.say(REPLAY_HELP_TEXT)
    if speed is not None:
        player = asyncio.create_task(_autoplay(replay, speed))
        reader = asyncio.create_task(_read_until_quit(app))
        try:
            await asyncio.wait({player, reader}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (player, reader):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        return
    while True:
        line = await app.readline()
        if line is None:
            return
        command = parse_command(line, replay=True)
        app.session.error = None
        if command.kind in (Kind.EMPTY, Kind.NEXT):
            if not replay.step(1):
                app.session.error = "That was the last move."
        elif command.kind is Kind.PREVIOUS:
            if not replay.step(-1):
                app.session.error = "This is the start."
        elif command.kind is Kind.QUIT:
            return
        elif command.kind is Kind.HELP:
            app.session.say(REPLAY_HELP_TEXT)
        elif command.text.isdigit():
            replay.step(min(int(command.text), replay.last) - replay.pos)
        elif line.strip().lower() == "analysis":
            replay.say_line()
        else:
            app.session.error = f"{line.strip()}: not a replay command. {REPLAY_HELP_TEXT}"
        app.refresh()


async def _autoplay(replay: Replay, speed: float) -> None:
    while True:
        await asyncio.sleep(1.0 / speed)
        if not replay.step(1):
            return


async def _read_until_quit(app: App) -> None:
    if app.scripted:
        await asyncio.Event().wait()  # no input: the replay ends when it ends
    while True:
        line = await app.readline()
        if line is None:
            await asyncio.Event().wait()
        if parse_command(line or "", replay=True).kind is Kind.QUIT:
            return
