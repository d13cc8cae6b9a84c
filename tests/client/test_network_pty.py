"""The client against a real server, in pseudo-terminals, as people would use it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.client.pty_driver import ROOT, Term, finish, spawn, type_line, words
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a process

CODE = re.compile(r"room ([a-z0-9]+)")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(log_path=tmp_path / "server.log")
    process.start()
    yield process
    process.stop()


def room_code(child: pexpect.spawn) -> str:
    child.expect(r"room ([a-z0-9]+)\s")
    return child.match.group(1)


def test_play_on_a_server_while_someone_watches(server: ServerProcess) -> None:
    ann = spawn("play", "--server", server.url, "--seed", "1", "--name", "ann", "--no-color")
    watcher = None
    try:
        code = room_code(ann)
        ann.expect("Your move")
        ann.expect("> ")
        watcher = spawn("watch", code, "--server", server.url, "--no-color")
        watcher.expect("watching room " + code)
        watcher.expect("== 1. ann — 0 moves ==")  # whose board it is, numbered as in the panel
        watcher.expect("Stock: 27")
        type_line(ann, "d")
        ann.expect("Waste: 3♣")
        watcher.expect("Waste: 3♣")  # the spectator sees the move as it happens
        type_line(ann, "t1f")
        ann.expect("t1f: ")
        ann.expect("cannot go to its foundation")  # the server's reason, board kept
        type_line(ann, "7 1")
        ann.expect("7 1 -> t7t1")
        ann.expect("2 moves")
        watcher.expect("ann — 2 moves")
        type_line(ann, "resign")
        ann.expect(re.escape("Resign this game? Type 'y' to resign"))
        type_line(ann, "y")
        ann.expect("You resigned")
        watcher.expect("ann — 2 moves, resigned")
        type_line(ann, "quit")
        assert finish(ann) == 0
        type_line(watcher, "quit")
        assert finish(watcher) == 0
    finally:
        ann.close(force=True)
        if watcher is not None:
            watcher.close(force=True)


def test_race_create_and_join_race_to_results(server: ServerProcess) -> None:
    ann = spawn(
        "race",
        "create",
        "--server",
        server.url,
        "--seed",
        "1",
        "--name",
        "ann",
        "--countdown",
        "1",
        "--no-color",
    )
    bob = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        type_line(ann, "d")
        ann.expect("The race has not started yet: type 'start'")
        bob = spawn("race", "join", code, "--server", server.url, "--name", "bob", "--no-color")
        bob.expect("waiting for the race to start")
        ann.expect("bob")  # bob appears in ann's race panel
        type_line(ann, "start")
        for racer in (ann, bob):
            racer.expect("The race starts in 1 second.")
        for racer in (ann, bob):
            # One frame: the status line (the move hint) above the messages (Go!).
            racer.expect("Your move")
            racer.expect("Go! The race has started")
        type_line(ann, "d")
        ann.expect("Waste: 3♣")
        bob.expect(r"ann\s+0\s+1 playing")  # ann's progress on bob's panel: 0 cards, 1 move
        type_line(bob, "7 1")
        bob.expect("7 1 -> t7t1")
        ann.expect(r"bob\s+0\s+1 playing")
        type_line(ann, "resign")
        ann.expect("Resign this game")  # as a person, who reads it first
        type_line(ann, "y")
        ann.expect("Waiting for the others")
        bob.expect("ann resigned with 0 cards on the foundations.")
        type_line(bob, "resign")
        bob.expect("Resign this game")  # as a person, who reads it first
        type_line(bob, "yes")
        for racer in (ann, bob):
            racer.expect("Race over: every game is done")
            racer.expect("Results: 1. ")
            racer.expect(words("Fair deal: the seed revealed now (1) is the one the server locked"))
        type_line(ann, "quit")
        type_line(bob, "quit")
        assert finish(ann) == 0
        assert finish(bob) == 0
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)


def test_a_killed_server_comes_back_and_the_game_goes_on(fresh_redis, tmp_path: Path) -> None:
    server = ServerProcess(redis_url=fresh_redis.url, log_path=tmp_path / "server.log")
    server.start()
    ann = spawn("play", "--server", server.url, "--seed", "1", "--name", "ann", "--no-color")
    watcher = None
    try:
        code = room_code(ann)
        ann.expect("Your move")
        type_line(ann, "d")
        ann.expect("Waste: 3♣")
        ann.expect("> ")
        watcher = spawn("watch", code, "--server", server.url, "--no-color")
        watcher.expect("ann — 1 move ==")
        server.kill()  # SIGKILL: no goodbye, the TCP connection just dies
        ann.expect("Connection lost: reconnecting")
        type_line(ann, "7 1")  # typed while the server is down: sent once it is back
        server.start()  # the same port and the same Redis
        ann.expect("Reconnected: the game goes on")
        ann.expect("7 1 -> t7t1")
        ann.expect("2 moves")
        type_line(ann, "d")
        ann.expect("3 moves")
        watcher.expect("Reconnected")
        watcher.expect("ann — 3 moves")  # the spectator joined again and follows on
        type_line(ann, "t1f")
        ann.expect("cannot go to its foundation")
        type_line(ann, "quit")
        ann.expect("Quit now and you resign this game")
        type_line(ann, "y")
        assert finish(ann) == 0
        type_line(watcher, "quit")
        assert finish(watcher) == 0
    finally:
        ann.close(force=True)
        if watcher is not None:
            watcher.close(force=True)
        server.stop()


def run_client(*args: str, stdin: str = "", timeout: float = 30, status: int = 0) -> str:
    """Run `python -m client ARGS` without a terminal (scripted use), check its exit status
    and return stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "client", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(ROOT),
        check=False,
    )
    assert result.returncode == status, (result.returncode, result.stderr, result.stdout)
    return result.stdout


