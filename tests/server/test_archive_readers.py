"""Every reader of a finished room, through real server processes on a real Redis, sees the same
before and after the room moved to the archive (SQLite and PostgreSQL): the room list, a
spectator joining, the replay's games, profiles, a race's rating changes, the leaderboard and
``solitaire-server ratings --rebuild``. A corrupt archived record fails that room alone."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.server.daily.test_daily_e2e import ask, connect, register
from tests.support.ports import free_port
from tests.support.postgres_server import PostgresServer
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

FAST = ["--rate", "1000", "--burst", "1000"]


async def race(url: str, variant: str, racers: list[tuple[str, str | None]]) -> str:
    """A race to the end: each racer deals a few times, then resigns. Its room id."""
    clients = [await connect(url, name, key) for name, key in racers]
    try:
        first = clients[0]
        made = await ask(
            first,
            {"type": "create_room", "variant": variant, "capacity": len(racers), "countdown_ms": 0},
            "room",
        )
        room = made["room"]["id"]
        for client in clients:
            await ask(client, {"type": "join", "room": room}, "joined")
        await first.send({"type": "start"})
        for client in clients:
            await client.expect("started")
        for i, client in enumerate(clients):
            for _ in range(i + 2):
                await client.move("d")  # an ack or a reject: the log holds what was acked
            await client.send({"type": "resign"})
        for client in clients:
            await client.expect("finished")
        return str(room)
    finally:
        for client in clients:
            await client.close()


def clean(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items() if k not in ("ref", "session", "token")}


async def observe(url: str, rooms: list[str], accounts: list[str]) -> dict[str, Any]:
    """What every reader of the finished rooms gets from the server at ``url``."""
    seen: dict[str, Any] = {}
    viewer = await connect(url, "viewer")
    try:
        listed = await ask(viewer, {"type": "list_rooms"}, "rooms")
        for summary in listed["rooms"]:
            if summary["id"] in rooms:
                seen[f"list {summary['id']}"] = summary
        for room in rooms:
            spectator = await connect(url, "spectator")
            try:
                joined = await ask(spectator, {"type": "join", "room": room, "role": "spectator"},
                                   "joined", "error")  # fmt: skip
                seen[f"join {room}"] = clean(joined)
                if joined["type"] == "error":
                    continue
                state = await spectator.expect("room")
                seen[f"room {room}"] = clean(state)
                players = [p["player"] for p in state["room"]["players"]]
                for player in players:
                    game = await spectator.expect("game", lambda m, p=player: m["player"] == p)
                    seen[f"replay {room} {player}"] = clean(game)
                    seen[f"export {room} {player}"] = await export(url, room, player)
            finally:
                await spectator.close()
            rating = await ask(viewer, {"type": "race_ratings", "room": room}, "rating_changes")
            seen[f"ratings {room}"] = clean(rating)
        for account in accounts:
            card = await ask(viewer, {"type": "profile", "name": account}, "player_card")
            seen[f"profile {account}"] = clean(card)
        for variant in ("swiss", "quadrennial"):
            board = await ask(viewer, {"type": "leaderboard", "variant": variant}, "standings")
            seen[f"leaderboard {variant}"] = clean(board)
    finally:
        await viewer.close()
    return seen


async def export(url: str, room: str, player: str) -> tuple[int, str]:
    """GET /export/ROOM/PLAYER on the server's port: its status and text."""
    address = url.replace("ws://", "http://") + f"/export/{room}/{player}"

    def get() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(address, timeout=10) as answer:
                return int(answer.status), answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    return await asyncio.to_thread(get)


def metric(port: int, name: str) -> float:
    """One figure of GET /metrics on the metrics port (which may open a moment after the
    play port answers /healthz)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                text = answer.read().decode()
            break
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no metric {name}")


async def rated(url: str, room: str) -> None:
    """Until the room's race is rated (each process rates in the background)."""
    viewer = await connect(url, "viewer")
    try:
        for _ in range(200):
            answer = await ask(viewer, {"type": "race_ratings", "room": room}, "rating_changes")
            if answer["type"] == "rating_changes":
                return
            await asyncio.sleep(0.05)
    finally:
        await viewer.close()
    raise AssertionError(f"room {room} was never rated")


