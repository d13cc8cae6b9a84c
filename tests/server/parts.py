"""The server's parts without a socket: an App opened on a store, with fake connections."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgpack

from server.app import App
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room
from server.race.wire.audience import Member, Role
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore
from shared import deal_deck

SEED = "rooms-unit"
DECK = deal_deck("quadrennial", SEED)


class Peer:
    """A connection as delivery sees it: it keeps what it is sent, decoded."""

    def __init__(self, session: str, connection_id: str | None = None) -> None:
        self.session = session
        self.connection_id = connection_id or f"test.{session}.{id(self)}"
        self.messages: list[dict[str, Any]] = []
        self.frames: list[list[str]] = []  # the message types of each frame, as sent
        self.closed: list[int] = []

    def send(self, msg: dict[str, Any] | bytes) -> None:
        decoded = msgpack.unpackb(msg) if isinstance(msg, bytes) else msg
        if decoded["type"] == "batch":  # one tick's messages, each kept on its own
            self.messages.extend(decoded["messages"])
            self.frames.append([m["type"] for m in decoded["messages"]])
        else:
            self.messages.append(decoded)
            self.frames.append([decoded["type"]])

    def close_soon(self, code: int, reason: str) -> None:
        self.closed.append(code)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == kind]


def send_many(peers: Any, msg: dict[str, Any] | bytes) -> None:
    for peer in peers:
        peer.send(msg)


async def until(ready: Callable[[], bool]) -> None:
    """Let the event loop run until ``ready`` (timers, catch-up and delays are tasks)."""
    for _ in range(5000):
        if ready():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the condition never came true")


def open_app(store: EventStore, clock: FakeClock, config: Config | None = None) -> App:
    app = App(config or Config(), store, clock)
    app.delivery.ticker.send_many = send_many
    app.race_clock.poll_s = 0.01
    app.open()
    return app


async def join(app: App, peer: Peer, room_id: str, role: str = "player") -> tuple[Room, Member]:
    """What a connection's ``join`` does: a seat for a player, then delivery's snapshots."""
    room = await app.commands.room(room_id)
    player = peer.session if role == "player" else None
    if player is not None:
        await app.commands.join(
            room,
            player,
            name=peer.session,
            token=f"tok-{peer.session}",
            connection=peer.connection_id,
        )
    member = app.delivery.attach(room, peer, Role(role), player=player)
    return room, member


async def racing(app: App, clock: FakeClock, players: list[Peer], **opts: Any) -> Room:
    room = await app.commands.create_room(
        {"variant": "quadrennial", "seed": SEED, "countdown_ms": 1000, **opts}, creator="test"
    )
    for peer in players:
        await join(app, peer, room.id)
    await app.commands.start(room, players[0].session)
    assert room.status is RoomStatus.COUNTDOWN
    clock.advance(999)
    await asyncio.sleep(0.01)
    assert room.status is RoomStatus.COUNTDOWN  # not a millisecond early
    clock.advance(1)
    await until(lambda: all(room.games[p.session].version == 1 for p in players))
    assert room.status is RoomStatus.RACING
    assert room.started_at == clock.now_ms()
    return room
