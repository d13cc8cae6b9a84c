"""The server's analysis in the terminal, through real pseudo-terminals at 80x24 against a real
server that analyses games: a solo Quadrennial game lost from a won deal says, at its end, that
the deal could be won and which move lost it; `solitaire analyse` prints every move with its
verdicts and a winning line, and `--json` the analysis itself."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from shared import apply_move, new_game, solve
from shared.solver import Status
from tests.client.pty_driver import Term, finish, spawn, words
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

SIZE = {"columns": 80, "rows": 24}
SEED = 47
PLAYED = ["r4f", "r4f", "r7f"]
QUAD_MOVE = re.compile(r"d|redeal|wf|r[1-8]f")  # won until the third move, which loses the deal


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        log_path=tmp_path / "server.log",
        extra_args=["--analysis-max-nodes", "swiss=4000,quadrennial=40000"],
    )
    process.start()
    yield process
    process.stop()


def test_the_deal_is_what_the_test_says() -> None:
    """The game below: the deal is won after two moves, and lost after the third."""
    state = new_game("quadrennial", seed=SEED)
    for move in PLAYED[:2]:
        state = apply_move(state, move)
    assert solve(state, max_nodes=40_000).status == Status.WON
    assert solve(apply_move(state, PLAYED[2]), max_nodes=40_000).status == Status.UNWINNABLE


def test_the_end_of_a_game_says_which_move_lost_it(server: ServerProcess) -> None:
    child = spawn(
        "play", "--server", server.url, "--variant", "quadrennial", "--seed", str(SEED),
        "--name", "ann", "--no-color", **SIZE,
    )  # fmt: skip
    term = Term(child, **SIZE)
    try:
        screen = term.wait(r"room ([a-z0-9]+)")
        code = re.search(r"room ([a-z0-9]+)", screen)
        assert code is not None
        room = code.group(1)
        term.wait(r"(?m)^>")
        for number, move in enumerate(PLAYED, 1):
            term.type(move)
            term.wait(rf"\b{number} moves?\b")
        term.type("resign")
        term.wait("Resign this game")
        term.type("y")
        screen = term.wait(words("move 3: r7f lost a won game"), timeout=60)
        assert "this deal could be won" in " ".join(screen.split())
        assert all(len(line) <= 80 for line in term.lines())
        term.type("quit")
        assert finish(child) == 0
    finally:
        child.close(force=True)

    child = spawn("analyse", room, "--player", "ann", "--server", server.url, **SIZE)
    child.expect(words(f"Room {room}, ann's game (quadrennial, 3 moves): this deal could be won."))
    child.expect(re.escape("Move 3: r7f lost a won game."))
    child.expect(r"1\. r4f\s+won -> won")
    child.expect(r"3\. r7f\s+won -> lost\s+<- lost a won game")
    child.expect(words("A winning line from after move 2:") + r"\s+\S")
    assert finish(child) == 0

    child = spawn("analyse", room, "--player", "ANN", "--server", server.url, "--json", **SIZE)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    analysis = json.loads(child.before.strip().splitlines()[-1])
    assert analysis["type"] == "game_analysis"
    assert (analysis["deal"], analysis["losing_move"]) == ("won", 3)
    assert [m["move"] for m in analysis["moves"]] == PLAYED
    state = new_game("quadrennial", seed=SEED)
    for move in [*PLAYED[:2], *analysis["line"]]:
        state = apply_move(state, move)
    assert state.won  # the line from before the losing move wins


def test_a_replay_marks_the_losing_move_and_shows_the_winning_line(
    server: ServerProcess, tmp_path: Path
) -> None:
    room = played(server, tmp_path)
    child = spawn("replay", room, "--player", "ann", "--server", server.url, "--no-color", **SIZE)
    term = Term(child, **SIZE)
    try:
        term.wait(words("step 0/4 (the deal). Analysis: won"))
        term.type("analysis")
        screen = " ".join(term.wait(words("A winning line from here:")).split())
        shown = screen.split("A winning line from here: ")[1].split()
        line = list(itertools.takewhile(lambda t: QUAD_MOVE.fullmatch(t) is not None, shown))
        state = new_game("quadrennial", seed=SEED)
        for move in line:
            state = apply_move(state, move)
        assert state.won  # the line shown wins from the deal
        term.type("2")
        term.wait(words("step 2/4 (r4f). Analysis: won"))
        term.type("n")
        term.wait(words("step 3/4 (r7f). Analysis: lost: this move lost a won game"))
        term.type("analysis")
        term.wait(words("No winning line from here: this position is lost."))
        assert all(len(row) <= 80 for row in term.lines())
        term.type("q")
        assert finish(child) == 0
    finally:
        child.close(force=True)


def test_an_export_keeps_the_analysis_as_comments(server: ServerProcess, tmp_path: Path) -> None:
    room = played(server, tmp_path)
    saved = tmp_path / "game.txt"
    child = spawn("export", room, "--player", "ann", "--server", server.url, "-o", str(saved))
    child.expect("Saved the game of ann")
    assert finish(child) == 0
    lines = saved.read_text().splitlines()
    assert "; Analysis: this deal could be won; move 3: r7f lost a won game." in lines
    assert any(line.startswith("; A winning line from after move 2: ") for line in lines)
    losing = re.compile(r"3\. r7f \S+( \+\S+)* ; lost a won game \(won -> lost\)")
    assert any(losing.fullmatch(line) for line in lines)
    child = spawn("verify", "--file", str(saved), **SIZE)  # the comments are skipped
    child.expect(words("fair"))
    assert finish(child) == 0
    child = spawn("replay", "--file", str(saved), "--no-color", **SIZE)
    term = Term(child, **SIZE)
    try:
        term.wait(words("step 0/4 (the deal)"))
        term.type("4")
        term.wait(words("step 4/4 (resigned)"))
        term.type("q")
        assert finish(child) == 0
    finally:
        child.close(force=True)


def played(server: ServerProcess, tmp_path: Path) -> str:
    """A solo game of PLAYED on SEED (resigned when the script ends), analysed by the server:
    its room."""
    script = tmp_path / "moves.txt"
    script.write_text("\n".join(PLAYED) + "\n")
    child = spawn(
        "play", "--server", server.url, "--variant", "quadrennial", "--seed", str(SEED),
        "--name", "ann", "--no-color", "--moves", str(script), **SIZE,
    )  # fmt: skip
    try:
        child.expect(r"room ([a-z0-9]+)")
        room = child.match.group(1)
        assert finish(child) == 0
    finally:
        child.close(force=True)
    child = spawn("analyse", room, "--player", "ann", "--server", server.url, "--wait", "60")
    child.expect("lost a won game")
    assert finish(child) == 0
    return str(room)


def test_analyse_of_a_room_that_is_not_there(server: ServerProcess) -> None:
    child = spawn("analyse", "zzzzzzzz", "--player", "ann", "--server", server.url, **SIZE)
    child.expect(words("no room 'zzzzzzzz'"))
    assert finish(child) == 2
