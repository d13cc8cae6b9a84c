"""`solitaire verify` through the real command line: a race played on a real server says fair,
live and from its export; the export tampered with says not fair; a race still on is refused."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.kernel.days import day_end_ms
from tests.client.pty_driver import ROOT
from tests.server.daily.test_daily_e2e import ask, connect, register
from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here runs the real CLI on a real server


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client", *args],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=str(ROOT),
        check=False,
    )


async def race(url: str, *, finish: bool = True) -> tuple[str, list[Client]]:
    """A two-racer race on a secret seed: a few moves each, then both resign (if ``finish``)."""
    ann, bob = Client(url, "ann"), Client(url, "bob")
    for racer in (ann, bob):
        await racer.open()
        await racer.hello()
    await ann.send({"type": "create_room", "variant": "quadrennial", "countdown_ms": 0, "ref": 1})
    room = (await ann.expect("room", lambda m: m.get("ref") == 1))["room"]["id"]
    for racer in (ann, bob):
        await racer.send({"type": "join", "room": room, "role": "player"})
        await racer.expect("joined")
    await ann.send({"type": "start"})
    for racer in (ann, bob):
        await racer.expect("started")
    for racer, moves in ((ann, ["d", "d", "d"]), (bob, ["d"])):
        for move in moves:
            assert (await racer.move(move))["type"] == "ack"
    if finish:
        for racer in (ann, bob):
            await racer.send({"type": "resign"})
        await ann.expect("finished")
    return room, [ann, bob]


async def test_a_real_race_is_fair_live_and_from_its_export(
    server: ServerProcess, tmp_path: Path
) -> None:
    room, racers = await race(server.url)
    for racer in racers:
        await racer.close()
    live = await asyncio.to_thread(cli, "verify", room, "--server", server.url)
    assert live.returncode == 0, live.stderr
    lines = live.stdout.splitlines()
    assert lines[0] == f"Room {room} (quadrennial, 2 racers): fair"
    assert lines[1].startswith("  checked: the commitment ")
    assert lines[2] == "  checked: 2 racers dealt the seed's deal (deal version 1)"
    assert lines[3] == "  checked: 4 moves replayed on the seed's deck, every card as shown"

    saved = tmp_path / "ann.txt"
    exported = await asyncio.to_thread(
        cli, "export", room, "--server", server.url, "--player", "ann", "-o", str(saved)
    )
    assert exported.returncode == 0, exported.stderr
    from_file = await asyncio.to_thread(cli, "verify", "--file", str(saved))
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.stdout.splitlines()[0] == f"ann's game in room {room} ({saved}): fair"

    as_json = await asyncio.to_thread(cli, "verify", "--file", str(saved), "--json")
    assert json.loads(as_json.stdout) == {
        "what": f"ann's game in room {room} ({saved})",
        "verdict": "fair",
        "reason": None,
        "checked": [line[len("  checked: ") :] for line in from_file.stdout.splitlines()[1:]],
    }

    text = saved.read_text(encoding="utf-8")
    salt = next(line for line in text.splitlines() if line.startswith("[Salt "))
    tampered = tmp_path / "tampered.txt"
    tampered.write_text(text.replace(salt, '[Salt "' + "0" * 32 + '"]'), encoding="utf-8")
    result = await asyncio.to_thread(cli, "verify", "--file", str(tampered))
    assert result.returncode == 4
    assert ": not fair: the revealed seed " in result.stdout
    assert "do not match the commitment" in result.stdout


async def test_a_race_still_on_is_not_verified(server: ServerProcess) -> None:
    room, racers = await race(server.url, finish=False)
    try:
        result = await asyncio.to_thread(cli, "verify", room, "--server", server.url)
        assert result.returncode == 2
        assert f"room {room} is racing: a race is checked once it is over" in result.stderr
    finally:
        for racer in racers:
            await racer.close()


async def test_a_daily_attempt_is_verified_once_its_day_is_over(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its `finished` reveals no seed: the day's standings do, after midnight."""
    async with daily_attempt(redis_server, tmp_path, monkeypatch, "swiss", moves=1) as played:
        server, room = played
        result = await asyncio.to_thread(cli, "verify", room, "--server", server.url)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith(f"Room {room} (swiss, 1 racer): fair\n")


@contextlib.asynccontextmanager
async def daily_attempt(
    redis_server: RedisServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variant: str,
    *,
    moves: int,
) -> AsyncIterator[tuple[ServerProcess, str]]:
    """A server and a daily attempt of ``moves`` deals, then resigned, on a day that is over:
    played a minute before a midnight (whatever the machine's load), then the server is
    restarted on the same store with its clock past that midnight."""
    midnight = day_end_ms(dt.datetime.now(dt.UTC).date())
    monkeypatch.setenv("ARENA_TEST_CLOCK_OFFSET_MS", str(midnight - 60_000 - now_ms()))
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=["--redis-prefix", f"d{uuid.uuid4().hex[:8]}:"],
    )
    server.start()
    try:
        ann = await connect(server.url, "ann", await register(server.url, "ann"))
        started = await ask(ann, {"type": "daily", "variant": variant}, "daily_started")
        await ann.expect("started")
        for _ in range(moves):
            assert (await ann.move("d"))["type"] == "ack"
        await ann.send({"type": "resign"})
        assert (await ann.expect("finished"))["seed"] is None
        await ann.close()
        await asyncio.to_thread(restart_after, server, started["date"], monkeypatch)
        yield server, started["room"]
    finally:
        server.stop()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def restart_after(server: ServerProcess, day: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server again on the same store, its clock a second past ``day``'s end."""
    server.stop()
    end = day_end_ms(dt.date.fromisoformat(day))
    monkeypatch.setenv("ARENA_TEST_CLOCK_OFFSET_MS", str(end + 1_000 - now_ms()))
    server.start()
