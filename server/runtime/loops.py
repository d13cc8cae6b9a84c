"""The event loop ``--loop`` names: uvloop (made for servers like this one) or asyncio's own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """A factory for ``asyncio.Runner``; None is asyncio's own loop. ``auto`` takes uvloop
    where it is installed."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise SystemExit("--loop uvloop: uvloop is not installed") from None
        return None
    return uvloop.new_event_loop
