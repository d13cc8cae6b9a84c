"""The connection against a scripted in-process server: matching answers, resuming, backoff."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest
from websockets.asyncio.server import ServerConnection, serve

from client.connection import (
    Backoff,
    Connection,
    ConnectionLost,
    MoveRejected,
    Pacer,
    State,
    decode_frame,
)
from shared.protocol import decode, encode

FAST = Backoff(base=0.01, factor=2.0, cap=0.05)


class FakeServer:
    """Answers hello, ping, list_rooms and moves; can drop the connection on the Nth move."""

    def __init__(self) -> None:
        self.hellos: list[dict[str, Any]] = []
        self.targets: list[str] = []  # each hello's connection's request target
        self.moves: list[dict[str, Any]] = []
        self.drop_on_move: int | None = None
        self.version = 1
        self.answered: dict[Any, dict[str, Any]] = {}
        self.rate_limit_first = 0  # refuse this many move frames as `rate_limited` first
        self.batch = False  # answer list_rooms inside a `batch` frame, among other messages
        self.limits: dict[str, Any] = {}

    async def handler(self, ws: ServerConnection) -> None:
        async for frame in ws:
            msg = decode(frame)
            kind = msg["type"]
            if kind == "hello":
                self.hellos.append(msg)
                self.targets.append(ws.request.path if ws.request is not None else "")
                resumed = msg.get("resume") == "token-1"
                welcome = {
                    "type": "welcome",
                    "protocol": 1,
                    "session": "p1",
                    "token": "token-1",
                    "resumed": resumed,
                    "room": "r1" if resumed else None,
                    "server": "fake",
                    "limits": self.limits,
                }
                if self.batch:  # any message may come inside a batch, the welcome too
                    inner = [welcome, {"type": "left", "room": "r0"}]
                    await ws.send(msgpack.packb({"type": "batch", "messages": inner}))
                else:
                    await ws.send(encode(welcome))
            elif kind == "ping":
                await ws.send(encode({"type": "pong", "at": 1_000, "ref": msg["ref"]}))
            elif kind == "list_rooms" and self.batch:
                # Several messages coalesced into one frame, one of a type this client does
                # not know (a newer server's): it is skipped, the rest handled in order.
                inner = [
                    {"type": "left", "room": "r1"},
                    {"type": "surprise", "x": 1},
                    {"type": "rooms", "rooms": [], "ref": msg["ref"]},
                    {"type": "pong", "at": 5},
                ]
                await ws.send(msgpack.packb({"type": "batch", "messages": inner}))
            elif kind == "list_rooms":
                await ws.send(encode({"type": "rooms", "rooms": [], "ref": msg["ref"]}))
            elif kind == "join":
                # Like a server that forgets the ref on this answer: matched by its type.
                await ws.send(
                    encode(
                        {"type": "joined", "room": msg["room"], "role": "player", "player": "p1"}
                    )
                )
            elif kind == "move":
                self.moves.append(msg)
                if self.drop_on_move == len(self.moves):
                    assert ws.transport is not None
                    ws.transport.abort()
                    return
                answer = self.answered.get(msg["id"])
                if self.rate_limit_first > 0:
                    self.rate_limit_first -= 1
                    answer = {
                        "type": "reject",
                        "id": msg["id"],
                        "code": "rate_limited",
                        "reason": "too many messages: slow down",
                    }
                    await ws.send(encode(answer))
                    continue
                if answer is None:
                    if msg["move"] == "t1f":
                        answer = {
                            "type": "reject",
                            "id": msg["id"],
                            "code": "illegal_move",
                            "reason": "no foundation takes QS",
                        }
                    else:
                        self.version += 1
                        answer = {"type": "ack", "id": msg["id"], "version": self.version}
                    self.answered[msg["id"]] = answer
                await ws.send(encode(answer))


@pytest.fixture
async def fake():
    server = FakeServer()
    async with serve(server.handler, "127.0.0.1", 0) as ws_server:
        port = ws_server.sockets[0].getsockname()[1]
        yield server, f"ws://127.0.0.1:{port}"


async def connected(url: str, messages: list[dict[str, Any]] | None = None, states=None):
    conn = Connection(
        url,
        "ann",
        on_message=(messages.append if messages is not None else lambda m: None),
        on_state=(lambda s, d: states.append(s)) if states is not None else None,
        backoff=FAST,
    )
    await conn.start()
    return conn


async def test_handshake_and_requests(fake) -> None:
    server, url = fake
    conn = await connected(url)
    try:
        assert conn.session == "p1"
        assert server.hellos[0]["name"] == "ann"
        assert "resume" not in server.hellos[0]
        assert (await conn.request({"type": "list_rooms"}))["rooms"] == []
        joined = await conn.request({"type": "join", "room": "r1"}, expect="joined")
        assert joined["player"] == "p1"
    finally:
        await conn.close()


async def test_moves_get_their_ack_or_the_servers_reason(fake) -> None:
    server, url = fake
    conn = await connected(url)
    try:
        ack = await conn.move("d")
        assert ack["version"] == 2
        with pytest.raises(MoveRejected) as rejected:
            await conn.move("t1f")
        assert rejected.value.reason == "no foundation takes QS"
        assert rejected.value.code == "illegal_move"
        first = server.moves[0]["id"]
        # Ids run on from a per-run start, so a seat taken back by a new process never
        # reuses one the server already answered.
        assert [m["id"] for m in server.moves] == [first, first + 1]
        assert first > 10**15
    finally:
        await conn.close()


async def test_a_dropped_connection_resumes_and_resends_the_unanswered_move(fake) -> None:
    server, url = fake
    states: list[State] = []
    conn = await connected(url, states=states)
    try:
        await conn.move("d")
        server.drop_on_move = 2
        ack = await asyncio.wait_for(conn.move("t3t5"), 15)
        assert ack["version"] == 3
        first = server.moves[0]["id"]
        assert [m["id"] for m in server.moves] == [first, first + 1, first + 1]  # sent again
        assert server.hellos[1]["resume"] == "token-1"
        assert conn.resumed
        assert conn.reconnects == 1
        assert State.RECONNECTING in states
        assert states[-1] is State.CONNECTED
    finally:
        await conn.close()


async def test_a_connection_for_a_room_names_it_at_every_connect(fake) -> None:
    """docs/protocol.md, "Transport": the room hint, on the first connect and on a reconnect,
    so a server with --workers serves it where the room is."""
    server, url = fake
    conn = Connection(url, "ann", on_message=lambda m: None, backoff=FAST, room="k2x7m4qa")
    await conn.start()
    try:
        server.drop_on_move = 1
        await asyncio.wait_for(conn.move("d"), 15)
        assert server.targets == ["/?room=k2x7m4qa", "/?room=k2x7m4qa"]
    finally:
        await conn.close()


async def test_an_unreachable_server_fails_fast() -> None:
    from tests.support.ports import free_port

    conn = Connection(
        f"ws://127.0.0.1:{free_port()}", "ann", on_message=lambda m: None, backoff=FAST
    )
    with pytest.raises(ConnectionLost):
        await conn.start()


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    backoff = Backoff(base=0.5, factor=2.0, cap=4.0)
    assert backoff.delay(1, lambda: 1.0) == 0.5
    assert backoff.delay(2, lambda: 1.0) == 1.0
    assert backoff.delay(3, lambda: 1.0) == 2.0
    assert backoff.delay(10, lambda: 1.0) == 4.0
    assert backoff.delay(10, lambda: 0.0) == 2.0  # jitter: between half and all of it
    assert backoff.delay(1, lambda: 0.0) == 0.25


async def test_batch_frames_are_handled_message_by_message_in_order_welcome_too(fake) -> None:
    server, url = fake
    server.batch = True
    messages: list[dict[str, Any]] = []
    conn = await connected(url, messages)
    try:
        answer = await conn.request({"type": "list_rooms"}, expect="rooms")
        assert answer["rooms"] == []
        kinds = [m["type"] for m in messages]
        assert kinds[0] == "left"  # what came in the welcome's own batch, handled after it
        assert conn.session == "p1"
        assert kinds[-3:] == ["left", "rooms", "pong"]  # the unknown one skipped
    finally:
        await conn.close()


def test_decode_frame_unpacks_a_batch_and_checks_each_message() -> None:
    frame = msgpack.packb(
        {
            "type": "batch",
            "messages": [
                {"type": "progress", "room": "r", "player": "p", "status": "playing",
                 "foundation": 1, "moves": 2, "finished_at": None, "reached_at": 5},
                {"type": "progress", "room": "r"},  # a broken one: left out
                {"type": "left", "room": "r"},
            ],
        }
    )  # fmt: skip
    assert [m["type"] for m in decode_frame(frame)] == ["progress", "left"]
    assert decode_frame(encode({"type": "left", "room": "r"})) == [{"type": "left", "room": "r"}]


async def test_a_rate_limited_move_is_sent_again_with_its_id_until_played(fake) -> None:
    server, url = fake
    server.rate_limit_first = 2
    conn = await connected(url)
    try:
        ack = await asyncio.wait_for(conn.move("d"), 15)
        assert ack["type"] == "ack"
        ids = [m["id"] for m in server.moves]
        assert len(ids) == 3
        assert len(set(ids)) == 1  # not processed, so the same move id each time
    finally:
        await conn.close()


def test_the_pacer_stays_under_the_advertised_rate() -> None:
    now = [0.0]
    pacer = Pacer.from_limits({"messages_per_second": 20, "burst": 40})
    assert pacer is not None
    pacer._clock = lambda: now[0]
    pacer._at = 0.0
    waits = []
    for _ in range(100):
        wait = pacer.wait_s()
        waits.append(wait)
        now[0] += wait
    assert waits[:20] == [0.0] * 20  # half the burst goes at once
    assert now[0] >= (100 - 20) / 16 - 1e-9  # then 80% of 20 per second
    assert Pacer.from_limits({}) is None  # an old server advertises nothing: no pacing


async def test_a_token_from_disk_takes_the_seat_back_and_each_new_token_is_reported(fake) -> None:
    server, url = fake
    tokens: list[str] = []
    conn = Connection(
        url,
        "ann",
        on_message=lambda m: None,
        backoff=FAST,
        resume="token-1",
        on_token=lambda token, welcome: tokens.append(token),
    )
    await conn.start()
    try:
        assert server.hellos[0]["resume"] == "token-1"
        assert conn.resumed
        assert conn.resuming_from_disk
        assert tokens == ["token-1"]
        assert conn.resume_token == "token-1"
    finally:
        await conn.close()