def corrupt(backend: str, where: str, room: str, postgres: PostgresServer | None) -> None:
    sql = f"UPDATE archived_rooms SET record = 'garbage' WHERE room_id = '{room}'"
    if backend == "sqlite":
        with sqlite3.connect(Path(where) / "archive.sqlite3") as db:
            db.execute(sql.replace("'garbage'", "x'c1c1'"))
    else:
        assert postgres is not None
        postgres.psql(
            sql.replace("'garbage'", "'\\xc1c1'::bytea"), database=where.rsplit("/", 1)[1]
        )


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_every_reader_sees_an_archived_room_as_it_saw_it_live(
    backend: str, redis_server: RedisServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    prefix = f"ar{uuid.uuid4().hex[:6]}:"
    postgres: PostgresServer | None = None
    if backend == "sqlite":
        where = str(tmp_path / "data")
        archive_args = ["--data-dir", where]
    else:
        postgres = request.getfixturevalue("postgres_server")
        where = postgres.create_database()
        archive_args = ["--archive-url", where]
    store_args = ["--redis-prefix", prefix]
    port = free_port()
    live_server = ServerProcess(
        redis_url=redis_server.url,
        port=port,
        log_path=tmp_path / "live.log",
        extra_args=[*FAST, *store_args, *archive_args, "--archive-after-s", "3600"],
    )
    live_server.start()
    try:
        url = live_server.url
        keys = {name: await register(url, name) for name in ("ann", "bob", "cat")}
        rooms = [
            await race(url, "swiss", [("ann", keys["ann"]), ("bob", keys["bob"])]),
            await race(
                url,
                "quadrennial",
                [("cat", keys["cat"]), ("ann", keys["ann"]), ("guest", None)],
            ),
            await race(url, "swiss", [("dan", None), ("eve", None)]),  # unrated: guests
        ]
        for room in rooms[:2]:
            await rated(url, room)
        live = await observe(url, rooms, list(keys))
    finally:
        live_server.stop()
    assert all(f"replay {room}" in " ".join(live) for room in rooms)
    exports = [v for k, v in live.items() if k.startswith("export")]
    assert len(exports) == 7
    assert all(status == 200 for status, _ in exports)

    metrics_port = free_port()
    archiving = ServerProcess(
        redis_url=redis_server.url,
        port=port,
        log_path=tmp_path / "archiving.log",
        extra_args=[
            *FAST, *store_args, *archive_args, "--archive-after-s", "0",
            "--archive-sweep-s", "0.5", "--metrics-port", str(metrics_port),
        ],
    )  # fmt: skip
    archiving.start()
    client = redis.Redis.from_url(redis_server.url)
    try:
        deadline = time.monotonic() + 30
        while metric(metrics_port, "arena_rooms_archived_total") < len(rooms):
            assert time.monotonic() < deadline, "the rooms were never archived"
            await asyncio.sleep(0.1)
        assert not any(client.keys(f"{prefix}{{{room}}}*") for room in rooms)
        assert metric(metrics_port, "arena_rooms_archived_total") == len(rooms)
        archived = await observe(archiving.url, rooms, list(keys))
        assert archived == live
        assert metric(metrics_port, "arena_archive_reads_total") >= len(rooms)
        assert metric(metrics_port, "arena_archive_waiting") == 0

        # The leaderboard rebuilt from the log is the one the races made live.
        rebuilt = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "server", "ratings", "--rebuild",
             "--redis-url", redis_server.url, *store_args],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert "swiss: 1 rated races folded" in rebuilt.stdout
        again = await observe(archiving.url, [], list(keys))
        assert {k: v for k, v in again.items()} == {
            k: v for k, v in live.items() if k.startswith(("profile", "leaderboard"))
        }
    finally:
        client.close()
        archiving.stop()

    # A corrupt record: that room answers corrupt_record, the others are served as before.
    corrupt(backend, where, rooms[0], postgres)
    after = ServerProcess(
        redis_url=redis_server.url,
        port=port,
        log_path=tmp_path / "after.log",
        extra_args=[*FAST, *store_args, *archive_args],
    )
    after.start()
    try:
        seen = await observe(after.url, rooms[1:], [])
        assert seen == {k: v for k, v in live.items() if any(r in k for r in rooms[1:])} | {
            k: v for k, v in live.items() if k.startswith("leaderboard")
        }
        viewer = await connect(after.url, "viewer")
        try:
            answer = await ask(
                viewer, {"type": "join", "room": rooms[0], "role": "spectator"}, "joined"
            )
        finally:
            await viewer.close()
        assert answer["type"] == "error"
        assert answer["code"] == "corrupt_record"
        status, text = await export(
            after.url, rooms[0], live[f"room {rooms[0]}"]["room"]["players"][0]["player"]
        )
        assert status == 500
        assert text.startswith("corrupt_record: ")
    finally:
        after.stop()
