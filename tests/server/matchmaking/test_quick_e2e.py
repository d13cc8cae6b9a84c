"""Quick races through real server processes on a real Redis: a match across two processes,
leaving, disconnecting, and a player in a room who cannot queue."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from server.store import RedisEventStore
from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

FAST = ["--rate", "1000", "--burst", "1000", "--heartbeat-s", "1"]


@pytest.fixture
def servers(redis_server: RedisServer, tmp_path: Path) -> Iterator[tuple[ServerProcess, ...]]:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    procs = tuple(
        ServerProcess(
            redis_url=redis_server.url,
            log_path=tmp_path / f"{i}.log",
            extra_args=[*FAST, "--redis-prefix", prefix],
        )
        for i in range(2)
    )
    start_all(procs)
    yield procs
    for proc in procs:
        proc.stop()


@pytest.fixture
async def clients() -> AsyncIterator[list[Client]]:
    opened: list[Client] = []
    yield opened
    for client in opened:
        await client.close()


async def guest(url: str, name: str, opened: list[Client]) -> Client:
    client = await Client(url, name).open()
    opened.append(client)
    await client.hello()
    return client


async def ask(client: Client, msg: dict[str, Any], answer: str) -> dict[str, Any]:
    ref = uuid.uuid4().hex[:8]
    await client.send({**msg, "ref": ref})
    return await client.expect(answer, lambda m: m.get("ref") in (ref, None) or answer == "error")


async def test_two_guests_on_two_processes_are_matched_and_race(
    servers: tuple[ServerProcess, ...], clients: list[Client]
) -> None:
    one, two = servers
    a = await guest(one.url, "Ann", clients)
    b = await guest(two.url, "Bob", clients)
    queued = await ask(a, {"type": "quick", "variant": "swiss", "players": 2}, "queued")
    assert queued["rated"] is False
    assert queued["range"] == "any"
    assert queued["waiting"] >= 1
    await ask(b, {"type": "quick", "variant": "swiss"}, "queued")
    room_a = (await a.expect("matched", wait_s=15))["room"]
    room_b = (await b.expect("matched", wait_s=15))["room"]
    assert room_a == room_b
    joined = await a.expect("joined")
    assert joined["room"] == room_a
    assert joined["role"] == "player"
    await b.expect("joined")
    countdown = await a.expect("countdown", wait_s=15)
    assert countdown["room"] == room_a
    started = await b.expect("started", wait_s=15)
    assert started["commitment"]
    room = (await a.expect("room", lambda m: len(m["room"].get("players", [])) == 2))["room"]
    assert room["rated"] is False  # guests


async def test_leaving_and_disconnecting_leave_the_queue(
    servers: tuple[ServerProcess, ...], clients: list[Client], redis_server: RedisServer
) -> None:
    one, two = servers
    a = await guest(one.url, "Ann", clients)
    await ask(a, {"type": "quick", "players": 3}, "queued")
    again = await ask(a, {"type": "quick", "players": 3}, "error")
    assert again["code"] == "already_queued"
    left = await ask(a, {"type": "leave_queue"}, "left_queue")
    assert left["type"] == "left_queue"
    assert (await ask(a, {"type": "leave_queue"}, "error"))["code"] == "not_queued"

    b = await guest(two.url, "Bob", clients)
    await ask(b, {"type": "quick", "players": 3}, "queued")
    await b.close()
    # Neither is in the queue any more: two newcomers wait for a third, never matched.
    c = await guest(one.url, "Cy", clients)
    d = await guest(two.url, "Di", clients)
    await ask(c, {"type": "quick", "players": 3}, "queued")
    status = await ask(d, {"type": "quick", "players": 3}, "queued")
    assert status["waiting"] <= 2
    later = await d.expect("queued", lambda m: m.get("ref") is None and m["waited_ms"] >= 1500)
    assert later["waiting"] == 2
    assert not any(m["type"] == "matched" for m in c.messages + d.messages)


async def test_a_player_in_a_room_cannot_queue(
    servers: tuple[ServerProcess, ...], clients: list[Client]
) -> None:
    a = await guest(servers[0].url, "Ann", clients)
    room = await ask(a, {"type": "create_room", "variant": "swiss", "capacity": 2}, "room")
    await ask(a, {"type": "join", "room": room["room"]["id"]}, "joined")
    refused = await ask(a, {"type": "quick"}, "error")
    assert refused["code"] == "already_in_room"


async def test_queue_keys_share_one_slot(redis_server: RedisServer) -> None:
    """One hash tag per queue: both keys of a queue hash to one Cluster slot."""
    store = RedisEventStore(redis_server.url, prefix="x:")
    z, h = store.queues.keys("mm:swiss:2:rated")
    assert z.split("{")[1].split("}")[0] == h.split("{")[1].split("}")[0] == "mm:swiss:2:rated"
    await store.aclose()


async def test_an_account_in_a_live_race_cannot_queue_from_another_process(
    servers: tuple[ServerProcess, ...], clients: list[Client]
) -> None:
    one, two = servers
    a = await guest(one.url, "Ann", clients)
    account = await ask(
        a, {"type": "register", "name": "Ann", "password": "long password"}, "account"
    )
    room = await ask(a, {"type": "create_room", "variant": "swiss", "capacity": 2}, "room")
    await ask(a, {"type": "join", "room": room["room"]["id"]}, "joined")
    b = await Client(two.url, "Ann").open()
    clients.append(b)
    await b.send({"type": "hello", "protocol": 1, "name": "Ann", "key": account["key"]})
    assert (await b.expect("welcome"))["account"] == "Ann"
    refused = await ask(b, {"type": "quick"}, "error")
    assert refused["code"] == "already_in_room"
    await ask(a, {"type": "leave"}, "left")  # the lobby seat is freed: not racing any more
    queued = await ask(b, {"type": "quick"}, "queued")
    assert queued["rated"] is True


async def test_a_killed_process_takes_its_queued_players_out_of_the_queue(
    servers: tuple[ServerProcess, ...], clients: list[Client]
) -> None:
    one, two = servers
    a = await guest(one.url, "Ann", clients)
    await ask(a, {"type": "quick", "players": 3}, "queued")
    b = await guest(two.url, "Bob", clients)
    first = await ask(b, {"type": "quick", "players": 3}, "queued")
    assert first["waiting"] == 2
    one.kill()  # kill -9: no goodbye, its heartbeat stops (--heartbeat-s 1: gone after 3 s)
    alone = await b.expect(
        "queued", lambda m: m.get("ref") is None and m["waiting"] == 1, wait_s=20
    )
    assert alone["waited_ms"] >= 2000
    c = await guest(two.url, "Cy", clients)
    await ask(c, {"type": "quick", "players": 3}, "queued")
    later = await c.expect("queued", lambda m: m.get("ref") is None and m["waited_ms"] >= 1500)
    assert later["waiting"] == 2  # Bob and Cy: Ann is gone for good
    assert not any(m["type"] == "matched" for m in b.messages + c.messages)
