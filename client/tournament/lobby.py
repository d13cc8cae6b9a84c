"""Between the races of `solitaire tournament join`: the wait for the next pairing, with the
standings redrawn every second and the lobby's commands (`pause`, `join`, `page N`, `me`,
`top`, `help`, `quit`). A scripted run (``--moves``) types nothing here: its lines are each
race's moves, and it waits for the next pairing or the final standings."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from typing import Any, Protocol

from client.app import App, interrupts_set
from client.tournament.follow import LOBBY_HELP, Follow
from shared import protocol as p
from shared.errors import ArenaError


class Step(enum.Enum):
    """How a wait between races ended."""

    PAIRED = "paired"
    QUIT = "quit"  # typed, or input over: pause and leave
    INTERRUPTED = "interrupted"  # Ctrl-C: pause and leave
    FINISHED = "finished"  # a script's wait ended: the standings are final


class Run(Protocol):
    """What the lobby needs of a run of `tournament join`."""

    app: App
    follow: Follow

    @property
    def conn(self) -> Any: ...

    def draw(self) -> None: ...

    async def join(self) -> None: ...

    async def withdraw(self) -> bool: ...


class Lobby:
    """The screen and the commands between two races."""

    def __init__(self, run: Run) -> None:
        self.run = run

    async def _tick(self) -> None:
        while True:
            self.run.draw()
            await asyncio.sleep(1.0)

    async def wait(self) -> Step:
        """Wait for the next pairing, taking the lobby's commands meanwhile."""
        session = self.run.app.session
        session.title = self.run.follow.title
        session.show_board = False
        self.run.draw()
        follow, scripted = self.run.follow, self.run.app.scripted
        if not follow.pairings.empty():
            return Step.PAIRED
        if scripted and follow.final.is_set():
            return Step.FINISHED
        interrupted = asyncio.Event()
        ticker = asyncio.create_task(self._tick())
        try:
            with interrupts_set(interrupted):
                while True:
                    reader = None if scripted else asyncio.ensure_future(self.run.app.readline())
                    waits: set[asyncio.Future[Any]] = {
                        reader or asyncio.ensure_future(follow.final.wait()),
                        asyncio.ensure_future(interrupted.wait()),
                        asyncio.ensure_future(self.run.conn.wait_failed()),
                        asyncio.ensure_future(self._paired()),
                    }
                    try:
                        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        for task in waits:
                            task.cancel()
                    if interrupted.is_set():
                        return Step.INTERRUPTED
                    if self.run.conn.failure is not None:
                        raise self.run.conn.failure
                    if not follow.pairings.empty():
                        return Step.PAIRED
                    if scripted and follow.final.is_set():
                        return Step.FINISHED
                    if reader is not None and reader.done() and not reader.cancelled():
                        line = reader.result()
                        if line is None:
                            return Step.QUIT
                        if await self.command(line.strip()):
                            return Step.QUIT
                        self.run.draw()
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker

    async def _paired(self) -> None:
        while self.run.follow.pairings.empty():
            self.run.follow.changed.clear()
            await self.run.follow.changed.wait()

    async def command(self, line: str) -> bool:
        """One typed line between races; True to leave."""
        session = self.run.app.session
        session.error = None
        word, _, rest = line.lower().partition(" ")
        if not word:
            return False
        if word in ("quit", "q", "exit"):
            return True
        if word in ("pause", "withdraw"):
            if await self.run.withdraw():
                session.say("Paused: you are not paired; your points stay. 'join' carries on.")
            else:
                session.error = "pause: the server did not answer; try again"
        elif word in ("join", "resume", "play"):
            try:
                await self.run.join()
            except ArenaError as error:
                session.error = f"join: {error.reason}"
            else:
                session.say("In again: you are paired as soon as a race can be made.")
        elif word == "page" and rest.strip().isdigit():
            await self._page(int(rest.strip()))
        elif word in ("me", "top"):
            await self._page(1 if word == "top" else None)
        elif word in ("help", "?"):
            session.say(LOBBY_HELP)
        else:
            session.error = f"{line!r}: between races, type 'pause', 'join', 'page N' or 'quit'"
        return False

    async def _page(self, page: int | None) -> None:
        msg: dict[str, Any] = {"type": p.FOLLOW_TOURNAMENT, "tournament": self.run.follow.id}
        if page is not None:
            msg["page"] = page
        try:
            await self.run.conn.request(msg, expect=p.TOURNAMENT)
        except ArenaError as error:
            self.run.app.session.error = f"page: {error.reason}"
