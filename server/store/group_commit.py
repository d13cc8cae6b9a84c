"""Group commit: the appends asked for in one event-loop turn go to the store in one round trip.

Every racer's move is one append. Sent one command at a time, each would hold a pooled
connection for its own round trip, so a loaded server would be bound by its pool (connections
times loop turns per second) and by redis-py's per-command overhead, not by Redis (bench.load's
paced profile). Batched, a turn's appends share one pipeline, one connection and one
write; each caller still gets its own result or its own error.

Where the store can write a batch at once and hear its reply from the connection's own callback
(``send_now``), the callers are answered there: a task awaiting the reply would wake a loop
turn after it came, and only then answer the callers, who would wake a turn later still.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

Sender = Callable[[Sequence[Item]], Awaitable[Sequence[Result | BaseException]]]
"""Sends a batch; answers one result or one exception per item, in order. Raising fails the
whole batch (the connection broke): every caller of the batch gets that error."""

Outcome = (
    Sequence[Result | BaseException]
    | BaseException
    | Coroutine[Any, Any, Sequence[Result | BaseException]]
)
"""A batch's results (as ``Sender``'s), its failure, or the coroutine that works them out."""

NowSender = Callable[[Sequence[Item], Callable[[Outcome[Result]], None]], bool]
"""Writes a batch at once, if it can, and tells the callback its outcome once, later, from
wherever the reply is read; False: nothing was written (``Sender`` takes the batch)."""

_Batch = list[tuple[Item, asyncio.Future[Result]]]


class GroupCommit(Generic[Item, Result]):
    """Collects ``submit``\\ ted items until the loop has run what was ready, then hands them
    to ``send_now`` or ``send`` in batches of at most ``max_batch``; batches may be in flight
    side by side."""

    def __init__(
        self,
        send: Sender[Item, Result],
        *,
        send_now: NowSender[Item, Result] | None = None,
        max_batch: int = 256,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch is at least 1")
        self._send = send
        self._send_now = send_now
        self.max_batch = max_batch
        self._pending: _Batch[Item, Result] = []
        self._next: asyncio.Task[None] | None = None  # made, its first step not run yet
        self._in_flight: set[asyncio.Task[None]] = set()
        self._unanswered: set[asyncio.Future[None]] = set()  # batches sent now, not told yet
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
            self._track(task)
        return future

    def _track(self, task: asyncio.Task[None]) -> None:
        self._in_flight.add(task)
        task.add_done_callback(self._drained)

    async def _drain(self) -> None:
        self._next = None
        pending, self._pending = self._pending, []
        later = []
        for start in range(0, len(pending), self.max_batch):
            batch = pending[start : start + self.max_batch]
            self.batches += 1
            self.items += len(batch)
            if not self._sent_now(batch):
                later.append(batch)
        if not later:
            return
        loop = asyncio.get_running_loop()
        for batch in later[1:]:
            self._track(loop.create_task(self._commit(batch), name="group-commit"))
        await self._commit(later[0])

    def _drained(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if task is self._next:  # cancelled before its first step
            self._next = None
            pending, self._pending = self._pending, []
            for _, future in pending:
                future.cancel()

    def _sent_now(self, batch: _Batch[Item, Result]) -> bool:
        if self._send_now is None:
            return False
        answered = asyncio.get_running_loop().create_future()

        def told(outcome: Outcome[Result]) -> None:
            if answered.done():
                return  # told once only: a second telling is the sender's bug, not the callers'
            answered.set_result(None)
            self._unanswered.discard(answered)
            if isinstance(outcome, Coroutine):  # more round trips: a task finishes the batch
                loop = asyncio.get_running_loop()
                self._track(loop.create_task(self._finish(batch, outcome), name="group-commit"))
            else:
                self._settle(batch, outcome)

        self._unanswered.add(answered)
        try:
            taken = self._send_now([item for item, _ in batch], told)
        except Exception as exc:  # the batch could not be written (an argument it refused)
            told(exc)
            return True
        if not taken:
            answered.cancel()
            self._unanswered.discard(answered)
        return taken

    async def _commit(self, batch: _Batch[Item, Result]) -> None:
        await self._finish(batch, self._send([item for item, _ in batch]))

    async def _finish(
        self,
        batch: _Batch[Item, Result],
        results: Awaitable[Sequence[Result | BaseException]],
    ) -> None:
        try:
            outcome: Sequence[Result | BaseException] | BaseException = await results
        except Exception as exc:
            outcome = exc
        except BaseException:  # cancelled (a shutdown): nobody gets an answer
            for _, future in batch:
                future.cancel()
            raise
        self._settle(batch, outcome)

    @staticmethod
    def _settle(
        batch: _Batch[Item, Result], outcome: Sequence[Result | BaseException] | BaseException
    ) -> None:
        """Each caller its result or its exception; everyone the batch's failure."""
        if not isinstance(outcome, BaseException) and len(outcome) != len(batch):
            outcome = RuntimeError(f"{len(outcome)} results for a batch of {len(batch)}")
        if isinstance(outcome, BaseException):
            for _, future in batch:
                if not future.done():
                    future.set_exception(outcome)
            return
        for (_, future), result in zip(batch, outcome, strict=True):
            if future.done():  # its caller gave up waiting; the item was sent all the same
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def aclose(self) -> None:
        """Wait for the batches in flight (their items were sent; their callers are owed an
        answer)."""
        # A batch's first step may start the turn's other batches, a telling a task.
        while self._in_flight or self._unanswered:
            await asyncio.gather(*self._in_flight, *self._unanswered, return_exceptions=True)
