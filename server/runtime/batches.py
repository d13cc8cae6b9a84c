"""Work asked for while the same kind is under way waits, and goes in the next batch together.

A hundred callers each appending to one stream race for the same version, and all but one try
again; a batch per key, one at a time, appends once for all of them. Each caller is answered
with its own item's result, or with the error that kept its batch out. A batch may answer its
callers before it ends (``answer``): what it does after that (writes nobody waits for) still
goes before the next batch.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _retrieved(future: asyncio.Future[Any]) -> None:
    """A caller cancelled while it waited leaves nobody to read the outcome: no warning."""
    if not future.cancelled():
        future.exception()


Answer = Callable[[Mapping[str, R]], None]
"""Given to a batch: answers its callers now, each with its item's result."""


class KeyedBatches(Generic[T, R]):
    """Items submitted under a key while that key's batch is under way; ``run(key, items,
    answer)`` does a batch and answers each item by its id (returned, or given to ``answer``
    earlier). The same id submitted twice while it waits is one item."""

    def __init__(
        self,
        run: Callable[[str, Sequence[T], Answer[R]], Awaitable[Mapping[str, R]]],
        *,
        max_batch: int,
    ) -> None:
        self._run = run
        self._max_batch = max_batch
        self._waiting: dict[str, dict[str, tuple[T, asyncio.Future[R]]]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def submit(self, key: str, item_id: str, item: T) -> R:
        waiting = self._waiting.setdefault(key, {})
        entry = waiting.get(item_id)
        if entry is None:
            future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
            future.add_done_callback(_retrieved)
            entry = waiting[item_id] = (item, future)
        if key not in self._tasks:
            self._tasks[key] = asyncio.get_running_loop().create_task(self._drain(key))
        return await asyncio.shield(entry[1])

    async def _drain(self, key: str) -> None:
        waiting = self._waiting[key]
        try:
            while waiting:
                batch = dict(itertools.islice(waiting.items(), self._max_batch))
                for item_id in batch:
                    del waiting[item_id]

                def answer(done: Mapping[str, R], batch: dict[str, Any] = batch) -> None:
                    for item_id, (_, future) in batch.items():
                        if not future.done():
                            future.set_result(done[item_id])

                try:
                    done = await self._run(key, [item for item, _ in batch.values()], answer)
                except Exception as exc:
                    for _, future in batch.values():
                        if not future.done():
                            future.set_exception(exc)
                    continue
                except BaseException:
                    for _, future in batch.values():
                        future.cancel()
                    raise
                answer(done)
        finally:
            del self._tasks[key]
            for _, future in waiting.values():  # cancelled (the process stops): none left
                future.cancel()
            waiting.clear()

    async def aclose(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
