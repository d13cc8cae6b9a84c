"""A finished game's analysis through real server processes: made by the server's analysis
process, kept across a restart on the embedded store (SQLite), kept across a restart and the
move to the archive on Redis, and analysed again by `solitaire-server analysis --rebuild`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from server.store import SqliteEventStore
from tests.server.daily.test_daily_e2e import ask, connect
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

ANALYSED = ["--analysis-max-nodes", "swiss=4000,quadrennial=20000", "--rate", "1000"]


async def solo_game(url: str) -> str:
    """A solo Quadrennial game of three deals, resigned: its room."""
    client = await connect(url, "ann")
    try:
        made = await ask(
            client,
            {"type": "create_room", "variant": "quadrennial", "capacity": 1, "countdown_ms": 0},
            "room",
        )
        room = str(made["room"]["id"])
        await ask(client, {"type": "join", "room": room}, "joined")
        await client.send({"type": "start"})
        await client.expect("started")
        for _ in range(3):
            await client.move("d")
        await client.send({"type": "resign"})
        await client.expect("finished")
        return room
    finally:
        await client.close()


async def analysis(url: str, room: str, *, wait: bool = True) -> dict[str, Any]:
    """The game's analysis, without its ref; asked again while it is not written yet."""
    client = await connect(url, "eve")
    try:
        async with asyncio.timeout(30):
            while True:
                answer = await ask(
                    client, {"type": "analysis", "room": room, "player": "ann"}, "game_analysis"
                )
                if answer.get("code") != "no_analysis" or not wait:
                    return {k: v for k, v in answer.items() if k != "ref"}
                await asyncio.sleep(0.1)
    finally:
        await client.close()


async def test_an_analysis_survives_a_restart_and_is_rebuilt(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ServerProcess(data_dir=data, extra_args=ANALYSED)
    server.start()
    try:
        room = await solo_game(server.url)
        first = await analysis(server.url, room)
        assert first["type"] == "game_analysis", first
        assert [m["move"] for m in first["moves"]] == ["d", "d", "d"]
        server.stop()
        server.start()
        assert await analysis(server.url, room, wait=False) == first
    finally:
        server.stop()
    rebuild = [sys.executable, "-m", "server", "analysis", "--rebuild", "--room", room.upper()]
    rebuilt = await asyncio.to_thread(
        subprocess.run,
        [*rebuild, "--data-dir", str(data), *ANALYSED[:2]],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert f"{room}: 1 games analysed" in rebuilt.stdout
    store = SqliteEventStore(data)
    try:
        (stream,) = await store.streams(f"{{{room}}}:analysis:")
        events = await store.read(stream)
        assert len(events) == 2  # the rebuild's after the first
        assert events[1].data["moves"] == events[0].data["moves"] == ["d", "d", "d"]
    finally:
        await store.aclose()


async def gone(raw: redis.Redis, pattern: str) -> None:
    """Until no key matches ``pattern``."""
    async with asyncio.timeout(20):
        for _ in range(400):
            if not raw.keys(pattern):
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"{pattern} is still there")


async def test_an_analysis_moves_to_the_archive_with_its_room(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    args = [*ANALYSED, "--archive-after-s", "0.5", "--archive-sweep-s", "0.2"]
    server = ServerProcess(redis_url=redis_server.url, extra_args=[*args, "--redis-prefix", prefix])
    raw = redis.Redis.from_url(redis_server.url)
    server.start()
    try:
        room = await solo_game(server.url)
        first = await analysis(server.url, room)
        assert first["type"] == "game_analysis", first
        await gone(raw, f"{prefix}*{{{room}}}*")  # the archiver has moved the room
        server.stop()
        server.start()
        assert await analysis(server.url, room, wait=False) == first  # from the archive
    finally:
        server.stop()
        raw.close()
