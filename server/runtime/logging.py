"""Structured logs (JSON or console) with room, game and player on every line.

The connection handler binds ``room``, ``game`` and ``player`` as contextvars, so one grep follows
a game across the whole log; a field that is not set (None) is left off the line rather than
printed as ``game=None``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

CONTEXT_KEYS = ("room", "game", "player")


def _context_keys(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """A line names its room, game and player when they are known, and omits them when not."""
    for key in CONTEXT_KEYS:
        if key in event and event[key] is None:
            del event[key]
    return event


def configure_logging(
    fmt: str = "console", level: str = "info", stream: TextIO | None = None
) -> None:
    """Set up structlog once at start-up; ``fmt`` is "json" or "console"."""
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            _context_keys,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        # One write per line (message and newline together): print() writes them apart when
        # stdout is unbuffered (PYTHONUNBUFFERED, usual in containers), and --workers' lines
        # on one stdout then interleaved as '{a}{b}\n\n' (tests/server/test_workers.py).
        logger_factory=structlog.WriteLoggerFactory(stream or sys.stdout),
        cache_logger_on_first_use=False,
    )


def bind(**values: Any) -> None:
    """Bind context (room, game, player, session) to every later line of this task."""
    structlog.contextvars.bind_contextvars(**values)


def get_logger(name: str = "server") -> Any:
    return structlog.get_logger(name)
