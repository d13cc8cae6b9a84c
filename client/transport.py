"""The client's WebSocket session: handshake, resuming, reconnecting, giving up.

The session survives drops: it reconnects with exponential backoff and jitter, says `hello`
again with the resume token it was given (the seat store keeps it on disk, so a new process can
take the seat back too), and re-sends the moves that were never answered with their original
ids, which the server answers without applying them twice (docs/protocol.md, "Moves"). What the
messages mean is the connection's (client/connection.py).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import enum
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from client.inflight import InFlight
from shared.errors import ArenaError, ProtocolError, ServerError
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


class ConnectionLost(ServerError):
    """The server could not be reached, or stopped answering, for good."""

    code = "connection_lost"


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


def busy_wait(error: InvalidStatus, rand: Callable[[], float] = random.random) -> float | None:
    """Seconds to wait before coming back to a server that answered 503 busy: its Retry-After
    (1 s without one) and up to half again at random, so a herd comes back spread out; None for
    any other refusal."""
    if error.response.status_code != 503:
        return None
    try:
        after = max(0.1, float(error.response.headers.get("Retry-After", "1")))
    except ValueError:
        after = 1.0
    return after * (1.0 + 0.5 * rand())


Connector = Callable[[str], Awaitable[ClientConnection]]


async def _default_connect(url: str) -> ClientConnection:
    return await connect(url, proxy=None, open_timeout=5, max_size=2**20, compression=None)


class TransportOptions(TypedDict, total=False):
    """``Transport``'s keyword options, for a subclass that passes them on unchanged."""

    on_state: Callable[[State, str], None] | None
    on_welcome: Callable[[dict[str, Any]], Awaitable[None] | None] | None
    connector: Connector
    backoff: Backoff | None
    first_attempts: int
    give_up_after: float
    resume: str | None
    on_token: Callable[[str, dict[str, Any]], None] | None
    key: str | None
    room: str | None


class Transport(abc.ABC):
    """One logical session with the server across any number of WebSocket connections."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        inflight: InFlight,
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
        self.resumed = False
        self.welcome: dict[str, Any] = {}
        self.state = State.CONNECTING
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._ready = asyncio.Event()
        self._closed = False
        self._failure: ArenaError | None = None
        self._failed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # What was sent and is unanswered: moves go again after a reconnect, all fail at the end.
        self._inflight = inflight

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
                wait = busy_wait(e) if isinstance(e, InvalidStatus) else None
                if wait is not None:  # an answer, not a failure: come back after Retry-After
                    attempt -= 1
                    self._set_state(State.RECONNECTING, f"server busy, retrying in {wait:.1f}s")
                    await asyncio.sleep(wait)
                    continue
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
        self._welcomed(msg)
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

    @abc.abstractmethod
    def _welcomed(self, welcome: dict[str, Any]) -> None:
        """A new socket's welcome, before anything is sent on it (the limits it advertises)."""

    @abc.abstractmethod
    def _dispatch(self, msg: dict[str, Any]) -> None:
        """One server message, in order (a ``batch``'s one by one): the subclass's to read."""

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
