"""The causal-order checker on real processes (docs/protocol.md, "Causal order"): many races at
once on two servers sharing a Redis (and a Redis Cluster), each with a racer on either process,
spectators on both, a finished racer watching the other, some under a spectator delay and some
ended by the time limit. Every frame every connection received is checked: no ``finished``
before an event or ``progress`` it was decided from, no game event out of order."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import deal_deck, new_game, public_fold
from tests.server.causal import violations
from tests.server.wsclient import Client, greedy_moves
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

pytestmark = pytest.mark.e2e

RACES = 8
FAST = ["--rate", "1000", "--burst", "1000", "--tick-ms", "20"]


@pytest.fixture(params=["redis", "cluster"])
def servers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    prefix = f"c{uuid.uuid4().hex[:8]}:"
    if request.param == "redis":
        redis: RedisServer = request.getfixturevalue("redis_server")
        url, extra = redis.url, ["--redis-prefix", prefix]
    else:
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        url, extra = cluster.all_url, ["--redis-cluster", "--redis-prefix", prefix]
    made = [
        ServerProcess(redis_url=url, log_path=tmp_path / f"{n}.log", extra_args=[*FAST, *extra])
        for n in ("one", "two")
    ]
    start_all(made)
    yield made
    for server in made:
        assert server.stop() == 0


async def connected(url: str, name: str) -> Client:
    client = await Client(url, name).open()
    await client.hello()
    return client


async def play(racer: Client, moves: list[str]) -> None:
    """Moves until the race refuses them (it ended by the time limit) or they run out."""
    for move in moves:
        answer = await racer.move(move)
        if answer["type"] == "reject":
            assert answer["code"] == "not_racing"
            return


async def race(number: int, one: ServerProcess, two: ServerProcess) -> list[Client]:
    """One race: ann on one process, bob on the other, a spectator on each; ann resigns and
    watches bob. Every third race has a spectator delay, every fourth ends by its time limit."""
    rng = random.Random(number)
    seed = f"causal-{number}"
    moves = greedy_moves(new_game("quadrennial", deck=deal_deck("quadrennial", seed)))
    timed = number % 4 == 3
    settings: dict[str, Any] = {"variant": "quadrennial", "seed": seed, "countdown_ms": 0}
    if number % 3 == 2:
        settings["spectator_delay_ms"] = 300
    if timed:
        settings["time_limit_ms"] = 1500
    ann, near = await connected(one.url, "ann"), await connected(one.url, "near")
    bob, far = await connected(two.url, "bob"), await connected(two.url, "far")
    clients = [ann, bob, near, far]
    await ann.send({"type": "create_room", **settings})
    room = (await ann.expect("room"))["room"]["id"]
    for racer in (ann, bob):
        await racer.send({"type": "join", "room": room})
        await racer.expect("joined")
    for spectator in (near, far):
        await spectator.send({"type": "join", "room": room, "role": "spectator"})
        await spectator.expect("joined")
    await (bob if number % 2 else ann).send({"type": "start"})
    for client in clients:
        await client.expect("started")
    ann_moves = moves[: rng.randrange(3, 25)]
    bob_moves = moves[: 10_000 if timed else rng.randrange(3, 25)]
    if timed:
        await asyncio.gather(play(ann, ann_moves), play(bob, bob_moves))
    else:
        await play(ann, ann_moves)
        await ann.send({"type": "resign"})
        await ann.expect("game_event", lambda m: m["event"]["type"] == "resigned")
        await ann.send({"type": "watch", "player": bob.session})  # a finished racer watches
        await play(bob, bob_moves)
        await bob.send({"type": "resign"})
    for client in clients:
        await client.expect("finished", wait_s=15)
    return clients


async def test_every_frame_on_both_processes_is_in_causal_order(
    servers: list[ServerProcess],
) -> None:
    one, two = servers
    clients: list[Client] = []
    try:
        played = await asyncio.gather(
            *(race(n, *((one, two) if n % 2 else (two, one))) for n in range(RACES))
        )
        for racers in played:
            clients.extend(racers)
            ann, bob, near, far = racers
            for client in racers:
                assert violations(client.messages) == [], client.name
            for player in (ann, bob):
                own = public_fold(player.game_events(player.session))
                for viewer in (near, far):  # what the end said, each saw: the same games
                    assert public_fold(viewer.game_events(player.session)) == own
    finally:
        await asyncio.gather(*(c.close() for c in clients))
