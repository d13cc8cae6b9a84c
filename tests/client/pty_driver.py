"""Driving `solitaire` through a real pseudo-terminal, as a person would."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 15


def spawn(*args: str, columns: int = 80, rows: int = 40) -> pexpect.spawn:
    """`python -m client ARGS` in a pty of the given size, with colours left to the flags."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "SOLITAIRE_SERVER")}
    env["TERM"] = "xterm"
    env["PYTHONUNBUFFERED"] = "1"
    child = pexpect.spawn(
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
