"""Counting the tasks a piece of code makes: each is a loop turn before what it runs."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def tasks_made() -> Iterator[list[str]]:
    """The qualified names of the coroutines of every task made on this loop in the block."""
    loop = asyncio.get_running_loop()
    made: list[str] = []
    factory = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        made.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counting)
    try:
        yield made
    finally:
        loop.set_task_factory(factory)
