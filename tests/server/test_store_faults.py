"""The network between the server and Redis goes bad (tests/support/tcp_proxy.py): latency, cut
connections, a partition. Every move is answered, acked or refused with `server_error`; an
acked move is in its stream exactly once, in the order acked, and a refused one, sent again
under its id, is never applied twice. /healthz says the store is unreachable while it is, and
play resumes when the link does (docs/operations.md, "When the store's network fails")."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from server.store import open_store
from shared import apply_move, legal_moves, new_game
from shared.state import GameState
from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e  # a real server process and a real Redis behind a real proxy


@dataclass
class Arena:
    server: ServerProcess
    proxy: TcpProxy
    redis_url: str  # Redis itself, not through the proxy: the truth afterwards
    prefix: str


@pytest.fixture
def arena(redis_server: RedisServer, tmp_path: Path) -> Iterator[Arena]:
    prefix = f"f{uuid.uuid4().hex[:8]}:"
    with TcpProxy(redis_server.port) as proxy:
        server = ServerProcess(
            redis_url=f"redis://127.0.0.1:{proxy.port}/0",
            log_path=tmp_path / "server.log",
            extra_args=["--redis-prefix", prefix, "--rate", "1000", "--burst", "1000"],
        )
        server.start()
        try:
            yield Arena(server, proxy, redis_server.url, prefix)
        finally:
            server.stop()


@dataclass
class Racer:
    """A solo racer that keeps every move it sent until it is acked, as the real clients do:
    a refused move is sent again under the same id."""

    client: Client
    room: str
    player: str
    state: GameState
    acked: list[tuple[int, str]] = field(default_factory=list)  # (id, move), in ack order
    refused: int = 0

    async def play(self, rng: random.Random, *, after_send: Any = None) -> None:
        """One legal move, sent until acked."""
        move = rng.choice(sorted(legal_moves(self.state)))
        self.client.next_id += 1
        move_id = self.client.next_id
        for _attempt in range(40):
            await self.client.send({"type": "move", "id": move_id, "move": move})
            if after_send is not None:
                await asyncio.to_thread(after_send)
            answer = await self.client.answer(move_id)
            if answer["type"] == "ack":
                self.acked.append((move_id, move))
                self.state = apply_move(self.state, move)
                return
            assert answer["code"] == "server_error", answer
            self.refused += 1
            await asyncio.sleep(0.1)
        raise AssertionError(f"move {move_id} was never acked")


async def solo(url: str, seed: int) -> Racer:
    client = await Client(url, "solo").open()
    await client.hello()
    await client.send(
        {"type": "create_room", "variant": "swiss", "seed": seed, "capacity": 1, "ref": 1}
    )
    room = (await client.expect("room", lambda m: m.get("ref") == 1))["room"]["id"]
    await client.send({"type": "join", "room": room, "role": "player"})
    player = (await client.expect("joined"))["player"]
    await client.send({"type": "start"})
    await client.expect("started")
    return Racer(client, room, player, new_game("swiss", seed=seed))


async def assert_stream_holds_exactly(arena: Arena, racer: Racer) -> None:
    """The game's stream, read from Redis directly: every acked move once, in ack order."""
    store = open_store(arena.redis_url, prefix=arena.prefix)
    try:
        events = await store.read(f"{{{racer.room}}}:game:{racer.player}")
    finally:
        await store.aclose()
    stored = [(e.data["cid"], e.data["move"]) for e in events if e.data["type"] == "moved"]
    assert stored == racer.acked


def health(arena: Arena) -> tuple[int, dict[str, Any]]:
    url = f"http://127.0.0.1:{arena.server.port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def wait_health(arena: Arena, status: int) -> dict[str, Any]:
    for _ in range(200):
        code, body = await asyncio.to_thread(health, arena)
        if code == status:
            return body
        await asyncio.sleep(0.1)
    raise AssertionError(f"/healthz never answered {status}")


