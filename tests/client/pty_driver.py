"""Driving `solitaire` through a real pseudo-terminal, as a person would."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path

import pexpect
import pyte

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 15


class Child(pexpect.spawn):
    """pexpect's child, closed for sure: pexpect's own forced close gives a killed process a
    tenth of a second to be reaped and raises if it was not, which a loaded machine misses."""

    def close(self, force: bool = True) -> None:
        if force and self.isalive():
            self.kill(signal.SIGKILL)
            with contextlib.suppress(pexpect.ExceptionPexpect):
                self.wait()  # reaped: nothing left for close to terminate
        super().close(force=force)


def spawn(
    *args: str, columns: int = 80, rows: int = 40, env_extra: dict[str, str] | None = None
) -> pexpect.spawn:
    """`python -m client ARGS` in a pty of the given size, with colours left to the flags;
    ``env_extra`` sets more variables (a user's own XDG_STATE_HOME, say)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "SOLITAIRE_SERVER")}
    env.update(env_extra or {})
    env["TERM"] = "xterm"
    env["PYTHONUNBUFFERED"] = "1"
    child = Child(
        sys.executable,
        ["-m", "client", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        dimensions=(rows, columns),
        timeout=TIMEOUT,
    )
    return child


def type_line(child: pexpect.spawn, text: str) -> None:
    """Type a line and press Enter."""
    child.send(text + "\r")


def finish(child: pexpect.spawn) -> int | None:
    """Wait for the process to end (killing it if it hangs) and return its exit status."""
    try:
        child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        child.close(force=True)
    return child.exitstatus


def words(text: str) -> str:
    """A pattern for ``text`` as the screen wraps it: any break between words is allowed."""
    gap = r"(?:\s|\x1b\[K)+"
    return gap.join(re.escape(word) for word in text.split())


class Term:
    """What a person sees in the pseudo-terminal: the child's output played into a terminal
    emulator (pyte) of the same size."""

    def __init__(self, child: pexpect.spawn, columns: int, rows: int) -> None:
        self.child = child
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)

    def pump(self, wait: float = 0.05) -> bool:
        """Feed what the child wrote so far; False once it has exited."""
        try:
            while True:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=wait))
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False

    def lines(self) -> list[str]:
        """The screen's rows, trailing spaces removed."""
        return [row.rstrip() for row in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

    def wait(self, pattern: str, timeout: float = TIMEOUT) -> str:
        """Until the screen shows ``pattern`` (a regex); the screen's text then."""
        deadline = time.monotonic() + timeout
        while True:
            alive = self.pump()
            text = self.text()
            if re.search(pattern, text):
                return text
            if not alive or time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {pattern!r}:\n{text}")

    def type(self, text: str) -> None:
        type_line(self.child, text)
