"""40 logged-in bots of mixed ratings queue on two server processes at once, on a real Redis and
on a real Redis Cluster, some leaving or disconnecting midway: every formed room has N distinct
players, nobody is placed twice, nobody who left is seated, every group's rating spread is
within the documented range of each member, and whoever is still queued at the end leaves
cleanly, leaving the queues empty."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import pytest

from server.accounts.services.ratings import leaderboard_index
from server.matchmaking.domain.queues import GAP_EVERY_MS, allowed_gap, queue_key
from server.race.domain.events import PlayerJoined, RoomCreated, decode
from server.race.domain.model import room_stream
from server.store import EventStore, RedisEventStore
from tests.server.wsclient import Client
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

pytestmark = pytest.mark.e2e  # every test here starts a process

BOTS = 40
FAST = ["--rate", "1000", "--burst", "1000", "--heartbeat-s", "1"]
AUTH = ["--auth-attempts-per-address", "1000", "--auth-attempts-per-name", "100"]
PASSWORD = "a long enough password"


@dataclass
class Bot:
    name: str
    rating: int
    players: int
    client: Client
    plan: str  # "stay", "leave" (leave_queue) or "close" (disconnect)
    sent: float = 0.0
    matched: list[tuple[float, str]] = field(default_factory=list)
    left: bool = False  # leave_queue answered left_queue: out of the queue, never placed
    closed: bool = False


async def ask(
    client: Client, msg: dict[str, Any], *answers: str, wait_s: float = 20
) -> dict[str, Any]:
    ref = uuid.uuid4().hex[:8]
    await client.send({**msg, "ref": ref})
    async with asyncio.timeout(wait_s):
        while True:
            for reply in list(client.unread):
                if reply.get("ref") == ref and reply["type"] in (*answers, "error"):
                    client.unread.remove(reply)
                    return reply
            client.arrived.clear()
            await client.arrived.wait()


async def account(url: str, name: str, gate: asyncio.Semaphore) -> str:
    """A registered account's key (Argon2id at 64 MiB: a few at a time on a small machine)."""
    async with gate:
        client = await Client(url, name).open()
        try:
            await client.hello()
            answer = await ask(
                client,
                {"type": "register", "name": name, "password": PASSWORD},
                "account",
                wait_s=120,
            )
            assert answer["type"] == "account", answer
            return str(answer["key"])
        finally:
            await client.close()


async def plant_rating(store: EventStore, name: str, rating: int) -> None:
    """The leaderboard row matchmaking reads a rating from, as ratings would write it."""
    row = {
        "account": name.casefold(),
        "name": name,
        "rating": rating,
        "provisional": False,
        "games": 20,
        "wins": 10,
    }
    await store.index_put(leaderboard_index("swiss"), name.casefold(), -rating, msgpack.packb(row))


def settled(bot: Bot) -> bool:
    """Out of the queue: left it, closed its connection, or matched."""
    return bot.closed or bot.left or any(m["type"] == "matched" for m in bot.client.messages)


