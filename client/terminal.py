"""Terminal I/O that never blocks the event loop: a coalescing frame writer and a line reader.

The writer redraws in place (cursor home, each line then erase-to-end-of-line) and only when the
frame changed, at most ``fps`` times a second, so a burst of events costs one redraw. The reader
edits a line itself in cbreak mode, so a redraw can repaint the prompt with what was typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import threading
import tty
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from client.screen import CLEAR, ERASE_LINE, HOME, frame_bytes


class Display:
    """Draws frames built on demand by ``build``; ``invalidate`` schedules a coalesced redraw."""

    def __init__(
        self,
        build: Callable[[], list[str]],
        *,
        out: TextIO,
        in_place: bool,
        enabled: bool = True,
        fps: float = 30.0,
    ) -> None:
        self._build = build
        self._out = out
        self._in_place = in_place
        self._enabled = enabled
        self._interval = 1.0 / fps
        self._last: list[str] | None = None
        self._last_drawn_at = 0.0
        self._pending: asyncio.TimerHandle | None = None
        self.prompt = ""
        self.input_buffer = ""
        self.frames_drawn = 0

    def start(self) -> None:
        """Clear the terminal once; later frames overwrite in place."""
        if self._enabled and self._in_place:
            self._write(HOME + CLEAR)

    def reset(self) -> None:
        """The window changed size: clear it and draw the whole frame again."""
        if self._enabled and self._in_place:
            self._write(HOME + CLEAR)
            self._last = None
            self.invalidate()

    def invalidate(self) -> None:
        """Ask for a redraw; many calls within one frame interval cost a single redraw."""
        if not self._enabled or self._pending is not None:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._last_drawn_at + self._interval - loop.time())
        self._pending = loop.call_later(wait, self._draw_now)

    def flush(self) -> None:
        """Draw now if something changed (before exiting, or when no loop runs)."""
        if self._pending is not None:
            self._pending.cancel()
        self._draw_now()

    def _draw_now(self) -> None:
        self._pending = None
        if not self._enabled:
            return
        with contextlib.suppress(RuntimeError):
            self._last_drawn_at = asyncio.get_running_loop().time()
        lines = self._build()
        if lines == self._last:
            return
        self._last = lines
        self.frames_drawn += 1
        if self._in_place:
            self._write(frame_bytes(lines, self.prompt + self.input_buffer))
        else:
            self._write("\n".join(lines) + "\n\n")

    def echo_input(self) -> None:
        """Repaint only the prompt line, after a keystroke."""
        if self._enabled and self._in_place:
            self._write(f"\r{self.prompt}{self.input_buffer}{ERASE_LINE}")

    def close(self) -> None:
        """Final frame, then leave the cursor on a fresh line below it."""
        self.flush()
        if self._enabled and self._in_place:
            self._write("\r\n")

    def _write(self, text: str) -> None:
        try:
            self._out.write(text)
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self._enabled = False


class LineReader:
    """Lines typed by the user, as an async queue; ``None`` means end of input."""

    def __init__(self, display: Display | None = None, stream: TextIO | None = None) -> None:
        self._stream = sys.stdin if stream is None else stream
        self._display = display
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._saved: list[Any] | None = None
        self._fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pending = b""

    def start(self) -> None:
        """Begin reading: cbreak editing on a terminal, a reader thread otherwise."""
        self._loop = asyncio.get_running_loop()
        try:
            fd = self._stream.fileno()
            is_tty = os.isatty(fd)
        except (AttributeError, ValueError, OSError):
            fd, is_tty = -1, False
        if is_tty and self._display is not None:
            self._fd = fd
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
            self._loop.add_reader(fd, self._on_readable)
        else:
            self._thread = threading.Thread(target=self._read_lines, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Give the terminal back as it was."""
        if self._fd is not None and self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._fd)
            if self._saved is not None:
                with contextlib.suppress(termios.error):
                    termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._fd = None

    async def readline(self) -> str | None:
        """The next line without its newline, or ``None`` at end of input."""
        return await self._queue.get()

    def _read_lines(self) -> None:
        assert self._loop is not None
        try:
            for line in self._stream:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line.rstrip("\r\n"))
        except (ValueError, OSError):
            pass
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    def _on_readable(self) -> None:
        assert self._fd is not None
        assert self._display is not None
        try:
            data = os.read(self._fd, 1024)
        except OSError:
            data = b""
        if not data:
            self.stop()
            self._queue.put_nowait(None)
            return
        text = (self._pending + data).decode("utf-8", errors="ignore")
        self._pending = b""
        display = self._display
        for char in text:
            if char in "\r\n":
                line, display.input_buffer = display.input_buffer, ""
                self._queue.put_nowait(line)
            elif char in "\x7f\b":
                display.input_buffer = display.input_buffer[:-1]
            elif char == "\x04":  # Ctrl-D
                if not display.input_buffer:
                    self._queue.put_nowait(None)
            elif char == "\x15":  # Ctrl-U
                display.input_buffer = ""
            elif char == "\x1b" or not char.isprintable():
                continue
            else:
                display.input_buffer += char
        display.echo_input()


def read_script(path: str, stdin: TextIO | None = None) -> list[str]:
    """The lines of a ``--moves`` file ('-' is stdin), without blanks and ``#`` comments."""
    if path == "-":
        text = (sys.stdin if stdin is None else stdin).read()
    else:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    lines = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def write_lines(out: TextIO, lines: Sequence[str]) -> None:
    """Write plain lines and flush, for scripted and JSON output."""
    for line in lines:
        out.write(line + "\n")
    out.flush()
