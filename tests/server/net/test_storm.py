"""A storm of connections on a server in this process that holds few: every client is let in,
or answered 503 busy with Retry-After and comes back (the terminal client's own transport,
its jittered wait), and none is dropped without an answer."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Response

from client.connection import Connection
from client.transport import busy_wait
from server.app import App
from server.runtime.clock import SystemClock
from server.runtime.config import Config
from server.store import MemoryEventStore

HELD = 12  # --max-connections of the server under the storm
STORM = 60


@pytest.fixture
async def url() -> AsyncIterator[str]:
    config = Config(port=0, rate=1000, burst=1000, max_connections=HELD)
    app = App(config, MemoryEventStore(), SystemClock())
    server = await app.start()
    port = next(iter(server.sockets)).getsockname()[1]
    try:
        yield f"ws://127.0.0.1:{port}/"
    finally:
        await app.stop()


def test_busy_waits_for_retry_after_and_up_to_half_again() -> None:
    def refused(status: int, headers: dict[str, str]) -> InvalidStatus:
        return InvalidStatus(Response(status, "", Headers(headers), b""))

    assert busy_wait(refused(503, {"Retry-After": "2"}), rand=lambda: 0.0) == 2.0
    assert busy_wait(refused(503, {"Retry-After": "2"}), rand=lambda: 1.0) == 3.0
    assert busy_wait(refused(503, {}), rand=lambda: 0.0) == 1.0  # none said: a second
    assert busy_wait(refused(403, {"Retry-After": "2"})) is None  # a refusal, not busy


async def test_a_storm_on_a_full_server_lets_everyone_in_in_turn(url: str) -> None:
    states: list[str] = []
    lost: list[Any] = []

    async def spectator(i: int) -> None:
        conn = Connection(
            url,
            f"storm{i}",
            on_message=lambda msg: None,
            on_state=lambda state, detail: states.append(detail),
        )
        try:
            await conn.start()
            rooms = await conn.request({"type": "list_rooms"}, expect="rooms")
            assert rooms["type"] == "rooms"
            await asyncio.sleep(random.uniform(0.05, 0.3))  # a look, then gone
        except Exception as exc:  # anything but an answer is a connection lost
            lost.append(exc)
        finally:
            await conn.close()

    async with asyncio.timeout(90):
        await asyncio.gather(*(spectator(i) for i in range(STORM)))
    assert lost == []
    busy = [s for s in states if s.startswith("server busy")]
    assert busy, "the storm never filled the server: the test did not test the busy answer"