async def run_bots(urls: list[str], store: EventStore) -> None:
    rng = random.Random(25)
    names = [f"bot{i:02d}" for i in range(BOTS)]
    gate = asyncio.Semaphore(4)
    keys = await asyncio.gather(*(account(urls[i % 2], n, gate) for i, n in enumerate(names)))
    bots: list[Bot] = []
    for i, (name, key) in enumerate(zip(names, keys, strict=True)):
        rating = 1200 + rng.randrange(0, 700)
        await plant_rating(store, name, rating)
        client = await Client(urls[i % 2], name).open()
        await client.send({"type": "hello", "protocol": 1, "name": name, "key": key})
        welcome = await client.expect("welcome")
        assert welcome["account"] == name
        client.session = welcome["session"]
        plan = "leave" if i % 7 == 3 else "close" if i % 11 == 5 else "stay"
        bots.append(Bot(name, rating, 3 if i % 4 == 0 else 2, client, plan))

    async def queue(bot: Bot) -> None:
        await asyncio.sleep(rng.random() * 2)
        bot.sent = time.monotonic()
        answer = await ask(
            bot.client, {"type": "quick", "variant": "swiss", "players": bot.players}, "queued"
        )
        assert answer["type"] == "queued", answer
        if bot.plan == "leave":
            await asyncio.sleep(rng.random() * 1.5)
            reply = await ask(bot.client, {"type": "leave_queue"}, "left_queue")
            bot.left = reply["type"] == "left_queue"
            assert bot.left or reply["code"] == "not_queued"  # matched first
        elif bot.plan == "close":
            await asyncio.sleep(rng.random() * 1.5)
            bot.closed = True
            await bot.client.close()

    await asyncio.gather(*(queue(b) for b in bots))
    # Until everyone still queued has been matched, or has waited past the range's second
    # widening; whoever still waits then leaves, cleanly.
    widened = max(b.sent for b in bots) + 2 * GAP_EVERY_MS / 1000 + 0.5
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(0.0, widened - time.monotonic())):
            for bot in bots:
                while not settled(bot):
                    bot.client.arrived.clear()
                    await bot.client.arrived.wait()
    for bot in bots:
        if bot.closed or bot.left:
            continue
        if not any(m["type"] == "matched" for m in bot.client.messages):
            reply = await ask(bot.client, {"type": "leave_queue"}, "left_queue")
            if reply["type"] == "left_queue":
                bot.left = True
            else:
                assert reply["code"] == "not_queued"
                await bot.client.expect("matched")
    await asyncio.sleep(1)
    for bot in bots:
        matched = [m for m in bot.client.messages if m["type"] == "matched"]
        bot.matched = [(0.0, m["room"]) for m in matched]
        assert len(matched) <= 1, f"{bot.name} was placed twice"
        arrival = next((t for t, m in bot.client.timed if m["type"] == "matched"), None)
        if arrival is not None:
            bot.matched = [(arrival, matched[0]["room"])]

    by_name = {b.name: b for b in bots}
    by_session = {b.client.session: b for b in bots}
    rooms: dict[str, list[Bot]] = {}
    for bot in bots:
        for _, room in bot.matched:
            rooms.setdefault(room, []).append(bot)
    assert len(rooms) >= 5, f"only {len(rooms)} rooms formed"
    assert any(b.left for b in bots if b.plan == "leave"), "nobody left midway"
    seated_anywhere: list[str] = []
    for room_id, placed in rooms.items():
        events = [decode(e.data) for e in await store.read(room_stream(room_id))]
        created = next(e for e in events if isinstance(e, RoomCreated))
        seated = [e.account for e in events if isinstance(e, PlayerJoined)]
        seated_anywhere += [s for s in seated if s is not None]
        assert created.rated
        members = [by_session[m] for m in created.members]
        assert len(members) == created.capacity
        assert {b.players for b in members} == {created.capacity}
        assert len({b.name for b in members}) == len(members)
        # Every member is told, but one whose connection closed after the room took them.
        assert {b.name for b in placed} <= {b.name for b in members}
        missing = [b.name for b in members if b not in placed]
        assert all(by_name[n].closed for n in missing), (room_id, missing)
        assert set(seated) <= {b.name for b in placed}
        spread = max(b.rating for b in members) - min(b.rating for b in members)
        for bot in placed:
            # The server counts whole milliseconds of its wall clock (joined and formed, each
            # rounded down), the test a monotonic clock, and loopback takes well under one: a
            # wait the server counted as a range step's first millisecond can measure a
            # fraction short of it here. One millisecond of slack is that rounding, no more.
            waited_ms = int((bot.matched[0][0] - bot.sent) * 1000) + 1
            assert spread <= allowed_gap(waited_ms), (room_id, bot.name, spread, waited_ms)
    assert len(seated_anywhere) == len(set(seated_anywhere)), "someone seated twice"
    for name in seated_anywhere:
        assert not by_name[name].left, f"{name} left the queue and was seated"
    for players in (2, 3):
        key = queue_key("swiss", players, rated=True)
        assert await store.queue_entries(key.name) == [], "someone is still queued"
    for bot in bots:
        await bot.client.close()


def _servers(url: str, prefix: str, tmp_path: Path, *extra: str) -> list[ServerProcess]:
    return [
        ServerProcess(
            redis_url=url,
            log_path=tmp_path / f"{i}.log",
            # People only: no server-side bot takes the seat of one who waited long.
            extra_args=[*FAST, *AUTH, "--redis-prefix", prefix, "--quick-bot-after-s", "0", *extra],
        )
        for i in range(2)
    ]


@pytest.mark.parametrize("topology", ["redis", "cluster"])
@pytest.mark.long
async def test_forty_bots_on_two_processes(
    topology: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    if topology == "cluster":
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        procs = _servers(cluster.all_url, prefix, tmp_path, "--redis-cluster")
        store = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    else:
        redis: RedisServer = request.getfixturevalue("redis_server")
        procs = _servers(redis.url, prefix, tmp_path)
        store = RedisEventStore(redis.url, prefix=prefix)
    start_all(procs)
    try:
        await run_bots([p.url for p in procs], store)
    finally:
        for proc in procs:
            proc.stop()
        await store.aclose()
