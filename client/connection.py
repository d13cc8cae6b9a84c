"""The client's one WebSocket connection: handshake, requests, moves, and reconnecting.

The connection survives drops: it reconnects with exponential backoff and jitter, says `hello`
again with the resume token it was given (the seat store keeps it on disk, so a new process can
take the seat back too), and re-sends the moves that were never answered with their original
ids, which the server answers without applying them twice (docs/protocol.md, "Moves"). It paces
itself to the rate limit the server advertises and retries what the server refused as
`rate_limited`. Everything the server sends goes to one ``on_message`` callback, the messages of
a `batch` one by one.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from client.inflight import InFlight
from shared.errors import ArenaError, ClientError, ProtocolError, ServerError
from shared.protocol import (
    CLOSE_CODES,
    CLOSE_SUPERSEDED,
    CLOSE_UNSUPPORTED,
    MAX_NAME_LEN,
    PROTOCOL_VERSION,
    decode_frame,
    encode,
    room_url,
)

# Close codes after which reconnecting cannot help (docs/protocol.md, "Limits and close codes").
FATAL_CLOSE_CODES = {code: CLOSE_CODES[code] for code in (CLOSE_UNSUPPORTED, CLOSE_SUPERSEDED)}


RATE_LIMIT_RETRIES = 8


class ConnectionLost(ServerError):
    """The server could not be reached, or stopped answering, for good."""

    code = "connection_lost"


class RequestFailed(ClientError):
    """The server answered a request with an ``error``."""


class MoveRejected(ClientError):
    """The server rejected a move; ``code`` and ``reason`` are the server's."""


class State(enum.Enum):
    """Where the connection stands, for the status line."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


@dataclass(frozen=True)
class Backoff:
    """Delays between reconnection attempts: exponential, capped, with full jitter on top."""

    base: float = 0.2
    factor: float = 2.0
    cap: float = 5.0

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before attempt ``attempt`` (1-based), between half and all of it."""
        ceiling = min(self.cap, self.base * self.factor ** max(0, attempt - 1))
        return ceiling * (0.5 + 0.5 * rand())


Connector = Callable[[str], Awaitable[ClientConnection]]


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


async def _default_connect(url: str) -> ClientConnection:
    return await connect(url, proxy=None, open_timeout=5, max_size=2**20, compression=None)


