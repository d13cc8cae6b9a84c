"""Races always finish: a racer whose connection is gone past the grace is resigned as
abandoned, on a real server, across a kill -9 too; one back within the grace plays on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shared import deal_deck, new_game
from tests.server.wsclient import Client, greedy_moves
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a process

FAST = ["--rate", "1000", "--burst", "1000"]
SEED = "abandon"
MOVES = greedy_moves(new_game("quadrennial", deck=deal_deck("quadrennial", SEED)))


async def race(url: str, names: tuple[str, ...]) -> tuple[str, list[Client]]:
    clients = [await Client(url, n).open() for n in names]
    for client in clients:
        await client.hello()
    await clients[0].send(
        {"type": "create_room", "variant": "quadrennial", "seed": SEED, "countdown_ms": 0}
    )
    room = (await clients[0].expect("room"))["room"]["id"]
    for client in clients:
        await client.send({"type": "join", "room": room})
        await client.expect("joined")
    await clients[0].send({"type": "start"})
    for client in clients:
        await client.expect("started")
    return room, clients


def drop(client: Client) -> None:
    """The network goes: no close frame, the socket just ends."""
    assert client.ws is not None
    transport = client.ws.transport
    assert transport is not None
    transport.abort()


async def test_a_dropped_racer_is_resigned_after_the_grace_and_the_race_ends(
    tmp_path: Path,
) -> None:
    server = ServerProcess(
        log_path=tmp_path / "server.log", extra_args=[*FAST, "--abandon-grace-s", "1"]
    )
    server.start()
    clients: list[Client] = []
    try:
        room, clients = await race(server.url, ("ann", "bob"))
        ann, bob = clients
        assert (await ann.move(MOVES[0]))["type"] == "ack"
        drop(ann)
        away = await bob.expect(
            "room",
            lambda m: any(not p["connected"] for p in m["room"]["players"]),
        )
        gone = next(p for p in away["room"]["players"] if p["player"] == ann.session)
        assert gone["away_since"] is not None
        resigned = await bob.expect(
            "progress", lambda m: m["player"] == ann.session and m["status"] == "resigned"
        )
        assert resigned["finished_at"] - gone["away_since"] >= 1000
        await bob.send({"type": "resign"})
        finished = await bob.expect("finished")
        assert [r["status"] for r in finished["ranking"]] == ["resigned", "resigned"]
        watcher = await Client(server.url, "w").open()
        clients.append(watcher)
        await watcher.hello()
        await watcher.send({"type": "watch", "room": room, "player": ann.session})
        game = await watcher.expect("game", lambda m: m["player"] == ann.session)
        assert game["events"][-1] == {
            "type": "resigned",
            "v": 1,
            "at": game["events"][-1]["at"],
            "reason": "abandoned",
        }
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()


async def test_a_racer_back_within_the_grace_plays_on(tmp_path: Path) -> None:
    server = ServerProcess(
        log_path=tmp_path / "server.log", extra_args=[*FAST, "--abandon-grace-s", "3"]
    )
    server.start()
    clients: list[Client] = []
    try:
        room, clients = await race(server.url, ("ann", "bob"))
        ann, bob = clients
        token = ann.token
        drop(ann)
        await bob.expect("room", lambda m: any(not p["connected"] for p in m["room"]["players"]))
        back = await Client(server.url, "ann").open()
        clients.append(back)
        welcome = await back.hello(resume=token)
        assert (welcome["resumed"], welcome["room"]) == (True, room)
        await bob.expect("room", lambda m: all(p["connected"] for p in m["room"]["players"]))
        await asyncio.sleep(3.5)  # past the grace: nothing happens, she is here
        assert (await back.move(MOVES[0]))["type"] == "ack"
        progress = [m for m in bob.messages if m["type"] == "progress"]
        assert all(m["status"] != "resigned" for m in progress)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()


async def test_after_a_kill_9_a_racer_who_never_returns_is_resigned_a_grace_later(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    # The grace outlasts a restart on a loaded machine (2 s seen): bob must be back within it.
    args = [*FAST, "--abandon-grace-s", "6", "--heartbeat-s", "0.5"]
    server = ServerProcess(
        redis_url=fresh_redis.url, log_path=tmp_path / "server.log", extra_args=args
    )
    server.start()
    clients: list[Client] = []
    try:
        room, clients = await race(server.url, ("ann", "bob"))
        ann, bob = clients
        assert (await ann.move(MOVES[0]))["type"] == "ack"
        token = bob.token
        server.kill()
        await asyncio.gather(*(c.wait_closed() for c in clients))
        server.start()
        back = await Client(server.url, "bob").open()
        clients.append(back)
        assert (await back.hello(resume=token))["resumed"] is True
        # ann never comes back: once the dead process is seen silent, her grace runs out.
        resigned = await back.expect(
            "progress",
            lambda m: m["player"] == ann.session and m["status"] == "resigned",
            wait_s=30,
        )
        assert resigned["moves"] == 1
        assert (await back.move(MOVES[0]))["type"] == "ack"  # bob plays on
        await back.send({"type": "resign"})
        finished = await back.expect("finished")
        assert {r["player"] for r in finished["ranking"]} == {ann.session, bob.session}
        assert finished["room"] == room
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()
