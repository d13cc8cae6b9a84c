"""One connection on which batches of commands are written as they come and answered in order.

A batch sent through the pool (``SingleNode``'s public path) took a pooled connection, a
deadline, a retry wrapper, a stream write and one redis-py ``read_response`` a reply, then gave
the connection back through the pool's lock and its metrics: about 100 µs of Python a batch,
most of the store's share of a paced move (bench.load profile, docs/benchmarks.md). Here the
bytes go straight to the socket and the replies are parsed where they arrive, by hiredis, each
batch's in order: Redis answers a connection's commands in the order it read them, so batches
need not wait for each other. A ``WAIT`` would hold every later batch behind it, so acks that
wait for replicas keep the pooled path.

A batch's replies reach its ``Answer`` from ``data_received`` itself (``send_now``): through a
future, the task awaiting it took one loop turn more before it could answer anyone.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import hiredis
import structlog
from redis import exceptions as redis_errors
from redis.asyncio.connection import AbstractConnection

from server.store.redis_adapter import parse_error, take_over

_NOT_ENOUGH = object()  # hiredis's answer while a reply is incomplete
_log = structlog.get_logger("server.store")

Answer = Callable[[list[Any] | BaseException], None]
"""Told once, from the connection's callback, a batch's replies (an error reply as its
exception) or why the line failed it."""


@dataclass(eq=False, slots=True)
class _Waiting:
    """A batch written and not fully answered: how many replies it is owed, who is told them,
    and by when."""

    count: int
    answer: Answer
    due: float | None
    replies: list[Any] = field(default_factory=list)


def _tell(answer: Answer, outcome: list[Any] | BaseException) -> None:
    """An answer's own failure is logged: the line goes on parsing for the batches after it."""
    try:
        answer(outcome)
    except Exception:
        _log.exception("pipelined_answer_failed")


def _settle(future: asyncio.Future[list[Any]]) -> Answer:
    def answer(outcome: list[Any] | BaseException) -> None:
        if future.done():  # its caller gave up (cancelled)
            return
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    return answer


class _Line(asyncio.Protocol):
    """The protocol of one connection, once redis-py's handshake is done: replies in order."""

    transport: asyncio.Transport
    holds: object
    """What must live as long as the transport (its stream writer closes it when collected)."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.open = True
        self._reader = hiredis.Reader(replyError=parse_error, notEnoughData=_NOT_ENOUGH)
        self._waiting: deque[_Waiting] = deque()
        self._watch: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()

    def exchange(self, packed: bytes, count: int) -> asyncio.Future[list[Any]]:
        """Write ``count`` commands (``packed``); their replies, an error reply as its
        exception, once all have come."""
        future: asyncio.Future[list[Any]] = self._loop.create_future()
        if not self.open:
            future.set_exception(redis_errors.ConnectionError("the connection is closed"))
            return future
        self.write(packed, count, _settle(future))
        return future

    def write(self, packed: bytes, count: int, answer: Answer) -> None:
        """Write ``count`` commands (``packed``) on the open line; ``answer`` is told."""
        due = None
        if self.timeout is not None:
            due = self._loop.time() + self.timeout
            if self._watch is None:
                self._watch = self._loop.call_at(due, self._check)
        self._waiting.append(_Waiting(count, answer, due))
        self.transport.write(packed)

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        waiting = self._waiting
        while True:
            try:
                reply = reader.gets()
            except hiredis.ProtocolError as exc:
                self.fail(redis_errors.InvalidResponse(f"Protocol error: {exc}"))
                return
            if reply is _NOT_ENOUGH:
                return
            if not waiting:  # nothing was asked: the stream cannot be trusted any more
                self.fail(redis_errors.InvalidResponse("a reply nobody asked for"))
                return
            head = waiting[0]
            head.replies.append(reply)
            if len(head.replies) == head.count:
                waiting.popleft()
                _tell(head.answer, head.replies)

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(redis_errors.ConnectionError(f"Connection lost: {exc or 'closed by the server'}"))

    def _check(self) -> None:
        """The oldest batch's deadline: past it, the line fails as a socket timeout would."""
        self._watch = None
        if not self._waiting or not self.open:
            return
        due = self._waiting[0].due
        assert due is not None
        if due <= self._loop.time():
            self.fail(redis_errors.TimeoutError(f"Timeout: nothing within {self.timeout} s"))
            return
        self._watch = self._loop.call_at(due, self._check)

    def fail(self, error: Exception) -> None:
        """Close the line; every batch still owed a reply gets ``error`` (a late reply must
        never answer another batch)."""
        self.open = False
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        waiting, self._waiting = self._waiting, deque()
        for batch in waiting:
            _tell(batch.answer, error)
        self.transport.close()


class PipelinedConnection:
    """Batches written without waiting for each other on one connection, made (and remade
    after a failure) from ``make``'s redis-py connection, retried as its ``retry`` allows."""

    def __init__(self, make: Callable[[], AbstractConnection]) -> None:
        self._make = make
        self._line: _Line | None = None
        self._retries = 0
        self._attempt: asyncio.Future[_Line] | None = None

    async def send(self, packed: bytes, count: int) -> list[Any]:
        """The replies to ``count`` packed commands, in order (an error reply as its
        exception); redis-py's ``ConnectionError`` or ``TimeoutError`` if the line broke."""
        line = self._line
        if line is None or not line.open:
            line = await self._connected()
        retries = self._retries
        while True:
            try:
                return await line.exchange(packed, count)
            except (redis_errors.ConnectionError, redis_errors.TimeoutError):
                if retries <= 0:
                    raise
                retries -= 1
                line = await self._connected()

    @property
    def open(self) -> bool:
        """Whether a batch would be written at once (``send_now``)."""
        return self._line is not None and self._line.open

    def send_now(self, packed: bytes, count: int, answer: Answer) -> bool:
        """Write the batch now if the line is open, ``answer`` told from the line's callback
        (a broken line tells it the error, and nothing is retried: the caller decides); False,
        nothing written, when the line is not open (``send`` connects)."""
        line = self._line
        if line is None or not line.open:
            return False
        line.write(packed, count, answer)
        return True

    async def _connected(self) -> _Line:
        """The open line. Every batch that waits for it shares the one attempt under way, and
        its failure: batches each trying in turn, each waiting out its own timeout, would queue
        a move behind one timeout per batch before it while Redis cannot be reached."""
        line = self._line
        if line is not None and line.open:
            return line
        attempt = self._attempt
        if attempt is None or attempt.done():
            attempt = self._attempt = asyncio.ensure_future(self._connect())
            attempt.add_done_callback(_retrieve)
        return await asyncio.shield(attempt)

    async def _connect(self) -> _Line:
        connection = self._make()
        self._retries = connection.retry.get_retries()
        await connection.connect()  # redis-py's handshake: TLS, AUTH, SELECT, CLIENT SETNAME
        line = _Line(connection.socket_timeout)
        line.transport, line.holds = take_over(connection, line)
        self._line = line
        return line

    async def aclose(self) -> None:
        if self._attempt is not None and not self._attempt.done():
            self._attempt.cancel()
        line, self._line = self._line, None
        if line is not None and line.open:
            line.fail(redis_errors.ConnectionError("the store is closing"))


def _retrieve(attempt: asyncio.Future[_Line]) -> None:
    """A connection attempt's failure is its waiters' to raise; one they all gave up on
    (cancelled) is not logged as never retrieved."""
    if not attempt.cancelled():
        attempt.exception()
