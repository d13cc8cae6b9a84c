"""The server assembled from its dependencies: config, event store and clock are passed in."""

from __future__ import annotations

import asyncio
import gc
import json
from http import HTTPStatus

import structlog
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from server.clock import Clock
from server.config import Config
from server.connection import Connection, Outbox
from server.logging import get_logger
from server.rooms import RoomManager
from server.store import EventStore

log = get_logger("server.app")
_GC_THRESHOLDS = (700, 10, 1_000)  # see App.start
_REBUILD_ATTEMPTS = 30  # seconds to wait for the store at start-up, e.g. Redis still booting


class App:
    """Rooms plus the WebSocket endpoint and GET /healthz on one port."""

    def __init__(self, config: Config, store: EventStore, clock: Clock) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.outbox = Outbox()
        self.rooms = RoomManager(store, clock, config, self.outbox.send_many)
        self.connections: set[Connection] = set()
        self.server: Server | None = None

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        if request.path.split("?", 1)[0] != "/healthz":
            return None
        ok = await self.store.ping()
        status = HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE
        body = {"status": "ok" if ok else "unavailable", "store": ok}
        response = connection.respond(status, json.dumps(body) + "\n")
        del response.headers["Content-Type"]
        response.headers["Content-Type"] = "application/json"
        return response

    async def handler(self, ws: ServerConnection) -> None:
        structlog.contextvars.clear_contextvars()
        connection = Connection(ws, self.rooms, self.config, self.outbox)
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)

    async def start(self) -> Server:
        """Rebuild rooms from the store, then listen."""
        for attempt in range(1, _REBUILD_ATTEMPTS + 1):
            # The rebuild allocates every room's folded games and keeps nearly all of it: the
            # collector would only traverse it again and again (a third of a rebuild's time,
            # bench/recovery.py), and afterwards it is long-lived, so it is frozen out of reach.
            gc.disable()
            try:
                await self.rooms.rebuild()
                break
            except Exception as exc:  # the store's client raises its own families of errors
                if attempt == _REBUILD_ATTEMPTS:
                    raise
                log.warning("store_not_ready", error=str(exc), attempt=attempt)
                await asyncio.sleep(1.0)
            finally:
                gc.enable()
        gc.freeze()
        # Racing keeps every game's state for about a second (one move each), long enough to be
        # promoted to the oldest generation, so with the default thresholds a full collection
        # (~100 ms over every connection's objects) ran every few seconds and was the ack tail
        # (bench.load paced, gc.callbacks). Full collections now wait for 1,000 younger ones;
        # cyclic garbage that reached the oldest generation is reclaimed later, not leaked.
        gc.set_threshold(*_GC_THRESHOLDS)
        self.server = await serve(
            self.handler,
            self.config.host,
            self.config.port,
            process_request=self.process_request,
            max_size=self.config.max_frame_bytes,
            compression=None,
            close_timeout=2,
        )
        log.info(
            "listening",
            host=self.config.host,
            port=self.config.port,
            store=type(self.store).__name__,
            rooms=len(self.rooms.rooms),
        )
        return self.server

    async def stop(self) -> None:
        """Close every connection with 1001 (going away), stop the rooms, close the store."""
        if self.server is not None:
            self.server.close(close_connections=True)
            try:
                await asyncio.wait_for(self.server.wait_closed(), self.config.shutdown_timeout_s)
            except TimeoutError:
                log.warning("shutdown_timeout")
        await self.rooms.aclose()
        await self.store.aclose()
        log.info("stopped")
