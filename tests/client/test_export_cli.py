"""`solitaire export CODE` and `solitaire replay --file FILE` through the real command line, on a
real server: a finished game saved, read back, replayed offline; a running race refused."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shared import apply_move, new_game
from shared.export import parse_export
from shared.views import public_fold, public_view
from tests.client.pty_driver import ROOT, finish, spawn, type_line
from tests.server.wsclient import Client
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here runs the real CLI

CODE = re.compile(r"room ([a-z0-9]+)")


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=str(ROOT),
        check=False,
    )


def test_a_finished_game_is_exported_read_back_and_replayed_offline(
    server: ServerProcess, tmp_path: Path
) -> None:
    played = cli(
        "play", "--server", server.url, "--seed", "1", "--name", "cat", "--moves", "-",
        stdin="d\n7 1\nresign\n",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    code = CODE.search(played.stdout).group(1)  # type: ignore[union-attr]
    saved = tmp_path / "cat.txt"
    exported = cli("export", code, "--server", server.url, "--player", "cat", "-o", str(saved))
    assert exported.returncode == 0, exported.stderr
    assert f"room {code} to {saved}" in exported.stdout
    game = parse_export(saved.read_text(encoding="utf-8"))
    assert (game.header.room, game.header.player, game.header.seed) == (code, "cat", "1")
    assert (game.header.result, game.header.place) == ("resigned", 1)
    moves = [e["move"] for e in game.events if e["type"] == "moved"]
    assert moves == ["d", "t7t1"]
    state = new_game("swiss", seed=1)
    for move in moves:
        state = apply_move(state, move)
    assert public_fold(game.events[:-1]) == public_view(state)

    to_stdout = cli("export", code, "--server", server.url)
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == saved.read_text(encoding="utf-8")

    replay = spawn("replay", "--file", str(saved), "--no-color")
    try:
        replay.expect(f"replay of cat - room {code}")
        replay.expect(r"step 0/3 \(the deal\)")
        type_line(replay, "n")
        replay.expect(r"step 1/3 \(d\)")
        type_line(replay, "3")
        replay.expect(r"step 3/3 \(resigned\)")
        type_line(replay, "q")
        assert finish(replay) == 0
    finally:
        replay.close(force=True)


def test_a_file_that_is_no_record_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1. d 0:01.000\n")
    result = cli("replay", "--file", str(bad))
    assert result.returncode == 2
    assert "not a Solitaire Arena game record" in result.stderr


async def test_a_running_race_is_not_exported(server: ServerProcess) -> None:
    racer = await Client(server.url, "dee").open()
    try:
        await racer.hello()
        await racer.send({"type": "create_room", "variant": "swiss", "capacity": 1, "ref": 1})
        room = (await racer.expect("room", lambda m: m.get("ref") == 1))["room"]["id"]
        await racer.send({"type": "join", "room": room, "role": "player"})
        await racer.expect("joined")
        await racer.send({"type": "start"})
        await racer.expect("started")
        assert (await racer.move("d"))["type"] == "ack"
        result = await asyncio.to_thread(cli, "export", room, "--server", server.url)
        assert result.returncode == 2
        assert "the race is not over" in result.stderr
        assert result.stdout == ""
    finally:
        await racer.close()
