"""Replaying a finished game: every position is a prefix fold of its public events.

Stepping forward and back is indexing into the list of views, so both directions cost the same.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    """A position in a replay, moved by steps."""

    def __init__(self, app: App, events: list[dict[str, Any]]) -> None:
        self.app = app
        self.events = events
        self.views = replay_views(events)
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


async def run_replay(app: App, events: list[dict[str, Any]], speed: float | None) -> None:
    """Step by hand (n/p/Enter, q) or, with ``speed``, play on alone until the end or q."""
    replay = Replay(app, events)
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
