"""The client's connection: requests, moves and pings matched to their answers, paced.

It is the session of client/transport.py (handshake, resuming, reconnecting) with the meaning
of the messages on top: it paces itself to the rate limit the server advertises and retries
what the server refused as `rate_limited`. Everything the server sends goes to one
``on_message`` callback, the messages of a `batch` one by one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any, Unpack

from client.inflight import InFlight
from client.transport import Backoff, ConnectionLost, State, Transport, TransportOptions
from shared.errors import ClientError
from shared.protocol import decode_frame

RATE_LIMIT_RETRIES = 8


class RequestFailed(ClientError):
    """The server answered a request with an ``error``."""


class MoveRejected(ClientError):
    """The server rejected a move; ``code`` and ``reason`` are the server's."""


class Pacer:
    """A token bucket a little under the server's advertised rate, so a script never trips it."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate = max(0.1, rate)
        self.burst = max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._at = clock()

    def wait_s(self) -> float:
        """Take a token; how long to wait first (0 when one is there)."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    @classmethod
    def from_limits(cls, limits: Mapping[str, Any]) -> Pacer | None:
        rate = limits.get("messages_per_second")
        if not isinstance(rate, (int, float)) or rate <= 0:
            return None
        burst = limits.get("burst")
        # Keep a margin: pings, and the server's bucket started earlier than ours.
        return cls(rate * 0.8, max(1, int(burst) // 2 if isinstance(burst, int) else 1))


class Connection(Transport):
    """One logical session with the server: requests, moves and the server's clock."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        on_message: Callable[[dict[str, Any]], None],
        **options: Unpack[TransportOptions],
    ) -> None:
        super().__init__(url, name, inflight=InFlight(), **options)
        self._on_message = on_message
        self._pacer: Pacer | None = None
        self.clock_offset_ms = 0

    def server_now(self, local_ms: int | None = None) -> int:
        """The server's clock now, estimated from the last ping."""
        local = time.time_ns() // 1_000_000 if local_ms is None else local_ms
        return local + self.clock_offset_ms

    def _welcomed(self, welcome: dict[str, Any]) -> None:
        self._pacer = Pacer.from_limits(welcome.get("limits") or {})

    def _dispatch(self, msg: dict[str, Any]) -> None:
        offset = self._inflight.clock_offset(msg)
        if offset is not None:
            self.clock_offset_ms = offset
            return
        self._inflight.answer(msg)
        self._on_message(msg)

    async def _pace(self) -> None:
        if self._pacer is not None:
            delay = self._pacer.wait_s()
            if delay > 0:
                await asyncio.sleep(delay)

    async def send(self, msg: Mapping[str, Any]) -> None:
        """Send a message that needs no answer (waits while reconnecting)."""
        await self._wait_ready()
        await self._pace()
        await self._send_raw(msg)

    async def request(
        self,
        msg: Mapping[str, Any],
        *,
        expect: str | None = None,
        wait: float = 15.0,
        retry_rate_limited: bool = True,
    ) -> dict[str, Any]:
        """Send with a fresh ``ref`` and return the answer; RequestFailed for an ``error``.

        ``expect`` names the answer's type, so an answer missing its ``ref`` is still matched.
        A `rate_limited` refusal is retried after a pause (the server did not process it)."""
        for attempt in range(RATE_LIMIT_RETRIES + 1):
            answer = await self._request_once(msg, expect, wait)
            if answer["type"] != "error" or answer["code"] != "rate_limited":
                break
            if not retry_rate_limited:  # a login attempt counts even when refused
                break
            if attempt < RATE_LIMIT_RETRIES:
                await asyncio.sleep(self._backoff.delay(attempt + 1))
        if answer["type"] == "error":
            raise RequestFailed(answer["reason"], code=answer["code"])
        return answer

    async def _request_once(
        self, msg: Mapping[str, Any], expect: str | None, wait: float
    ) -> dict[str, Any]:
        await self._wait_ready()
        ref, future = self._inflight.request(expect)
        await self._pace()
        await self._send_raw({**msg, "ref": ref})
        try:
            return await asyncio.wait_for(future, wait)
        finally:
            self._inflight.request_done(ref, expect)

    async def move(self, move: str, *, player: str | None = None) -> dict[str, Any]:
        """Send a move with a new client move id; the ``ack``, or MoveRejected with the reason.

        Survives reconnects: an unanswered move is sent again with the same id; so is one the
        server refused as `rate_limited` (it was not processed), after a pause."""
        await self._wait_ready()
        move_id = self._inflight.move_id()
        msg: dict[str, Any] = {"type": "move", "id": move_id, "move": move}
        if player is not None:
            msg["player"] = player
        for attempt in range(RATE_LIMIT_RETRIES + 1):
            future = self._inflight.move(msg)
            await self._pace()
            await self._send_raw(msg)
            answer = await future
            if answer["type"] != "reject" or answer["code"] != "rate_limited":
                break
            if attempt < RATE_LIMIT_RETRIES:
                await asyncio.sleep(self._backoff.delay(attempt + 1))
                await self._wait_ready()
        if answer["type"] == "reject":
            raise MoveRejected(answer["reason"], code=answer["code"])
        return answer


__all__ = [
    "Backoff",
    "Connection",
    "ConnectionLost",
    "MoveRejected",
    "Pacer",
    "RequestFailed",
    "State",
    "decode_frame",
]