@pytest.fixture
async def racer(arena: Arena) -> AsyncIterator[Racer]:
    racer = await solo(arena.server.url, seed=7)
    yield racer
    await racer.client.close()


async def test_latency_and_cut_connections_lose_no_move_and_apply_none_twice(
    arena: Arena, racer: Racer
) -> None:
    rng = random.Random(1)
    arena.proxy.latency = 0.02
    connections = arena.proxy.connections
    for turn in range(24):
        if not legal_moves(racer.state):
            break
        # Every third move, the store's connections are cut while its append is under way.
        await racer.play(rng, after_send=arena.proxy.drop if turn % 3 == 0 else None)
    assert len(racer.acked) >= 8
    assert arena.proxy.connections > connections  # the cut links were made again
    await assert_stream_holds_exactly(arena, racer)


async def test_a_partition_refuses_moves_healthz_says_so_and_play_resumes(
    arena: Arena, racer: Racer
) -> None:
    rng = random.Random(2)
    await racer.play(rng)
    await asyncio.to_thread(arena.proxy.partition)
    assert await wait_health(arena, 503) == {"status": "unavailable", "store": False}
    move = sorted(legal_moves(racer.state))[0]
    await racer.client.send({"type": "move", "id": 100, "move": move})
    # Refused once the store's connection attempt times out (redis-py's 5 s): late, not lost.
    refused = await racer.client.expect("reject", lambda m: m.get("id") == 100, wait_s=30)
    assert (refused["type"], refused["code"]) == ("reject", "server_error")
    await asyncio.to_thread(arena.proxy.heal)
    assert await wait_health(arena, 200) == {"status": "ok", "store": True}
    # The refused move, sent again under its id as a client does: applied once.
    assert (await racer.client.move(move, 100))["type"] == "ack"
    racer.acked.append((100, move))
    racer.state = apply_move(racer.state, move)
    racer.client.next_id = 100
    for _ in range(5):
        if legal_moves(racer.state):
            await racer.play(rng)
    await assert_stream_holds_exactly(arena, racer)


async def test_a_spectator_on_another_process_misses_nothing_through_cut_links(
    arena: Arena, racer: Racer, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Its process follows the room by wake-ups over its own link to Redis; each cut loses the
    wake-ups in flight, which the process must make up from the streams."""
    with TcpProxy(redis_server.port) as link:
        other = ServerProcess(
            redis_url=f"redis://127.0.0.1:{link.port}/0",
            log_path=tmp_path / "other.log",
            extra_args=["--redis-prefix", arena.prefix],
        )
        other.start()
        spectator = await Client(other.url, "spectator").open()
        try:
            await spectator.hello()
            await spectator.send({"type": "join", "room": racer.room, "role": "spectator"})
            await spectator.expect("joined")
            await spectator.expect("game")
            rng = random.Random(3)
            reconnected = link.connections
            for turn in range(15):
                if not legal_moves(racer.state):
                    break
                await racer.play(rng, after_send=link.drop if turn % 2 == 0 else None)
            await made_again(link, reconnected)
            await caught_up(spectator, racer.player, 1 + len(racer.acked))
            seen = spectator.game_events(racer.player)[1:]
            assert [e["move"] for e in seen] == [move for _, move in racer.acked]
        finally:
            await spectator.close()
            other.stop()


async def made_again(link: TcpProxy, connections: int) -> None:
    """Until ``link`` has taken a connection beyond its first ``connections``: a cut link is made
    again by the process when it next runs, which on a loaded machine can be after the moves."""
    async with asyncio.timeout(30):
        while True:  # the proxy counts on its own thread: nothing to wait on but time
            if link.connections > connections:
                return
            await asyncio.sleep(0.02)


async def caught_up(client: Client, player: str, events: int) -> None:
    """Until ``client`` has seen ``events`` events of the player's game."""
    async with asyncio.timeout(30):
        while len(client.game_events(player)) < events:
            client.arrived.clear()
            await client.arrived.wait()
