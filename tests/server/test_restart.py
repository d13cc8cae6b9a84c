"""A real server on a private Redis: rooms load lazily after a restart and live rooms cost no
Redis connection each."""

from __future__ import annotations

import asyncio
from pathlib import Path

import redis.asyncio as aioredis

from shared import apply_move, deal_deck, new_game, public_fold, public_view
from tests.server.wsclient import Client, greedy_moves
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

FAST = ["--rate", "1000", "--burst", "1000"]


async def connected(url: str, name: str) -> Client:
    client = await Client(url, name).open()
    await client.hello()
    return client


async def server_connections(redis: RedisServer) -> int:
    raw = aioredis.Redis.from_url(redis.url)
    try:
        return sum(1 for c in await raw.client_list() if c.get("name") == "solitaire-arena")
    finally:
        await raw.aclose()


async def test_300_live_rooms_on_at_most_16_redis_connections(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    server = ServerProcess(
        redis_url=fresh_redis.url, log_path=tmp_path / "server.log", extra_args=FAST
    )
    server.start()
    clients: list[Client] = []
    try:

        async def open_room(n: int) -> Client:
            client = await connected(server.url, f"r{n}")
            await client.send(
                {"type": "create_room", "variant": "swiss", "capacity": 2, "countdown_ms": 0}
            )
            room = (await client.expect("room"))["room"]["id"]
            await client.send({"type": "join", "room": room})
            await client.expect("joined")
            await client.send({"type": "start"})
            await client.expect("started")
            return client

        for start in range(0, 300, 50):
            clients += await asyncio.gather(*(open_room(n) for n in range(start, start + 50)))
        lister = await connected(server.url, "lister")
        clients.append(lister)
        await lister.send({"type": "list_rooms"})
        rooms = (await lister.expect("rooms"))["rooms"]
        assert sum(1 for r in rooms if r["status"] == "racing") == 300
        count = await server_connections(fresh_redis)
        assert 1 <= count <= 16, f"{count} Redis connections for 300 live rooms"
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()


async def test_a_room_untouched_since_a_restart_answers_list_watch_and_resume(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    seed = "lazy-restart"
    deck = deal_deck("quadrennial", seed)
    moves = greedy_moves(new_game("quadrennial", deck=deck))[:12]
    server = ServerProcess(
        redis_url=fresh_redis.url, log_path=tmp_path / "server.log", extra_args=FAST
    )
    server.start()
    clients: list[Client] = []
    try:
        ann = await connected(server.url, "ann")
        bob = await connected(server.url, "bob")
        clients = [ann, bob]
        await ann.send(
            {"type": "create_room", "variant": "quadrennial", "seed": seed, "countdown_ms": 0}
        )
        racing = (await ann.expect("room"))["room"]["id"]
        await bob.send({"type": "create_room", "variant": "swiss"})
        lobby = (await bob.expect("room"))["room"]["id"]
        await ann.send({"type": "join", "room": racing})
        await ann.expect("joined")
        await ann.send({"type": "start"})
        await ann.expect("started")
        for version, move in enumerate(moves, start=2):
            assert (await ann.move(move))["version"] == version
        await bob.send({"type": "join", "room": lobby})
        await bob.expect("joined")
        token, session = ann.token, ann.session
        server.kill()
        await asyncio.gather(*(c.wait_closed() for c in clients))
        await asyncio.gather(*(c.close() for c in clients))

        server.start()  # nothing has touched either room since
        viewer = await connected(server.url, "viewer")
        clients = [viewer]
        await viewer.send({"type": "list_rooms"})
        listed = {r["id"]: r for r in (await viewer.expect("rooms"))["rooms"]}
        assert listed[racing]["status"] == "racing"
        assert listed[racing]["players"] == 1
        assert listed[lobby]["status"] == "lobby"
        assert listed[lobby]["players"] == 1
        await viewer.send({"type": "watch", "room": racing})
        snapshot = await viewer.expect("game", lambda m: m["version"] > 0)
        assert snapshot["version"] == len(moves) + 1
        state = new_game("quadrennial", deck=deck)
        for move in moves:
            state = apply_move(state, move)
        assert public_fold(snapshot["events"]) == public_view(state)

        back = await Client(server.url, "ann").open()
        clients.append(back)
        welcome = await back.hello(resume=token)
        assert (welcome["resumed"], welcome["room"], welcome["session"]) == (True, racing, session)
        assert (await back.expect("game"))["version"] == len(moves) + 1
        more = greedy_moves(state)[0]
        assert (await back.move(more, move_id="after-restart"))["version"] == len(moves) + 2
        await viewer.expect("game_event", lambda m: m["version"] == len(moves) + 2)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()
