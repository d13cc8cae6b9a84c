"""The frame around every mode: screen, input source (prompt or script), clock ticks, output.

A mode (offline play, a game on a server, a race, watching, a replay) gets an `App`, reads lines
from it, updates its `Session` and calls `refresh`; the app decides how that reaches the user.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from client.cli import Output
from client.commands import confirm_texts
from client.screen import compose, strip_ansi
from client.session import Pager, Session
from client.terminal import Display, LineReader, write_lines
from client.text import to_ascii


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch; the one clock the client reads."""
    return time.time_ns() // 1_000_000


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.hex()
    if hasattr(value, "__dataclass_fields__"):
        return {name: getattr(value, name) for name in value.__dataclass_fields__}
    return str(value)


def json_line(event: dict[str, Any], *, ascii_only: bool = False) -> str:
    """One event as a compact JSON line (escaped to ASCII for a terminal that needs it)."""
    return json.dumps(event, default=_json_default, separators=(",", ":"), ensure_ascii=ascii_only)


class AsciiOut:
    """A stream for a terminal that cannot show Unicode: suits as letters, marks spelt out."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(to_ascii(text))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()


class App:
    """Input and output for one run: interactive (a redrawn screen and a prompt) or scripted."""

    def __init__(
        self,
        session: Session,
        output: Output,
        *,
        script: list[str] | None = None,
        out: TextIO | None = None,
        stdin: TextIO | None = None,
        clock: Callable[[], int] = now_ms,
        prompt: str = "> ",
    ) -> None:
        self.session = session
        self.output = output
        self.script = script
        self.out: Any = sys.stdout if out is None else out
        if output.ascii:
            self.out = AsciiOut(self.out)
        self.clock = clock
        self.scripted = script is not None
        # Scripted and JSON runs print lines, not screens: bots read them, and they stay short.
        self.display = Display(
            self._frame,
            out=self.out,
            in_place=output.tty,
            enabled=not output.json and not self.scripted,
        )
        self.display.prompt = prompt
        self._reader = None if self.scripted else LineReader(self.display, stdin)
        self.variant: str | None = None
        # Said when a game ends, after how it ended: what the player can type next.
        self.next_steps = "Type 'quit' to leave."
        self.confirm_texts = confirm_texts(online=False, race=False)
        self.refused = 0  # moves and commands refused, for a script's exit status
        self._ticker: asyncio.Task[None] | None = None
        self._script_pos = 0

    def _frame(self) -> list[str]:
        screen = self.session.screen(self.clock())
        if not self.output.tty:
            return compose(screen, color=self.output.color)
        size = shutil.get_terminal_size((80, 24))
        if self.session.pager is not None:
            return self.session.pager.lines(size.columns, size.lines)
        return compose(screen, color=self.output.color, width=size.columns, height=size.lines)

    def page(self, title: str, text: str) -> None:
        """Show a long text (the rules) over the board, a page at a time; scripted and
        non-terminal runs print it whole."""
        if self.scripted or not self.output.tty:
            if not self.output.json:
                write_lines(self.out, [title, *text.splitlines()])
            return
        self.session.pager = Pager(title, text)
        self.refresh()

    async def __aenter__(self) -> App:
        self.display.start()
        if self._reader is not None:
            self._reader.start()
        self._ticker = asyncio.create_task(self._tick())
        if self.output.tty and not self.scripted:
            # A resized window is redrawn at once, laid out for its new size.
            on_signal(signal.SIGWINCH, self.display.reset)
        self.refresh()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        if self._reader is not None:
            self._reader.stop()
        off_signal(signal.SIGWINCH)
        self.display.close()

    async def _tick(self) -> None:
        """Redraw once a second so the clock moves; unchanged frames are not written."""
        while True:
            await asyncio.sleep(1.0)
            self.display.invalidate()

    def refresh(self) -> None:
        """The session changed: redraw soon (coalesced)."""
        self.display.invalidate()

    async def readline(self) -> str | None:
        """The next typed or scripted line, ``None`` when input is over."""
        if self.script is not None:
            if self._script_pos >= len(self.script):
                return None
            scripted = self.script[self._script_pos]
            self._script_pos += 1
            return scripted
        assert self._reader is not None
        while True:
            self.display.flush()
            line: str | None = await self._reader.readline()
            pager = self.session.pager
            if pager is None or line is None:
                return line
            size = shutil.get_terminal_size((80, 24))
            if line.strip() == "" and pager.advance(size.columns, size.lines):
                self.refresh()
                continue
            self.session.pager = None
            self.refresh()
            if line.strip().lower() in ("", "q"):
                continue
            return line

    def rewind(self) -> None:
        """The script from its first line again: a tournament plays it in each of its races."""
        self._script_pos = 0

    def emit(self, event: dict[str, Any]) -> None:
        """An event for --json output (ignored otherwise)."""
        if self.output.json:
            write_lines(self.out, [json_line(event, ascii_only=self.output.ascii)])

    def log(self, text: str) -> None:
        """A result line for scripted (non-JSON) runs; interactive runs show messages instead."""
        if self.scripted and not self.output.json:
            write_lines(self.out, [text])

    def final_screen(self) -> None:
        """At the end of a scripted run, the final board once, so a reader sees the outcome."""
        if self.scripted and not self.output.json:
            lines = compose(self.session.screen(self.clock()), color=self.output.color)
            if not self.output.color:
                lines = [strip_ansi(line) for line in lines]
            write_lines(self.out, lines)


@contextlib.contextmanager
def interrupts_set(event: asyncio.Event) -> Iterator[None]:
    """While inside, Ctrl-C sets ``event`` instead of raising KeyboardInterrupt (where the loop
    supports signal handlers), so an online wait can leave cleanly (a queue, a seat)."""
    on_signal(signal.SIGINT, event.set)
    try:
        yield
    finally:
        off_signal(signal.SIGINT)


_NO_SIGNAL_HANDLERS = (NotImplementedError, RuntimeError, ValueError)
"""What asyncio raises where a loop cannot take a signal handler: a loop without them
(Windows), a loop outside the main thread, a signal this platform lacks (SIGWINCH)."""


def on_signal(sig: signal.Signals, callback: Callable[[], object]) -> None:
    """Run ``callback`` on ``sig`` in the running loop, where the loop supports it."""
    with contextlib.suppress(*_NO_SIGNAL_HANDLERS):
        asyncio.get_running_loop().add_signal_handler(sig, callback)


def off_signal(sig: signal.Signals) -> None:
    """Undo ``on_signal``."""
    with contextlib.suppress(*_NO_SIGNAL_HANDLERS):
        asyncio.get_running_loop().remove_signal_handler(sig)
