"""Bad input of every kind gets its error code, appends nothing, and the rest are still served."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from shared import deal_deck, legal_moves, new_game
from tests.server.wsclient import Client, assert_no_secrets
from tests.support.server_process import ServerProcess

SEED = "bad-input-seed"
DECK = deal_deck("quadrennial", SEED)
FRAME_LIMIT = 4096


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("bad-input") / "server.log"
    process = ServerProcess(
        log_path=log,
        extra_args=[
            "--rate", "30",
            "--burst", "30",
            "--flood-limit", "15",
            "--max-frame-bytes", str(FRAME_LIMIT),
            "--max-players-per-room", "4",
            "--max-spectators-per-room", "2",
        ],
    )  # fmt: skip
    process.start()
    yield process
    assert process.stop() == 0


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[Client]:
    c = await Client(server.url, "bad").open()
    await c.hello()
    yield c
    await c.close()


async def error_for(client: Client, data: bytes | str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(data, dict):
        data = msgpack.packb(data)
    await client.send_raw(data)
    return await client.expect("error")


async def still_served(client: Client) -> None:
    await client.send({"type": "ping", "ref": "alive"})
    assert (await client.expect("pong"))["ref"] == "alive"


async def racing_room(server: ServerProcess, names: tuple[str, ...]) -> tuple[str, list[Client]]:
    racers = [await Client(server.url, n).open() for n in names]
    for racer in racers:
        await racer.hello()
    await racers[0].send(
        {
            "type": "create_room",
            "variant": "quadrennial",
            "seed": SEED,
            "capacity": len(names),
            "countdown_ms": 0,
        }
    )
    room = (await racers[0].expect("room"))["room"]["id"]
    for racer in racers:
        await racer.send({"type": "join", "room": room})
        await racer.expect("joined")
    await racers[0].send({"type": "start"})
    for racer in racers:
        await racer.expect("started")
        await racer.expect("game_event", lambda m, r=racer: m["player"] == r.session)
    return room, racers


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("a text frame", "bad_frame"),
        (b"\xc1\xc1 not msgpack", "bad_frame"),
        (msgpack.packb([1, 2, 3]), "bad_frame"),
        (msgpack.packb({"no": "type"}), "bad_frame"),
        ({"type": "teleport"}, "unknown_type"),
        ({"type": ["ping"]}, "bad_frame"),
        ({"type": {"ping": 1}}, "bad_frame"),
        ({"type": "ack", "id": 1, "version": 2}, "unknown_type"),
        ({"type": "join"}, "bad_field"),
        ({"type": "join", "room": 7}, "bad_field"),
        ({"type": "create_room", "variant": "klondike"}, "bad_field"),
        ({"type": "create_room", "variant": "swiss", "capacity": 5}, "bad_field"),
        ({"type": "create_room", "variant": "swiss", "deck": DECK}, "custom_deck_disabled"),
        ({"type": "join", "room": "nosuchroom"}, "no_such_room"),
        ({"type": "hello", "protocol": 1}, "already_hello"),
        ({"type": "start"}, "not_a_player"),
        ({"type": "leave"}, "not_in_room"),
        ({"type": "watch"}, "not_in_room"),
    ],
)
async def test_bad_messages_get_their_code(client: Client, data: Any, code: str) -> None:
    assert (await error_for(client, data))["code"] == code
    await still_served(client)


async def test_error_echoes_the_ref(client: Client) -> None:
    error = await error_for(client, {"type": "join", "room": "nosuchroom", "ref": 42})
    assert error["ref"] == 42


async def test_answers_never_echo_what_the_protocol_forbids(client: Client) -> None:
    """Every frame the test client gets is decoded with the protocol checks, so these would fail."""
    error = await error_for(client, {"type": "join", "room": "r", "ref": "x" * 100})
    assert (error["code"], error.get("ref")) == ("bad_field", None)
    error = await error_for(client, {"type": "move", "id": -5, "move": "d"})
    assert (error["code"], error.get("ref")) == ("bad_field", None)
    await still_served(client)


async def test_messages_before_hello(server: ServerProcess) -> None:
    """Any client message before hello is error hello_required with its ref, whatever its
    fields (docs/protocol.md, Handshake); nothing else is answered or done."""
    c = await Client(server.url).open()
    try:
        before = [
            {"type": "list_rooms"},
            {"type": "create_room", "ref": 1},
            {"type": "join", "ref": "j"},
            {"type": "ping", "ref": ""},
            {"type": "move", "id": 1, "move": "d", "ref": 2},
            {"type": "move", "ref": 3},
            {"type": "watch", "room": 5},
        ]
        for msg in before:
            error = await error_for(c, msg)
            assert (error["code"], error["ref"]) == ("hello_required", msg.get("ref"))
        assert [m["type"] for m in c.messages] == ["error"] * len(before)
        assert (await error_for(c, {"type": "ack", "id": 1, "version": 1}))["code"] == (
            "unknown_type"
        )
        await c.send_raw("text")
        assert (await c.expect("error"))["ref"] is None  # present, and nil
        for odd in ({"type": ["ping"]}, {"type": {"ping": 1}, "ref": 4}):  # unhashable types
            error = await error_for(c, odd)
            assert (error["code"], error.get("ref")) == ("bad_frame", odd.get("ref"))
        await c.hello()
        await c.send({"type": "ping", "ref": ""})
        assert (await c.expect("pong"))["ref"] == ""
        await still_served(c)
    finally:
        await c.close()


async def test_unsupported_protocol_closes_4000(server: ServerProcess) -> None:
    c = await Client(server.url).open()
    error = await error_for(c, {"type": "hello", "protocol": 99})
    assert error["code"] == "unsupported_protocol"
    assert await c.wait_closed() == 4000


async def test_oversize_frame_closes_1009_and_others_go_on(
    server: ServerProcess, client: Client
) -> None:
    big = await Client(server.url).open()
    await big.hello()
    await big.send({"type": "ping", "ref": "x" * 10})
    await big.expect("pong")
    await big.send_raw(msgpack.packb({"type": "ping", "pad": "x" * (FRAME_LIMIT + 10)}))
    assert await big.wait_closed() == 1009
    await still_served(client)


async def test_room_full_and_too_many_spectators(server: ServerProcess, client: Client) -> None:
    await client.send({"type": "create_room", "variant": "swiss", "capacity": 1})
    room = (await client.expect("room"))["room"]["id"]
    await client.send({"type": "join", "room": room})
    await client.expect("joined")
    others = [await Client(server.url, f"o{i}").open() for i in range(4)]
    try:
        for other in others:
            await other.hello()
        assert (await error_for(others[0], {"type": "join", "room": room}))["code"] == "room_full"
        for spectator in others[1:3]:
            await spectator.send({"type": "join", "room": room, "role": "spectator"})
            await spectator.expect("joined")
        error = await error_for(others[3], {"type": "join", "room": room, "role": "spectator"})
        assert error["code"] == "too_many_spectators"
        assert (await error_for(client, {"type": "join", "room": room}))[
            "code"
        ] == "already_in_room"
    finally:
        await asyncio.gather(*(o.close() for o in others))


async def test_bad_moves_are_rejected_and_append_nothing(server: ServerProcess) -> None:
    room, (ann, bob) = await racing_room(server, ("ann", "bob"))
    spectator = await Client(server.url, "spec").open()
    try:
        await spectator.hello()
        await spectator.send({"type": "join", "room": room, "role": "spectator"})
        await spectator.expect("joined")
        state = new_game("quadrennial", deck=DECK)
        legal = sorted(legal_moves(state))
        illegal = "r1r2"
        other = bob.session
        cases = [
            (ann, {"type": "move", "id": 1, "move": illegal}, "illegal_move"),
            (ann, {"type": "move", "id": 2, "move": "zz9"}, "illegal_move"),
            (ann, {"type": "move", "id": 3, "move": legal[0], "player": other}, "not_your_game"),
            (spectator, {"type": "move", "id": 4, "move": legal[0]}, "not_a_player"),
            (ann, {"type": "move", "id": 5, "move": 17}, "bad_field"),
        ]  # fmt: skip
        for who, msg, code in cases:
            await who.send_raw(msgpack.packb(msg))
            answer = await who.answer(msg["id"])
            assert answer["type"] == "reject"
            assert answer["code"] == code
            assert answer["reason"]
        # The same id and move again get the same answer; the same id for another move is
        # id_reused, and nothing is appended; a new legal move lands at version 2.
        await ann.send({"type": "move", "id": 1, "move": illegal})
        assert (await ann.answer(1))["code"] == "illegal_move"
        await ann.send({"type": "move", "id": 1, "move": legal[0]})
        assert (await ann.answer(1))["code"] == "id_reused"
        assert await ann.move(legal[0], 10) == {"type": "ack", "id": 10, "version": 2}
        assert await ann.move(legal[0], 10) == {"type": "ack", "id": 10, "version": 2}
        await ann.send({"type": "move", "id": 10, "move": legal[1]})
        reused = await ann.answer(10)
        assert (reused["type"], reused["code"]) == ("reject", "id_reused")
        assert await bob.move(legal[0], 10) == {"type": "ack", "id": 10, "version": 2}
        error = await error_for(ann, {"type": "watch", "player": bob.session})
        assert error["code"] == "not_allowed"
        await ann.send({"type": "resign"})
        await ann.expect("progress", lambda m: m["player"] == ann.session and m["moves"] == 1)
        await ann.expect("progress", lambda m: m["status"] == "resigned")
        await ann.send({"type": "move", "id": 11, "move": "d"})
        assert (await ann.answer(11))["code"] == "game_over"
        # Once finished, a racer may watch the others.
        await ann.send({"type": "watch", "player": bob.session})
        game = await ann.expect("game", lambda m: m["player"] == bob.session)
        assert game["version"] == 2
        assert (await error_for(ann, {"type": "resign"}))["code"] == "game_over"
        assert_no_secrets([ann, bob, spectator], "quadrennial", DECK, SEED)
    finally:
        await asyncio.gather(ann.close(), bob.close(), spectator.close())


async def test_move_before_the_race_is_not_racing(client: Client) -> None:
    await client.send({"type": "create_room", "variant": "swiss", "capacity": 2})
    room = (await client.expect("room"))["room"]["id"]
    await client.send({"type": "join", "room": room})
    await client.expect("joined")
    await client.send({"type": "move", "id": "a", "move": "d"})
    assert (await client.answer("a"))["code"] == "not_racing"


async def test_flood_past_the_rate_limit(server: ServerProcess, client: Client) -> None:
    flooder = await Client(server.url, "flood").open()
    await flooder.hello()
    frame = msgpack.packb({"type": "ping"})
    for _ in range(200):
        try:
            await flooder.send_raw(frame)
        except Exception:
            break
    assert await flooder.wait_closed() == 4008
    codes = [m["code"] for m in flooder.messages if m["type"] == "error"]
    assert codes
    assert set(codes) == {"rate_limited"}
    await still_served(client)


@pytest.mark.e2e
async def test_slow_reader_is_dropped_not_waited_for(tmp_path: Path) -> None:
    """A client that stops reading is cut off once its outbound buffer passes the limit."""
    log = tmp_path / "server.log"
    server = ServerProcess(
        log_path=log,
        extra_args=[
            *("--max-outbound-bytes", "20000", "--rate", "100000", "--burst", "100000"),
            *("--max-lobbies-per-session", "1000"),
        ],
    )
    server.start()
    # A small receive buffer of our own: left to autotuning, the kernel's buffers on loopback
    # (up to 32 MiB here) could swallow every answer this test asks for, and the server's own
    # limit would never be reached (a flaky failure).
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    try:
        async with connect(
            server.url, sock=sock, max_size=None, compression=None, max_queue=1, close_timeout=1
        ) as ws:
            await ws.send(msgpack.packb({"type": "hello", "protocol": 1}))
            for _ in range(100):
                await ws.send(msgpack.packb({"type": "create_room", "variant": "swiss"}))
            # The hundred rooms exist before the flood (read, so a failure says so), so that
            # every answer to it is big.
            created = 0
            while created < 100:
                answer = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 30))
                assert answer["type"] != "error", answer
                created += answer["type"] == "room"
            # Ask for big answers (~10 kB each) and never read them: kernel buffers fill, then ours.
            request = msgpack.packb({"type": "list_rooms"})
            for _ in range(5000):
                try:
                    await ws.send(request)
                except ConnectionClosed:
                    break
                if b"slow_consumer_dropped" in log.read_bytes():
                    break
            for _ in range(300):
                if b"slow_consumer_dropped" in log.read_bytes():
                    break
                await asyncio.sleep(0.1)
            assert b"slow_consumer_dropped" in log.read_bytes(), log.read_text()[-3000:]
        c = await Client(server.url).open()
        await c.hello()
        await still_served(c)
        await c.close()
    finally:
        assert server.stop() == 0
