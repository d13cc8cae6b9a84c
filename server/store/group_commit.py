"""Group commit: the appends asked for in one event-loop turn go to the store in one round trip.

Every racer's move is one append. Sent one command at a time, each held a pooled connection
for its own round trip, so a loaded server was bound by its pool (connections times loop turns per
second) and by redis-py's per-command overhead, not by Redis (bench.load paced profile,
docs/benchmarks.md). Batched, a turn's appends share one pipeline, one connection and one
write; each caller still gets its own result or its own error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

Sender = Callable[[Sequence[Item]], Awaitable[Sequence[Result | BaseException]]]
"""Sends a batch; answers one result or one exception per item, in order. Raising fails the
whole batch (the connection broke): every caller of the batch gets that error."""


class GroupCommit(Generic[Item, Result]):
    """Collects ``submit``\\ ted items until the loop has run what was ready, then hands them
    to ``send`` in batches of at most ``max_batch``; batches may be in flight side by side."""

    def __init__(self, send: Sender[Item, Result], *, max_batch: int = 256) -> None:
        if max_batch < 1:
            raise ValueError("max_batch is at least 1")
        self._send = send
        self.max_batch = max_batch
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        self._next: asyncio.Task[None] | None = None  # made, its first step not run yet
        self._in_flight: set[asyncio.Task[None]] = set()
        self.batches = 0  # batches sent (metrics and tests)
        self.items = 0  # items sent

    def submit(self, item: Item) -> asyncio.Future[Result]:
        """The item's result, once its batch is answered."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        self._pending.append((item, future))
        if self._next is None:
            # The task's first step runs in the next loop turn, after everything this turn
            # submits, and sends the batch in that step: a callback that made the task took
            # one loop turn more, and each turn of a loaded server is milliseconds long.
            task = self._next = loop.create_task(self._drain(), name="group-commit")
            self._in_flight.add(task)
            task.add_done_callback(self._drained)
        return future

    async def _drain(self) -> None:
        self._next = None
        pending, self._pending = self._pending, []
        batches = [
            pending[start : start + self.max_batch]
            for start in range(0, len(pending), self.max_batch)
        ]
        loop = asyncio.get_running_loop()
        for batch in batches[1:]:
            task = loop.create_task(self._commit(batch), name="group-commit")
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)
        await self._commit(batches[0])

    def _drained(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if task is self._next:  # cancelled before its first step
            self._next = None
            pending, self._pending = self._pending, []
            for _, future in pending:
                future.cancel()

    async def _commit(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        self.batches += 1
        self.items += len(batch)
        try:
            results = await self._send([item for item, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"{len(results)} results for a batch of {len(batch)}")
        except Exception as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        except BaseException:  # cancelled (a shutdown): nobody gets an answer
            for _, future in batch:
                future.cancel()
            raise
        for (_, future), result in zip(batch, results, strict=True):
            if future.done():  # its caller gave up waiting; the item was sent all the same
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def aclose(self) -> None:
        """Wait for the batches in flight (their items were sent; their callers are owed an
        answer)."""
        while self._in_flight:  # a batch's first step may start the turn's other batches
            await asyncio.gather(*self._in_flight, return_exceptions=True)
