"""Stopping background tasks for good."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def stop_tasks(tasks: Iterable[asyncio.Task[Any] | None]) -> None:
    """Cancel tasks until they are done: a store client may turn a cancellation into an error
    of its own, which a loop then takes for a failed round and goes on; so it is cancelled
    again."""
    pending = {t for t in tasks if t is not None and not t.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.2)
