"""One WebSocket connection: decode, rate-limit, dispatch, answer; never wait on a slow client.

Every ClientError becomes an ``error`` (or, for a move, a ``reject``) with its code and the
connection goes on; only an unsupported protocol, a sustained flood or a slow consumer close it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgpack
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from server.kernel.errors import (
    AlreadyHello,
    HelloRequired,
    RateLimited,
    UnsupportedProtocol,
)
from server.kernel.names import DEFAULT_NAME, clean_name
from server.net.router import Handler, Identity, Part, Router
from server.net.ws_adapter import (
    forget_handshake,
    framed,
    queue_binary,
    settled_plain,
    write_pending,
)
from server.runtime.clock import Clock
from server.runtime.config import Config
from server.runtime.logging import bind, get_logger
from server.runtime.metrics import Metrics
from server.runtime.solver_pool import NoWinnableDeal
from shared import protocol as p
from shared.errors import (
    ArchiveUnavailable,
    ArenaError,
    ClientError,
    CorruptRecord,
    ProtocolError,
)
from shared.protocol import CLOSE_FLOOD, CLOSE_SLOW, CLOSE_UNSUPPORTED

log = get_logger("server.net.connection")

SERVER_NAME = "solitaire-arena/0.1.0"
__all__ = ["Connection", "Outbox", "TokenBucket"]
# ServerError codes sent as they are (others are "server_error"): docs/protocol.md, Error codes.
_VISIBLE_SERVER_CODES = frozenset(
    {NoWinnableDeal.code, ArchiveUnavailable.code, CorruptRecord.code}
)


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; one message costs one token."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.now = now
        self.last = now()

    def take(self) -> bool:
        t = self.now()
        self.tokens = min(self.burst, self.tokens + (t - self.last) * self.rate)
        self.last = t
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


def _over_limit(ws: ServerConnection, limit: int) -> bool:
    """Whether the connection's unsent bytes exceed ``limit``. Asked after each write and
    while nothing is queued for it: the transport's buffer grows only when the outbox writes
    (which clears ``queued``) and only shrinks in between, so once per write is the same answer
    (it was asked for every frame, several a move per connection)."""
    transport = ws.transport
    return transport is not None and transport.get_write_buffer_size() > limit


class Outbox:
    """Frames queued per connection during one event-loop iteration, then one write each.

    A move fans out to ~22 frames, often several to one connection (ack, game_event, progress,
    and other racers' progress); one ``send`` syscall per frame was a quarter of a loaded
    server's time (bench.load profile). Frames go into websockets' Sans-I/O protocol (which
    frames them, in order with its own pings and close), and each connection's bytes are
    written once per iteration, joined; server.net.ws_adapter holds what that reads of
    websockets' internals.
    """

    def __init__(self) -> None:
        self._dirty: list[Connection] = []
        self._before: list[_Before] = []
        self._scheduled = False

    def soon(self, callback: Callable[[Any], None], arg: Any) -> _Before:
        """Run ``callback(arg)`` at this turn's flush, before its writes: the frames it queues
        go in them. Delivery opens a room's tick so; through ``call_soon`` it ran a turn
        before the flush, and its frames waited for the next one."""
        before = _Before(callback, arg)
        self._before.append(before)
        self._schedule()
        return before

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def queue(self, connection: Connection, frame: bytes, wire: bytes | None = None) -> None:
        """Queue one binary message; ``wire`` is it already framed (``framed``), if known."""
        if not queue_binary(connection.ws, frame, wire, connection.plain):
            return  # as websockets' broadcast(): closing, or a fragmented send under way
        if connection.queued:
            return
        connection.queued = True
        self._dirty.append(connection)
        self._schedule()

    def flush(self) -> None:
        before, self._before = self._before, []
        try:
            for hook in before:
                if hook.cancelled:
                    continue
                try:
                    hook.callback(hook.arg)
                except Exception:  # as the loop would: logged, and the others still run
                    log.exception("flush_hook_failed")
        finally:
            self._write_dirty()

    def _write_dirty(self) -> None:
        dirty, self._dirty = self._dirty, []
        self._scheduled = False
        for connection in dirty:
            _write_queued(connection)

    def write_now(self, connection: Connection) -> None:
        """Write what is queued for one connection now, not at the end of the loop turn: an
        ack waited that extra turn, milliseconds on a loaded server."""
        if connection.queued:
            _write_queued(connection)  # the flush then finds nothing left to write

    def send_many(self, peers: Iterable[Any], msg: dict[str, Any] | bytes) -> None:
        """One encoded frame to many connections; slow ones are dropped."""
        frame = msg if isinstance(msg, bytes) else p.encode_unchecked(msg)
        wire: bytes | None = None
        for peer in peers:
            if not isinstance(peer, Connection):
                peer.send(msg)  # a test double
                continue
            if peer.closing:
                continue
            if not peer.queued and _over_limit(peer.ws, peer.config.max_outbound_bytes):
                peer.drop_slow()
                continue
            if wire is None:
                wire = framed(frame)
            self.queue(peer, frame, wire)


def _write_queued(connection: Connection) -> None:
    connection.queued = False
    try:
        write_pending(connection.ws)
    except Exception as exc:  # as broadcast(): a failed write never stops the others
        log.warning("write_failed", session=connection.session, error=str(exc))
        return
    # Asked again after the write: a client that sent many requests and reads nothing gets
    # their answers queued in one turn, and with no frame after them the check on queuing
    # would never come; its megabytes would stay held until the keepalive gave up.
    if _over_limit(connection.ws, connection.config.max_outbound_bytes):
        connection.drop_slow()


@dataclass(eq=False)
class _Before:
    """A callback waiting for the outbox's flush; cancelled ones are skipped."""

    callback: Callable[[Any], None]
    arg: Any
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class Connection:
    """A client's session: its identity, its rate limit, and the frames it is sent."""

    def __init__(
        self,
        ws: ServerConnection,
        *,
        router: Router,
        clock: Clock,
        config: Config,
        outbox: Outbox,
        connection_id: str,
        metrics: Metrics,
    ) -> None:
        self.metrics = metrics
        self.ws = ws
        self.connection_id = connection_id
        self.clock = clock
        self.config = config
        self.outbox = outbox
        self.queued = False  # in the outbox's list of connections to write
        self.plain = settled_plain(ws.protocol)  # settled by the handshake, done by now
        forget_handshake(ws)
        self.session = ""
        self.token = ""
        self.name = "player"
        self.identity: Identity | None = None  # the accounts' part, once attached
        self.bucket = TokenBucket(config.rate, config.burst)
        self.strikes = 0
        self.closing = False
        self.close_task: asyncio.Future[None] | None = None
        remote = ws.remote_address
        self.address = str(remote[0]) if isinstance(remote, tuple) and remote else "unknown"
        self.parts: tuple[Part, ...] = router.attach(self)

    # ---- sending -----------------------------------------------------------------------------

    def send(self, msg: dict[str, Any] | bytes) -> None:
        self.send_frame(msg if isinstance(msg, bytes) else p.encode_unchecked(msg))

    def send_frame(self, frame: bytes) -> None:
        if self.closing:
            return
        if not self.queued and _over_limit(self.ws, self.config.max_outbound_bytes):
            self.drop_slow()
            return
        # Framed here, not by websockets' send_binary: its Frame a message cost 1.3 µs.
        self.outbox.queue(self, frame, framed(frame) if self.plain else None)

    def drop_slow(self) -> None:
        if not self.closing:
            self.metrics.slow_consumers.inc()
        log.warning("slow_consumer_dropped", session=self.session)
        self.close_soon(CLOSE_SLOW, "slow consumer: outbound buffer full")

    def close_soon(self, code: int, reason: str) -> None:
        if self.closing:
            return
        self.closing = True
        self.close_task = asyncio.ensure_future(self.ws.close(code, reason))
        self.close_task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def written_now(self) -> None:
        """Write what is queued for this connection now (a move's ack after its event)."""
        self.outbox.write_now(self)

    def reply(self, request: dict[str, Any], msg: dict[str, Any]) -> None:
        if request.get("ref") is not None:
            msg["ref"] = request["ref"]
        self.send(msg)

    # ---- the read loop -----------------------------------------------------------------------

    async def run(self) -> None:
        recv = self.ws.recv
        try:
            # recv() in a loop, as ``async for`` does, without its async generator: one object
            # less a message, alive until the next, that the collector scanned twice.
            while True:
                frame = await recv()
                if self.closing:
                    break
                await self.handle(frame)
        except ConnectionClosed:
            pass
        finally:
            await self._gone()
            if self.close_task is not None:
                # Returning first would let websockets close with 1000 before our own code.
                with contextlib.suppress(Exception):
                    await self.close_task
            _unlink(self)

    async def _gone(self) -> None:
        """The connection ended: each feature lets go of what it held for it (a seat is
        marked away and its grace starts, for all to see)."""
        for part in self.parts:
            await part.gone()

    async def handle(self, frame: bytes | str) -> None:
        msg: dict[str, Any] | None = None
        try:
            if not self.bucket.take():
                self.strikes += 1
                with contextlib.suppress(ProtocolError):
                    msg = p.decode(frame)
                if self.strikes >= self.config.flood_limit:
                    log.warning("flood_closed", session=self.session)
                    self.close_soon(CLOSE_FLOOD, "flood past the rate limit")
                raise RateLimited("too many messages: slow down")
            self.strikes = 0
            if not self.session:
                raw = _peek(frame)
                kind = raw.get("type") if raw is not None else None
                if isinstance(kind, str) and kind in p.CLIENT_MESSAGES and kind != p.HELLO:
                    # Before hello, anything else is hello_required, whatever its fields.
                    self.send(p.error_message("hello_required", "send hello first", _ref(raw)))
                    return
            msg = p.decode(frame)
            kind = msg["type"]
            if kind not in p.CLIENT_MESSAGES:
                raise p.UnknownType(f"{kind!r} is a server message")
            if kind == p.HELLO:
                await self.on_hello(msg)
                return
            if not self.session:
                raise HelloRequired("send hello first")
            await (self.on_ping(msg) if kind == p.PING else _handler(self, kind)(msg))
        except ClientError as exc:
            log.debug("client_error", code=exc.code, reason=exc.reason)
            self.answer_error(msg if msg is not None else _peek(frame), exc)
            if isinstance(exc, UnsupportedProtocol):
                self.close_soon(CLOSE_UNSUPPORTED, "unsupported protocol version")
        except ArenaError as exc:
            log.warning("server_error", code=exc.code, reason=exc.reason)
            # A specific server-side refusal a client can act on keeps its code on the wire.
            visible = exc.code if exc.code in _VISIBLE_SERVER_CODES else "server_error"
            self.answer_error(msg, exc, code=visible)
        except Exception:
            log.exception("handler_failed", type=msg.get("type") if msg else None)
            self.answer_error(msg, None, code="server_error")

    def answer_error(
        self, msg: dict[str, Any] | None, exc: ArenaError | None, code: str | None = None
    ) -> None:
        code = code or (exc.code if exc else "server_error")
        reason = exc.reason if exc is not None and code == exc.code else "server error; try again"
        if msg is not None and msg.get("type") == p.MOVE and p.valid_move_id(msg.get("id")):
            self.send({"type": p.REJECT, "id": msg["id"], "code": code, "reason": reason})
            self.metrics.moves.labels(code).inc()
            return
        self.metrics.errors.labels(code).inc()
        self.send(p.error_message(code, reason, _ref(msg)))

    # ---- handlers ----------------------------------------------------------------------------

    @property
    def account(self) -> str | None:
        """The account this connection is logged in as (its name), None for a guest."""
        return self.identity.account_name if self.identity is not None else None

    @property
    def account_id(self) -> str | None:
        """The id of the account this connection is logged in as, None for a guest."""
        return self.identity.account_id if self.identity is not None else None

    async def on_ping(self, msg: dict[str, Any]) -> None:
        self.reply(msg, {"type": p.PONG, "at": self.clock.now_ms()})

    async def on_hello(self, msg: dict[str, Any]) -> None:
        if self.session:
            raise AlreadyHello("hello was already sent on this connection")
        if msg["protocol"] != p.PROTOCOL_VERSION:
            raise UnsupportedProtocol(
                f"this server speaks protocol {p.PROTOCOL_VERSION}, not {msg['protocol']}"
            )
        self.name = clean_name(msg.get("name", DEFAULT_NAME))
        for part in self.parts:  # a key logs in; a resume token takes its seat back
            await part.greet(msg)
        if not self.session:
            self.session = "p" + secrets.token_hex(6)
            self.token = secrets.token_urlsafe(24)
        bind(session=self.session, player=self.session)
        welcome = {
            "type": p.WELCOME,
            "protocol": p.PROTOCOL_VERSION,
            "session": self.session,
            "token": self.token,
            "resumed": False,
            "room": None,
            "server": SERVER_NAME,
            "limits": self.config.limits(),
            "account": self.account,
        }
        for part in self.parts:
            part.welcome(welcome)
        self.reply(msg, welcome)
        for part in self.parts:
            await part.greeted()
        if not welcome["resumed"]:
            log.info("hello", name=self.name)


def _handler(c: Connection, kind: str) -> Handler:
    """The handler of a request type; a connection's handlers are made by the first request
    that needs them: an idle connection (a hello, then pings) never pays for them."""
    handlers = c.__dict__.get("handlers")
    if handlers is None:
        handlers = c.__dict__["handlers"] = _handlers(c)
    return handlers[kind]


def _handlers(c: Connection) -> dict[str, Handler]:
    """The request handlers of a connection, by message type (a few KiB of bound methods)."""
    handlers: dict[str, Handler] = {p.PING: c.on_ping}
    for part in c.parts:
        handlers.update(part.handlers())
    return handlers


def _unlink(c: Connection) -> None:
    """Drop the parts of an ended connection that refer back to it (its handlers' bound
    methods, the features' parts and their closures): it is then freed at once by reference
    counting, with its socket and websockets' buffers, not by the collector's next full pass,
    which a busy server makes minutes apart (server/runtime/gc_timer.py)."""
    c.__dict__.pop("handlers", None)
    c.parts = ()
    c.identity = None


def _ref(msg: dict[str, Any] | None) -> Any:
    """The ``ref`` to echo for a request (None when it has none fit to echo)."""
    ref = msg.get("ref") if msg is not None else None
    return ref if p.valid_ref(ref) else None


def _peek(frame: bytes | str) -> dict[str, Any] | None:
    """The raw map of a frame that failed validation, to find its move id or ref; or None."""
    if isinstance(frame, str):
        return None
    try:
        raw = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    except Exception:
        return None
    return raw if isinstance(raw, dict) else None