def test_scripted_game_then_rooms_then_replay_stepping(server: ServerProcess) -> None:
    out = run_client(
        "play",
        "--server",
        server.url,
        "--seed",
        "1",
        "--name",
        "cat",
        "--moves",
        "-",
        stdin="d\n7 1\nt1f\nresign\n",
        status=3,  # a scripted move was refused
    )
    assert (
        "d\n7 1 -> t7t1\nt1f: rejected: J♥ cannot go to its foundation, which takes a Two\n" in out
    )
    assert out.rstrip().endswith("1 scripted move refused")
    assert "\nresigned\n" in out
    code = CODE.search(out).group(1)
    rooms = run_client("rooms", "--server", server.url)
    # Who played, and that the room's seed was chosen (--seed 1), so its deck was known: at 80
    # columns the note goes on below the players, broken between words.
    line = (
        rf"^{code}\s+swiss\s+finished\s+solo\s+\d+\s+cat\n {{46}}"
        r"\(open seed: the creator knows the\n {46}deck\)$"
    )
    assert re.search(line, rooms, re.MULTILINE), rooms
    assert all(len(row) <= 80 for row in rooms.splitlines())
    # The same in a terminal of 80 columns, as a person reads it.
    listing = Term(spawn("rooms", "--server", server.url, "--no-color", rows=24), 80, 24)
    screen = listing.wait(r"\n {46}deck\)")
    assert re.search(rf"{code}.* cat\n {{46}}\(open seed: the creator knows the\n", screen), screen
    assert finish(listing.child) == 0
    replay = spawn("replay", code, "--server", server.url, "--no-color")
    try:
        replay.expect("replay of cat")
        replay.expect("Stock: 27")
        replay.expect(r"step 0/3 \(the deal\)")
        type_line(replay, "n")
        replay.expect("Waste: 3♣")
        replay.expect(r"step 1/3 \(d\)")
        type_line(replay, "")
        replay.expect(r"step 2/3 \(t7t1\)")
        type_line(replay, "p")
        replay.expect(r"step 1/3 \(d\)")
        type_line(replay, "3")
        replay.expect(r"step 3/3 \(resigned\)")
        type_line(replay, "n")
        replay.expect("That was the last move")
        type_line(replay, "q")
        assert finish(replay) == 0
    finally:
        replay.close(force=True)


def test_replay_at_a_speed_and_json_events(server: ServerProcess) -> None:
    out = run_client(
        "play",
        "--server",
        server.url,
        "--seed",
        "2",
        "--moves",
        "-",
        "--json",
        stdin="d\nd\nresign\n",
    )
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [event["type"] for event in events]
    assert kinds.count("ack") == 2
    moved = [
        e["event"]["move"]
        for e in events
        if e["type"] == "game_event" and e["event"]["type"] == "moved"
    ]
    assert moved == ["d", "d"]
    code = next(e["room"]["id"] for e in events if e["type"] == "room")
    replayed = run_client("replay", code, "--server", server.url, "--speed", "100", "--json")
    kinds = [json.loads(line)["type"] for line in replayed.splitlines()]
    assert kinds == ["game_started", "moved", "moved", "resigned"]


