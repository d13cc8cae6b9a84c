"""Stopping background tasks for good."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, TypeVar

from shared.errors import ArenaError

T = TypeVar("T")


async def stop_tasks(tasks: Iterable[asyncio.Task[Any] | None]) -> None:
    """Cancel tasks until they are done: a store client may turn a cancellation into an error
    of its own, which a loop then takes for a failed round and goes on; so it is cancelled
    again."""
    pending = {t for t in tasks if t is not None and not t.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.2)


class Background:
    """A part's background tasks: each in a fresh context (no request's log binding leaks
    into it), kept until done, all stopped for good by ``aclose``."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, context=contextvars.Context())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def every(
        self,
        seconds: float,
        work: Callable[[], Awaitable[None]],
        failed: Callable[[ArenaError], None],
        *,
        wake: asyncio.Event | None = None,
        settle_s: float = 0.05,
    ) -> asyncio.Task[Any]:
        """Run ``work`` every ``seconds``; a round that fails (the store down, say) is told to
        ``failed`` and the next one comes all the same. ``wake`` set brings the next round
        forward to ``settle_s`` after it (so that a burst of reasons makes one round); set
        during a round, to ``settle_s`` after that round."""

        async def loop() -> None:
            while True:
                if wake is not None:
                    wake.clear()
                try:
                    await work()
                except ArenaError as exc:
                    failed(exc)
                if wake is None:
                    await asyncio.sleep(seconds)
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), seconds)
                    await asyncio.sleep(settle_s)

        return self.spawn(loop())

    async def aclose(self) -> None:
        await stop_tasks(list(self.tasks))


async def gather_bounded(works: Iterable[Awaitable[T]], at_once: int) -> list[T]:
    """Await ``works`` side by side, at most ``at_once`` at a time (a store's pool is not
    unbounded: a round of hundreds of rooms must not take every connection), in order."""
    gate = asyncio.Semaphore(at_once)

    async def one(work: Awaitable[T]) -> T:
        async with gate:
            return await work

    return list(await asyncio.gather(*(one(w) for w in works)))
