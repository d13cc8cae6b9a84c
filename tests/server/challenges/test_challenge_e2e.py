"""A challenge through two real server processes on a real Redis (and a Redis Cluster): made on
one, played on both, hidden from a reader who has not played, settled once everyone invited has
played (whichever process saw the last game end), its seed checked, and rated once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from shared.protocol import commitment_ok
from tests.server.daily.test_daily_e2e import FAST, ask, connect, register
from tests.server.wsclient import Client
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a process


async def play_and_resign(client: Client, code: str) -> str:
    started = await ask(client, {"type": "challenge_play", "challenge": code}, "challenge_started")
    assert started["type"] == "challenge_started", started
    await client.expect("started")
    await client.send({"type": "resign"})
    await client.expect("finished", lambda m: m["room"] == started["room"], wait_s=15)
    return str(started["room"])


@pytest.mark.parametrize("topology", ["redis", "cluster"])
async def test_a_challenge_across_two_processes(
    topology: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if topology == "cluster":
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        url, extra = cluster.all_url, ["--redis-cluster"]
    else:
        redis: RedisServer = request.getfixturevalue("redis_server")
        url, extra = redis.url, []
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    procs = [
        ServerProcess(
            redis_url=url,
            log_path=tmp_path / f"{i}.log",
            extra_args=[*FAST, "--redis-prefix", prefix, *extra],
        )
        for i in range(2)
    ]
    for proc in procs:
        proc.start()
    clients: list[Client] = []
    try:
        one, two = (p.url for p in procs)
        keys = await asyncio.gather(*(register(one, n) for n in ("ann", "bob", "eve")))
        ann = await connect(one, "ann", keys[0])
        bob = await connect(two, "bob", keys[1])
        eve = await connect(two, "eve", keys[2])
        clients += [ann, bob, eve]

        made = await ask(ann, {"type": "challenge_create", "to": ["bob"]}, "challenge")
        code = made["code"]
        bob_room = await play_and_resign(bob, code)  # on the other process
        again = await ask(bob, {"type": "challenge_play", "challenge": code}, "challenge_started")
        assert again["code"] in ("challenge_played", "already_in_room")
        refused = await ask(eve, {"type": "join", "room": bob_room, "role": "spectator"}, "joined")
        assert refused["code"] == "not_allowed"
        shown = await ask(eve, {"type": "challenge_show", "challenge": code}, "challenge")
        assert (shown["visible"], shown["rows"], shown["seed"]) == (False, [], None)
        mine = await ask(bob, {"type": "challenge_show", "challenge": code}, "challenge")
        assert [r["name"] for r in mine["rows"]] == ["bob"]  # he played: he sees his own

        ann_room = await play_and_resign(ann, code)
        async with asyncio.timeout(30):
            while True:
                after = await ask(eve, {"type": "challenge_show", "challenge": code}, "challenge")
                assert after["type"] == "challenge", after
                if after["status"] == "settled":
                    break
                await asyncio.sleep(0.25)  # well inside the request rate limit
        assert commitment_ok(after["seed"], after["salt"], made["commitment"])
        assert {r["room"] for r in after["rows"]} == {ann_room, bob_room}
        joined = await ask(eve, {"type": "join", "room": bob_room, "role": "spectator"}, "joined")
        assert joined["type"] == "joined"
        for client in (ann, bob):
            card = await ask(client, {"type": "profile"}, "player_card")
            assert [r["room"] for r in card["recent"]] == [code]  # rated once, against each other
    finally:
        for client in clients:
            await client.close()
        for proc in procs:
            proc.stop()