class Connection:
    """One logical session with the server across any number of WebSocket connections."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        on_message: Callable[[dict[str, Any]], None],
        on_state: Callable[[State, str], None] | None = None,
        on_welcome: Callable[[dict[str, Any]], Awaitable[None] | None] | None = None,
        connector: Connector = _default_connect,
        backoff: Backoff | None = None,
        first_attempts: int = 3,
        give_up_after: float = 120.0,
        resume: str | None = None,
        on_token: Callable[[str, dict[str, Any]], None] | None = None,
        key: str | None = None,
        room: str | None = None,
    ) -> None:
        self.url = url
        # Where the WebSocket opens: naming the room (a routing hint, docs/protocol.md).
        self._target = url if room is None else room_url(url, room)
        self.name = (name.strip() or "player")[:MAX_NAME_LEN]
        self._on_message = on_message
        self._on_state = on_state
        self._on_welcome = on_welcome
        self._connector = connector
        self._backoff = backoff or Backoff()
        self._first_attempts = first_attempts
        self._give_up_after = give_up_after
        self.session: str | None = None
        # Private: never logged; written only to the seat store (mode 0600) via ``on_token``.
        self._token: str | None = resume
        self._on_token = on_token
        self.key = key  # the account key (client/accounts.py): sent in every hello
        self.resuming_from_disk = resume is not None
        self._pacer: Pacer | None = None
        self.resumed = False
        self.welcome: dict[str, Any] = {}
        self.clock_offset_ms = 0
        self.state = State.CONNECTING
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._ready = asyncio.Event()
        self._closed = False
        self._failure: ArenaError | None = None
        self._failed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._inflight = InFlight()

    # -- life cycle ----------------------------------------------------------------------------

    async def start(self) -> dict[str, Any]:
        """Connect and shake hands; ConnectionLost if the server cannot be reached at first."""
        self._task = asyncio.create_task(self._run())
        ready = asyncio.create_task(self._ready.wait())
        await asyncio.wait({self._task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not self._ready.is_set():
            ready.cancel()
            await self._task  # re-raises nothing: _run stores its failure
            raise self._failure or ConnectionLost(f"could not connect to {self.url}")
        return self.welcome

    async def close(self) -> None:
        """Close for good; pending requests and moves fail with ConnectionLost."""
        self._closed = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._fail_all(ConnectionLost("the connection was closed"))
        self._set_state(State.CLOSED, "")

    @property
    def failure(self) -> ArenaError | None:
        """Why the connection gave up, once it has."""
        return self._failure

    def server_now(self, local_ms: int | None = None) -> int:
        """The server's clock now, estimated from the last ping."""
        local = time.time_ns() // 1_000_000 if local_ms is None else local_ms
        return local + self.clock_offset_ms

    def _set_state(self, state: State, detail: str) -> None:
        self.state = state
        if self._on_state is not None:
            self._on_state(state, detail)

    async def _run(self) -> None:
        attempt = 0
        lost_since: float | None = None
        loop = asyncio.get_running_loop()
        while not self._closed:
            attempt += 1
            try:
                ws = await self._connector(self._target)
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as e:
                if not self.welcome and attempt >= self._first_attempts:
                    self._failure = ConnectionLost(f"cannot reach the server at {self.url}: {e}")
                    self._fail_all(self._failure)
                    return
                if lost_since is not None and loop.time() - lost_since > self._give_up_after:
                    self._failure = ConnectionLost(f"the server at {self.url} is gone: {e}")
                    self._fail_all(self._failure)
                    self._set_state(State.CLOSED, str(self._failure))
                    return
                delay = self._backoff.delay(attempt)
                if self.welcome:
                    self._set_state(State.RECONNECTING, f"retrying in {delay:.1f}s")
                await asyncio.sleep(delay)
                continue
            try:
                await self._session(ws)
                attempt = 0
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd is not None else None
                if code in FATAL_CLOSE_CODES:
                    self._failure = ConnectionLost(
                        f"the server closed the connection: {FATAL_CLOSE_CODES[code]}"
                    )
                    self._fail_all(self._failure)
                    self._set_state(State.CLOSED, str(self._failure))
                    return
                attempt = 0
            except ProtocolError as error:
                self._failure = ConnectionLost(f"the server broke the protocol: {error.reason}")
                self._fail_all(self._failure)
                self._set_state(State.CLOSED, str(self._failure))
                return
            except OSError:
                attempt = 0
            finally:
                self._ws = None
                self._ready.clear()
                with contextlib.suppress(Exception):
                    await ws.close()
            if self._closed:
                return
            lost_since = loop.time()
            self.reconnects += 1
            self._inflight.fail_requests(ConnectionLost("the connection dropped; try again"))
            self._set_state(State.RECONNECTING, "connection lost, reconnecting")
            await asyncio.sleep(self._backoff.delay(1))

    async def _session(self, ws: ClientConnection) -> None:
        hello: dict[str, Any] = {"type": "hello", "protocol": PROTOCOL_VERSION, "name": self.name}
        if self._token is not None:
            hello["resume"] = self._token
        if self.key is not None:
            hello["key"] = self.key
        await ws.send(encode(hello))
        msg, after = await _welcome(ws)
        was_resuming = self._token is not None
        self.welcome = msg
        self.session = msg["session"]
        self._token = msg["token"]
        self.resumed = bool(msg["resumed"])
        self.resuming_from_disk = self.resuming_from_disk and self.resumed
        self._pacer = Pacer.from_limits(msg.get("limits") or {})
        if self._on_token is not None:
            self._on_token(self._token, msg)
        if was_resuming and not self.resumed:
            # The seat is gone (expired, or a server without durable storage): moves in flight
            # can never be answered.
            self._inflight.fail_moves(
                ConnectionLost("the server did not know this session any more")
            )
        self._ws = ws
        self._set_state(State.CONNECTED, "resumed" if self.resumed else "")
        await self._send_raw(self._inflight.ping())
        for message in self._inflight.unanswered_moves():
            await self._send_raw(message)
        self._ready.set()
        if self._on_welcome is not None:
            result = self._on_welcome(msg)
            if asyncio.iscoroutine(result):
                asyncio.create_task(result)  # noqa: RUF006 - it only sends requests
        for message in after:  # what came in the welcome's frame, after it
            self._dispatch(message)
        async for frame in ws:
            try:
                messages = decode_frame(frame)
            except ProtocolError:
                continue  # a newer server's message type: ignore it rather than drop the game
            for message in messages:
                self._dispatch(message)

    @property
    def resume_token(self) -> str | None:
        """The token that takes this seat back (for the seat store only)."""
        return self._token

    # -- messages ------------------------------------------------------------------------------

    def _dispatch(self, msg: dict[str, Any]) -> None:
        offset = self._inflight.clock_offset(msg)
        if offset is not None:
            self.clock_offset_ms = offset
            return
        self._inflight.answer(msg)
        self._on_message(msg)

    async def _send_raw(self, msg: Mapping[str, Any]) -> None:
        ws = self._ws
        if ws is None:
            return
        with contextlib.suppress(ConnectionClosed, OSError):
            await ws.send(encode(msg))

    async def _wait_ready(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._ready.is_set():
            return
        waiter = asyncio.create_task(self._ready.wait())
        tasks: set[asyncio.Future[Any]] = {waiter}
        if self._task is not None:
            tasks.add(self._task)
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        if not self._ready.is_set():
            waiter.cancel()
            raise self._failure or ConnectionLost("the connection is closed")

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

    async def wait_failed(self) -> None:
        """Return once the connection has given up for good."""
        await self._failed.wait()

    def _fail_all(self, error: ArenaError) -> None:
        self._failed.set()
        self._inflight.fail_requests(error)
        self._inflight.fail_moves(error)

    async def drop(self) -> None:
        """Drop the current TCP connection abruptly (for tests of reconnecting)."""
        ws = self._ws
        if ws is not None and ws.transport is not None:
            ws.transport.abort()


__all__ = [
    "Backoff",
    "Connection",
    "ConnectionLost",
    "MoveRejected",
    "RequestFailed",
    "State",
]


async def _welcome(ws: ClientConnection) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The server's ``welcome``, and what came after it in its frame: any server message
    may come inside a ``batch`` (docs/protocol.md), the welcome too."""
    while True:
        messages = decode_frame(await ws.recv())
        for index, msg in enumerate(messages):
            if msg["type"] == "welcome":
                return msg, messages[index + 1 :]
            if msg["type"] == "error":
                raise ConnectionLost(f"the server refused the handshake: {msg['reason']}")
