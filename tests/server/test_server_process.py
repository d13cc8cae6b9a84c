"""The server as an operator sees it: options, /healthz, structured logs, graceful shutdown."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from server.runtime.config import Config, parse_config
from tests.server.wsclient import Client, assert_no_secrets
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "data" / "conformance" / "quadrennial-won.json"


def healthz(port: int) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.e2e
def test_help_lists_every_option_and_env_configures_them() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "server", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for option in (
        "--host",
        "--port",
        "--redis-url",
        "--redis-prefix",
        "--log-format",
        "--log-level",
        "--max-frame-bytes",
        "--rate",
        "--burst",
        "--flood-limit",
        "--max-outbound-bytes",
        "--max-rooms",
        "--max-players-per-room",
        "--max-spectators-per-room",
        "--allow-custom-deck",
    ):
        assert option in out
    assert "REDIS_URL" in out
    documented = (ROOT / "docs" / "protocol.md").read_text()
    for option in re.findall(r"`(--[a-z-]+)`", documented):
        assert option in out, option
    for var in re.findall(r"\b(ARENA_[A-Z_]+)", documented):
        assert var in out, var
    config = parse_config([], env={"REDIS_URL": "redis://x:1/0", "ARENA_MAX_ROOMS": "7"})
    assert (config.redis_url, config.max_rooms, config.port) == ("redis://x:1/0", 7, 8765)
    assert parse_config(["--port", "9000"], env={"XDG_DATA_HOME": "/x"}) == Config(
        port=9000, data_dir="/x/solitaire-arena", retention_s=None
    )


def test_the_embedded_store_options() -> None:
    """SQLite in the XDG data directory by default; --data-dir elsewhere; --store memory keeps
    nothing and cannot go with Redis."""
    home = {"HOME": "/home/ann"}
    assert parse_config([], env=home).data_dir == "/home/ann/.local/share/solitaire-arena"
    assert parse_config([], env={**home, "XDG_DATA_HOME": "relative"}).data_dir == (
        "/home/ann/.local/share/solitaire-arena"
    )
    assert parse_config(["--data-dir", "~/arena"], env=home).data_dir == (
        os.path.expanduser("~/arena")
    )
    assert parse_config([], env={"ARENA_DATA_DIR": "/srv/arena"}).data_dir == "/srv/arena"
    assert parse_config(["--store", "memory"], env=home).store == "memory"
    with pytest.raises(SystemExit, match="--store memory and --redis-url exclude each other"):
        parse_config(["--store", "memory", "--redis-url", "redis://x:1/0"], env=home)


def test_the_embedded_sqlite_store_keeps_finished_rooms_unless_told_otherwise() -> None:
    """Its disk is cheap and its replays are the point; Redis's memory is not, so finished rooms
    leave Redis (and the memory store) after a day by default."""
    retention = {
        args: parse_config(list(args), env={"HOME": "/h"}).retention_s
        for args in [
            (),
            ("--store", "memory"),
            ("--redis-url", "redis://x:1/0"),
            ("--retention-s", "60"),
            ("--retention-s", "0", "--redis-url", "redis://x:1/0"),
        ]
    }
    assert list(retention.values()) == [None, 86400.0, 86400.0, 60.0, None]
    assert parse_config([], env={"ARENA_RETENTION_S": "7"}).retention_s == 7.0


def test_gc_interval_is_a_knob_and_zero_leaves_collections_to_cpython() -> None:
    assert Config().gc_interval_ms == 10
    assert parse_config([], env={"ARENA_GC_INTERVAL_MS": "0"}).gc_interval_ms == 0
    assert parse_config(["--gc-interval-ms", "2.5"], env={}).gc_interval_ms == 2.5
    with pytest.raises(SystemExit, match="--gc-interval-ms"):
        parse_config(["--gc-interval-ms", "-1"], env={})


async def test_healthz_follows_the_store_and_sigterm_closes_with_1001(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    server = ServerProcess(redis_url=fresh_redis.url, log_path=log)
    server.start()
    client = await Client(server.url, "ann").open()
    try:
        assert await asyncio.to_thread(healthz, server.port) == (
            200,
            {"status": "ok", "store": True},
        )
        await client.hello()
        await client.send({"type": "create_room", "variant": "swiss"})
        room = (await client.expect("room"))["room"]["id"]
        await client.send({"type": "join", "room": room})
        await client.expect("joined")

        fresh_redis.kill()
        status, body = await asyncio.to_thread(healthz, server.port)
        assert (status, body) == (503, {"status": "unavailable", "store": False})
        fresh_redis.start()
        assert (await asyncio.to_thread(healthz, server.port))[0] == 200

        assert await asyncio.to_thread(server.stop) == 0
        assert await client.wait_closed() == 1001
    finally:
        await client.close()
        server.kill()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert lines
    assert all({"event", "level", "timestamp"} <= set(line) for line in lines)
    # Room, game and player are on a line when known, and left off (not None) when not.
    assert all(line.get(key, "") is not None for line in lines for key in ("room", "game"))
    joined = [line for line in lines if line["event"] == "player_joined"]
    assert joined[0]["room"] == room
    assert joined[0]["player"] == client.session
    assert lines[-1]["event"] == "stopped"


@pytest.mark.e2e
async def test_custom_decks_only_with_the_option(tmp_path: Path) -> None:
    case = json.loads(CONFORMANCE.read_text())[0]
    server = ServerProcess(
        log_path=tmp_path / "server.log",
        extra_args=["--allow-custom-deck", "--rate", "1000", "--burst", "1000"],
    )
    server.start()
    client = await Client(server.url, "solo").open()
    try:
        await client.hello()
        await client.send(
            {
                "type": "create_room",
                "variant": "quadrennial",
                "deck": case["deck"],
                "capacity": 1,
                "countdown_ms": 0,
            }
        )
        room = (await client.expect("room"))["room"]
        await client.send({"type": "join", "room": room["id"]})
        await client.send({"type": "start"})
        await client.expect("started")
        for move in case["moves"]:
            assert (await client.move(move))["type"] == "ack"
        finished = await client.expect("finished")
        assert finished["seed"] is None
        assert finished["ranking"][0]["status"] == "won"
        secret = " ".join(case["deck"]) + ":" + finished["salt"]
        assert hashlib.sha256(secret.encode()).hexdigest() == room["commitment"]
        assert_no_secrets([client], "quadrennial", case["deck"], None)
    finally:
        await client.close()
        assert server.stop() == 0
