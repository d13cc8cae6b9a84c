"""Log lines name their room, game and player when known and leave them off when not."""

from __future__ import annotations

import io
import json

import structlog

from server.runtime.logging import bind, configure_logging, get_logger


def test_unset_context_fields_are_left_off_the_line() -> None:
    out = io.StringIO()
    configure_logging("json", "info", stream=out)
    try:
        structlog.contextvars.clear_contextvars()
        bind(room="r1", game=None, player=None)
        get_logger().info("listening", port=8765)
        bind(game="g1", player="p1")
        get_logger().info("moved")
        first, second = (json.loads(line) for line in out.getvalue().splitlines())
        assert first["room"] == "r1"
        assert "game" not in first
        assert "player" not in first
        assert (second["room"], second["game"], second["player"]) == ("r1", "g1", "p1")
        console = io.StringIO()
        configure_logging("console", "info", stream=console)
        bind(game=None, player=None)
        get_logger().info("listening")
        assert "None" not in console.getvalue()
    finally:
        structlog.contextvars.clear_contextvars()


class _Writes(io.StringIO):
    """A stream that remembers each write call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


def test_each_line_is_one_write_so_workers_lines_never_interleave() -> None:
    """--workers share one stdout, usually unbuffered (PYTHONUNBUFFERED): print() wrote the
    message and its newline apart, and two workers' lines came out as '{a}{b}\\n\\n'."""
    out = _Writes()
    configure_logging("json", "info", stream=out)
    log = get_logger("test")
    log.info("one", n=1)
    log.warning("two", n=2)
    assert len(out.calls) == 2
    assert all(call.endswith("\n") and call.count("\n") == 1 for call in out.calls)