def test_watch_one_player_and_scripted_race(server: ServerProcess, tmp_path: Path) -> None:
    ann = spawn(
        "race",
        "create",
        "--server",
        server.url,
        "--seed",
        "1",
        "--name",
        "ann",
        "--players",
        "2",
        "--countdown",
        "0",
        "--no-color",
    )
    watcher = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        ann.expect("Starts at 2 players")
        script = tmp_path / "bot.moves"
        script.write_text("# a bot's moves\nd\nd\nresign\n")
        bot = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "client",
                "race",
                "join",
                code,
                "--server",
                server.url,
                "--name",
                "bot",
                "--moves",
                str(script),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(ROOT),
        )
        ann.expect("Go! The race has started")  # started by ann's client once bot sat down
        watcher = spawn("watch", code, "--player", "bot", "--server", server.url, "--no-color")
        watcher.expect("watching bot in room " + code)
        # Fair spectating holds the bot's two dealt cards back while ann, still playing, has
        # not turned them; once she resigns they are released.
        type_line(ann, "resign")
        ann.expect("Resign this game")  # as a person, who reads it first
        type_line(ann, "y")
        watcher.expect("bot — 2 moves")  # the bot's script ran
        assert bot.wait(timeout=30) == 0  # the bot waits for the results, then exits
        assert bot.stdout is not None
        out = bot.stdout.read()
        assert f"room {code}" in out
        assert "1. bot" in out or "1. ann" in out
        watcher.expect("Race over")
        type_line(watcher, "quit")
        assert finish(watcher) == 0
        type_line(ann, "quit")
        assert finish(ann) == 0
    finally:
        ann.close(force=True)
        if watcher is not None:
            watcher.close(force=True)


def test_a_racer_who_resigned_watches_another_live(server: ServerProcess) -> None:
    common = ("--server", server.url, "--seed", "1", "--no-color")
    ann = spawn("race", "create", "--name", "ann", "--players", "2", "--countdown", "0", *common)
    bob = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        bob = spawn("race", "join", code, "--name", "bob", *common)
        for racer in (ann, bob):
            racer.expect("Go! The race has started")
        type_line(ann, "watch bob")
        ann.expect("watch: finish or resign your game to watch the others")
        type_line(bob, "d")
        bob.expect(r"\b1 move\b")
        type_line(ann, "resign")
        ann.expect("Resign this game")  # as a person, who reads it first
        type_line(ann, "y")
        ann.expect("Waiting for the others")  # the status line, wrapped: words one by one
        ann.expect("'watch'")
        ann.expect("'back'")
        type_line(ann, "watch bob")
        ann.expect(r"== \d\. bob — 1 move ==")  # bob's board: ann's own has 0 moves
        ann.expect("Watching bob live")
        type_line(bob, "7 1")
        bob.expect("7 1 -> t7t1")
        ann.expect("bob — 2 moves")  # bob's move, as it happens
        type_line(bob, "d")
        bob.expect("3 moves")
        ann.expect("bob — 3 moves")
        type_line(ann, "back")
        ann.expect("Back to your board")
        type_line(ann, "watch")  # every racer, stacked
        ann.expect(r"== \d\. bob — 3 moves ==")
        ann.expect(r"== \d\. ann \(you\) — 0 moves, resigned ==")
        type_line(bob, "resign")
        bob.expect("Resign this game")  # as a person, who reads it first
        type_line(bob, "y")
        for racer in (ann, bob):
            racer.expect("Race over: every game is done")
            racer.expect("Results: 1. ")
        type_line(ann, "quit")
        type_line(bob, "quit")
        assert finish(ann) == 0
        assert finish(bob) == 0
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)


def test_a_winnable_solo_game_takes_the_servers_hint(server: ServerProcess) -> None:
    ann = spawn(
        "play", "--server", server.url, "--variant", "quadrennial", "--winnable", "--name",
        "ann", "--no-color",
    )  # fmt: skip
    try:
        room_code(ann)
        ann.expect("Your move")
        ann.expect("> ")
        type_line(ann, "hint")
        # The server's solver saw the whole deal (proved winnable): a move of a winning line.
        ann.expect(r"Hint: (\S+) \(a winning line, found in [\d,]+ nodes\)")
        move = ann.match.group(1)
        type_line(ann, move)
        ann.expect("1 move")
        type_line(ann, "quit")
        ann.expect("Quit now and you resign this game")
        type_line(ann, "y")
        assert finish(ann) == 0
    finally:
        ann.close(force=True)


def test_a_race_hint_is_the_public_view_heuristic(server: ServerProcess) -> None:
    ann = spawn("race", "create", "--server", server.url, "--name", "ann", "--no-color")
    try:
        ann.expect("Type 'start' to start")
        ann.expect("> ")
        type_line(ann, "start")
        ann.expect("Your move")
        type_line(ann, "hint")
        # The server answers not_allowed in a room for more than one: the client's own hint.
        ann.expect(re.escape("('moves' lists every legal move)"))
        type_line(ann, "quit")
        ann.expect("Quit now and you resign this game")
        type_line(ann, "y")
        assert finish(ann) == 0
    finally:
        ann.close(force=True)
