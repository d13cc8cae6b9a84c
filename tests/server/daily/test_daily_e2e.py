"""The daily challenge through two real server processes on a real Redis, their clocks moved
(``ARENA_TEST_CLOCK_OFFSET_MS``) to just before a UTC midnight, so the test sees a day end: one
attempt per account on any process, nobody watching an attempt during the day, standings with
results only, then the seed revealed and checked against the commitment, and every frame that
reached anyone but the player scanned for the cards of the player's game."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from pathlib import Path
from typing import Any

import msgpack
import pytest

from server.kernel.days import day_end_ms
from shared import deal_deck
from shared.protocol import commitment_ok
from tests.server.wsclient import Client
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

pytestmark = pytest.mark.e2e  # every test here starts a process

FAST = ["--rate", "1000", "--burst", "1000"]
BEFORE_MIDNIGHT_MS = 9_000
"""How long before midnight (on the servers' clock) the servers start: starting them and the
accounts take a few seconds, the day's part two to three (at a load average of 5-7), then the
test waits out the rest."""
DAY_PART_MS = 4_000
"""What the day's part must have left before midnight once the servers and accounts are up; a
machine slower than that starts them again, as long before midnight as they took."""


async def ask(client: Client, msg: dict[str, Any], *answers: str) -> dict[str, Any]:
    ref = uuid.uuid4().hex[:8]
    await client.send({**msg, "ref": ref})
    async with asyncio.timeout(60):
        while True:
            for reply in list(client.unread):
                if reply.get("ref") == ref and reply["type"] in (*answers, "error"):
                    client.unread.remove(reply)
                    return reply
            client.arrived.clear()
            await client.arrived.wait()


async def connect(url: str, name: str, key: str | None = None) -> Client:
    client = await Client(url, name).open()
    msg: dict[str, Any] = {"type": "hello", "protocol": 1, "name": name}
    if key is not None:
        msg["key"] = key
    await client.send(msg)
    await client.expect("welcome")
    return client


async def register(url: str, name: str) -> str:
    client = await connect(url, name)
    try:
        answer = await ask(
            client, {"type": "register", "name": name, "password": "long password"}, "account"
        )
        return str(answer["key"])
    finally:
        await client.close()


def card_strings(deck: list[str]) -> list[bytes]:
    return [msgpack.packb(card) for card in deck]


@pytest.mark.parametrize("topology", ["redis", "cluster"])
@pytest.mark.long
async def test_one_attempt_a_day_fair_until_the_day_ends_then_revealed(
    topology: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if topology == "cluster":
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        url, extra = cluster.all_url, ["--redis-cluster"]
    else:
        redis: RedisServer = request.getfixturevalue("redis_server")
        url, extra = redis.url, []
    margin = BEFORE_MIDNIGHT_MS
    clients: list[Client] = []
    procs: list[ServerProcess] = []
    try:
        for attempt in range(3):
            now = time.time_ns() // 1_000_000
            midnight = day_end_ms(dt.datetime.now(dt.UTC).date())
            offset = midnight - margin - now
            monkeypatch.setenv("ARENA_TEST_CLOCK_OFFSET_MS", str(offset))
            prefix = f"t{uuid.uuid4().hex[:8]}:"
            procs = [
                ServerProcess(
                    redis_url=url,
                    log_path=tmp_path / f"{attempt}.{i}.log",
                    extra_args=[*FAST, "--redis-prefix", prefix, *extra],
                )
                for i in range(2)
            ]
            start_all(procs)
            one, two = (p.url for p in procs)
            ann_key, bob_key = await asyncio.gather(register(one, "ann"), register(two, "bob"))
            ann = await connect(one, "ann", ann_key)
            bob = await connect(two, "bob", bob_key)
            eve = await connect(two, "eve")
            ann_again = await connect(two, "ann", ann_key)
            clients += [ann, bob, eve, ann_again]
            left = midnight - (time.time_ns() // 1_000_000 + offset)
            if left >= DAY_PART_MS:
                break
            for client in clients:  # too slow a start here: again, earlier before midnight
                await client.close()
            for proc in procs:
                proc.stop()
            clients, procs = [], []
            margin += DAY_PART_MS - left
        else:
            pytest.fail(f"the servers and accounts took {margin} ms to start three times")

        started = await ask(ann, {"type": "daily", "variant": "swiss"}, "daily_started")
        assert started["type"] == "daily_started", started
        room = started["room"]
        day = started["date"]
        assert started["results_at"] == midnight
        await ann.expect("started")
        await ann.expect("game_event", lambda m: m["room"] == room)

        # A second attempt by the same account on the other process: refused.
        again = await ask(ann_again, {"type": "daily", "variant": "swiss"}, "daily_started")
        assert again["code"] == "daily_played"
        guest = await ask(eve, {"type": "daily"}, "daily_started")
        assert guest["code"] == "not_logged_in"

        bobs = await ask(bob, {"type": "daily", "variant": "swiss"}, "daily_started")
        assert bobs["commitment"] == started["commitment"]
        bob_room = bobs["room"]
        await bob.expect("started")

        # Nobody watches ann's attempt during the day.
        for role in ("spectator",):
            refused = await ask(eve, {"type": "join", "room": room, "role": role}, "joined")
            assert refused["code"] == "not_allowed"
        refused = await ask(eve, {"type": "watch", "room": room}, "game")
        assert refused["code"] == "not_allowed"

        await ann.send({"type": "resign"})
        finished = await ann.expect("finished", wait_s=15)
        assert finished["seed"] is None  # not before the day is over
        await bob.send({"type": "resign"})
        await bob.expect("finished", wait_s=15)

        during = await ask(eve, {"type": "daily_results", "variant": "swiss"}, "daily_standings")
        assert during["revealed"] is False
        assert during["seed"] is None
        assert during["commitment"] == started["commitment"]
        assert [r["status"] for r in during["rows"]] == ["resigned", "resigned"]
        assert all("room" not in r for r in during["rows"])
        mine = await ask(bob, {"type": "daily_results"}, "daily_standings")
        assert mine["me"]["name"] == "bob"

        # The day ends.
        left = midnight - (time.time_ns() // 1_000_000 + offset)
        assert left > 0, f"the day's part ended {-left} ms after midnight: start it earlier"
        await asyncio.sleep((left + 500) / 1000)
        after = await ask(
            eve, {"type": "daily_results", "variant": "swiss", "date": day}, "daily_standings"
        )
        assert after["revealed"] is True
        assert commitment_ok(after["seed"], after["salt"], started["commitment"])
        assert {r["room"] for r in after["rows"]} == {room, bob_room}
        joined = await ask(eve, {"type": "join", "room": room, "role": "spectator"}, "joined")
        assert joined["type"] == "joined"  # replayable now
        profile = await ask(ann, {"type": "profile"}, "player_card")
        assert profile["streaks"] == {"played": 1, "won": 0}

        # Every frame anyone but ann got during the day: no card of ann's game in it, except
        # bob's own game of the same deal (the standings carry no card).
        deck = deal_deck("swiss", after["seed"])
        packed = card_strings(deck)
        for client in (bob, eve, ann_again):
            for msg in client.messages:
                if msg["type"] == "joined" and client is eve:
                    break  # eve joined after the day: what follows may show it
                if client is bob and msg.get("room") == bob_room:
                    continue
                assert msg.get("room") != room, f"{client.name} got {msg['type']} of ann's room"
                raw = msgpack.packb(msg)
                for card in packed:
                    assert card not in raw, f"{client.name} got {card!r} in {msg['type']}"
        assert any(card in frame for frame in ann.frames for card in packed)  # ann saw hers
    finally:
        for client in clients:
            await client.close()
        for proc in procs:
            proc.stop()
