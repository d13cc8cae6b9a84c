"""The server's ports: the WebSocket endpoint with its HTTP pages, and the metrics port."""

from __future__ import annotations

import asyncio
import errno
import json
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from server.net.first_view import PageView
from server.net.handoff import Handoff, listen_routed
from server.net.http import WebViewer, tls_context
from server.net.ws_adapter import ReleasingConnection
from server.runtime.config import Config
from server.runtime.logging import get_logger
from server.runtime.metrics import CONTENT_TYPE, Metrics
from server.store import EventStore

log = get_logger("server.endpoint")

Handler = Callable[[ServerConnection], Awaitable[None]]
Page = Callable[[ServerConnection, Request], Awaitable[Response | None]]
"""A page that needs the server's parts (an export reads a room): answers GETs under a prefix."""


class AddressInUse(OSError):
    """A port the server should listen on is taken: the operator's start-up error, one line
    for them, never a wire error."""


class Endpoint:
    """Where the server listens: one port for WebSocket play, GET /healthz, /metrics and the
    web viewer, and an optional HTTP-only metrics port; it knows sockets, not rooms."""

    def __init__(
        self,
        config: Config,
        store: EventStore,
        metrics: Metrics,
        handler: Handler,
        *,
        pages: Mapping[str, Page] | None = None,
        held: Callable[[], int] = lambda: 0,
        views: Iterable[PageView] = (),
    ) -> None:
        self.config = config
        self.held = held  # the WebSocket connections this process holds now
        self.pages = dict(pages or {})
        self.store = store
        self.metrics = metrics
        self.handler = handler
        scheme = "https" if config.tls_cert is not None else "http"
        self.web = WebViewer(config.allowed_origins, views=views, scheme=scheme)
        self.server: Server | None = None
        self.metrics_server: Server | None = None
        self.handoff: Handoff | None = None

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """GET /metrics and /healthz, the pages under a prefix of ``pages`` (an export), else
        the web viewer's pages (their first views rendered by ``views``), its static files and
        the Origin check; an upgrade past ``--max-connections`` is answered 503 busy."""
        if self.held() >= self.config.max_connections and _upgrade(request):
            return self._busy(connection)
        response = await self.process_metrics_request(connection, request)
        for prefix, page in self.pages.items():
            if response is None and request.path.startswith(prefix):
                response = await page(connection, request)
        return response if response is not None else await self.web.respond(connection, request)

    def _busy(self, connection: ServerConnection) -> Response:
        """503 with Retry-After, 1 to 3 s drawn at random so a herd comes back spread out: an
        answer the clients act on (they come back then, with jitter), never a silent close."""
        self.metrics.busy.inc()
        response = connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "busy: come back later\n")
        response.headers["Retry-After"] = str(random.randint(1, 3))
        return response

    async def process_metrics_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/metrics":
            response = connection.respond(HTTPStatus.OK, "")
            response.body = self.metrics.render()
            del response.headers["Content-Type"]
            del response.headers["Content-Length"]
            response.headers["Content-Type"] = CONTENT_TYPE
            response.headers["Content-Length"] = str(len(response.body))
            return response
        if path != "/healthz":
            return None
        ok = await self.store.ping()
        status = HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE
        body = {"status": "ok" if ok else "unavailable", "store": ok}
        response = connection.respond(status, json.dumps(body) + "\n")
        del response.headers["Content-Type"]
        response.headers["Content-Type"] = "application/json"
        return response

    async def _no_websocket(self, ws: ServerConnection) -> None:
        """The metrics port speaks HTTP only (GET /metrics, /healthz)."""
        await ws.close(1008, "this port serves GET /metrics and /healthz only")

    async def listen(self) -> Server:
        """Open the play port (routed to the rooms' homes with --workers) and the metrics port;
        the caller stops everything if either fails."""
        if self.routes_rooms:
            self.server = await self._listen_routed()
        else:
            self.server = await self._listen(
                self.handler,
                self.config.port,
                "--port",
                **self._ws_options,
                # --workers: every worker listens on the one port; the kernel spreads
                # connections.
                reuse_port=self.config.workers > 1,
                ssl=tls_context(self.config.tls_cert, self.config.tls_key),
                # asyncio's default of 100 overflowed under a storm of reconnections.
                backlog=self.config.listen_backlog,
            )
        if self.config.metrics_port:
            self.metrics_server = await self._listen(
                self._no_websocket,
                self.config.metrics_port + self.config.worker_index,
                "--metrics-port",
                process_request=self.process_metrics_request,
            )
        return self.server

    @property
    def _ws_options(self) -> dict[str, Any]:
        """The options of the WebSocket endpoint (``serve``'s, and a handed-off socket's)."""
        return {
            "max_size": self.config.max_frame_bytes,
            "compression": None,
            "close_timeout": 2,
            "open_timeout": self.config.open_timeout_s,
        }

    @property
    def routes_rooms(self) -> bool:
        """Whether this worker routes connections to their room's home (server.net.handoff):
        with --workers, unless the port speaks TLS (the request line cannot be peeked)."""
        return bool(self.config.handoff_fds) and self.config.tls_cert is None

    async def _listen_routed(self) -> Server:
        """The endpoint through ``server.net.handoff``, which owns the shared port."""
        config = self.config
        try:
            server, self.handoff = await listen_routed(
                self.handler,
                host=config.host,
                port=config.port,
                handoff_fds=config.handoff_fds,
                worker_index=config.worker_index,
                max_size=config.max_frame_bytes,
                close_timeout=self._ws_options["close_timeout"],
                open_timeout=config.open_timeout_s,
                backlog=config.listen_backlog,
                process_request=self.process_request,
            )
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            raise self._in_use(config.port, "--port") from error
        return server

    def _in_use(self, port: int, option: str) -> AddressInUse:
        """The operator's start-up error for a port that is taken."""
        return AddressInUse(
            f"cannot listen on {self.config.host}:{port}: the address is already in use "
            f"(another server running? choose another {option})"
        )

    async def _listen(self, handler: Any, port: int, option: str, **options: Any) -> Server:
        options.setdefault("process_request", self.process_request)
        options.setdefault("create_connection", ReleasingConnection)
        try:
            return await serve(handler, self.config.host, port, **options)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            raise self._in_use(port, option) from error

    async def close(self) -> None:
        """Stop listening and close every connection with 1001 (going away), waiting up to
        the shutdown timeout for them to go."""
        if self.metrics_server is not None:
            self.metrics_server.close()
        if self.handoff is not None:
            await self.handoff.aclose()
        if self.server is not None:
            self.server.close(close_connections=True)
            try:
                await asyncio.wait_for(self.server.wait_closed(), self.config.shutdown_timeout_s)
            except TimeoutError:
                log.warning("shutdown_timeout")


def _upgrade(request: Request) -> bool:
    """Whether the request asks for a WebSocket (a page or /healthz is never busy)."""
    return request.headers.get("Upgrade", "").lower() == "websocket"
