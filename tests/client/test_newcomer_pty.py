"""What a newcomer meets, end to end: the real client in a pseudo-terminal read back
through a terminal emulator, scripts against a real server, and every bad input ending in one
line and a documented exit status (cli.EXIT_CODES)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import new_game, public_view
from shared.deal import canonical_seed, deal_deck
from shared.game import apply_move, is_won, legal_moves
from tests.client.pty_driver import ROOT, Term, finish, spawn
from tests.support.ports import free_port
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a process

HUGE_SEED = "18446744073709551616"  # 2**64: no msgpack integer holds it


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(log_path=tmp_path / "server.log")
    process.start()
    yield process
    process.stop()


def run(*args: str, stdin: str = "", timeout: float = 60, env: dict[str, str] | None = None):
    """`python -m client ARGS` with no terminal: (status, stdout, stderr)."""
    result = subprocess.run(
        [sys.executable, "-m", "client", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(ROOT),
        check=False,
        env={**os.environ, **(env or {})},
    )
    return result.returncode, result.stdout, result.stderr


def greedy_quadrennial(seed: int) -> list[str]:
    """A winning move list for a Quadrennial deal: always a card to a foundation when one goes
    (RULES.md, "Quadrennial": foundation cards never move again, so this never blocks), else
    deal, else redeal."""
    state = new_game("quadrennial", seed=seed)
    moves = []
    while legal := legal_moves(state):
        to_foundation = sorted(m for m in legal if m.endswith("f"))
        move = to_foundation[0] if to_foundation else ("d" if "d" in legal else "redeal")
        moves.append(move)
        state = apply_move(state, move)
    assert is_won(state)
    return moves


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (100, 40), (40, 12)])
@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
def test_the_offline_game_fits_every_window(variant: str, columns: int, rows: int) -> None:
    child = spawn(
        "play", "--offline", "--seed", "7", "--variant", variant, "--no-color",
        columns=columns, rows=rows,
    )  # fmt: skip
    term = Term(child, columns, rows)
    try:
        if columns < 79:
            text = term.wait(r"Window too small")
            joined = " ".join(text.split())
            assert "needs at least 45x" in joined
            assert f"this one is {columns}x{rows}" in joined
        else:
            term.wait(r"Your move")
            shown = term.lines()
            assert shown[0].startswith(f"Solitaire Arena - {variant.capitalize()} - seed 7")
            assert "0 moves" in shown[0]
            last_pile = "t9" if variant == "swiss" else "r8"
            assert any(last_pile in row for row in shown)
            term.type("d")
            term.wait(r"played d")
            assert "1 move" in term.lines()[0]
        term.type("quit")
        term.wait(r"Quit now and this game is gone")
        term.type("y")
        assert finish(child) == 0
    finally:
        child.close(force=True)


def test_a_resized_window_is_laid_out_again() -> None:
    child = spawn("play", "--offline", "--seed", "7", "--no-color", columns=80, rows=24)
    term = Term(child, 80, 24)
    try:
        term.wait(r"Your move")
        child.setwinsize(12, 40)
        term.screen.resize(12, 40)
        term.wait(r"Window too small")
        child.setwinsize(24, 80)
        term.screen.resize(24, 80)
        text = term.wait(r"t9")
        assert "Window too small" not in text
        term.type("hint")
        # Offline the solver answers; seed 7 is beyond its budget, so the heuristic's move is.
        term.wait(r"Hint: no winning line proved within [\d,]+ nodes; a good move: \S+")
    finally:
        child.close(force=True)


def test_help_rules_pages_through_the_rules_of_this_game() -> None:
    child = spawn(
        "play", "--offline", "--seed", "3", "--variant", "quadrennial", "--no-color", rows=24
    )
    term = Term(child, 80, 24)
    try:
        term.wait(r"Your move: e\.g\. 5 \(r5 to its foundation\), wf, d or redeal")
        term.type("help rules")
        text = term.wait(r"The rules of Quadrennial")
        assert "Enter for more, q to close" in text
        assert "SWISS" not in text  # only this game's rules
        term.type("")
        term.wait(r"Redeals\. When the stock is empty")
        term.type("q")
        term.wait(r"Your move")
        assert "r8" in term.text()  # the board is back
        term.type("help")
        term.wait(r"redeal turns the waste over")
    finally:
        child.close(force=True)


def test_solitaire_rules_prints_each_game() -> None:
    status, out, _ = run("rules", "swiss")
    assert status == 0
    assert "SWISS" in out
    assert "Each foundation starts with a Two" in out
    assert "QUADRENNIAL" not in out
    status, out, _ = run("rules")
    assert status == 0
    assert "SWISS" in out and "QUADRENNIAL" in out  # noqa: PT018
    assert "open seed: the creator knows the deck" in out


@pytest.mark.long
def test_the_rules_ship_inside_an_installed_wheel(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-t", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # Run from elsewhere, so only the installed copy can be found.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import client.rules as r; print(r.__file__); print(r.rules_text())",
        ],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(target)},
        check=True,
    )
    assert result.stdout.startswith(str(target))
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") in result.stdout


def test_130_scripted_quadrennial_moves_win_against_a_server_in_full(
    server: ServerProcess, tmp_path: Path
) -> None:
    moves = greedy_quadrennial(19)
    assert len(moves) == 130
    script = tmp_path / "win.moves"
    script.write_text("\n".join(moves) + "\n")
    status, out, err = run(
        "play", "--server", server.url, "--variant", "quadrennial", "--seed", "19",
        "--moves", str(script), timeout=120,
    )  # fmt: skip
    assert status == 0, err
    assert "rejected" not in out
    assert "You won in 130 moves!" in out


def test_a_refused_scripted_move_exits_3(server: ServerProcess) -> None:
    status, out, _ = run(
        "play", "--server", server.url, "--seed", "1", "--moves", "-", stdin="d\nt1f\nd\n"
    )
    assert status == 3
    assert "t1f: rejected: Q♠ cannot go to its foundation, which takes a Two" in out
    assert out.rstrip().endswith("1 scripted move refused")
    status, out, _ = run("play", "--offline", "--seed", "1", "--moves", "-", stdin="zz\n")
    assert status == 3
    assert "zz: rejected: cannot read 'zz' as a move" in out


def test_a_huge_seed_deals_the_same_game_as_its_text(server: ServerProcess) -> None:
    assert canonical_seed(int(HUGE_SEED)) == canonical_seed(HUGE_SEED)
    status, out, err = run(
        "play", "--server", server.url, "--seed", HUGE_SEED, "--moves", "-", "--json",
        stdin="resign\n",
    )  # fmt: skip
    assert status == 0, err
    assert "Traceback" not in err
    expected = public_view(new_game("swiss", deck=deal_deck("swiss", HUGE_SEED)))
    assert expected.tableau[8][0] in out  # t9's one card, as the layout sent it
    status, out, err = run("play", "--offline", "--seed", HUGE_SEED, "--moves", "-", stdin="")
    assert status == 0, err
    assert f"seed {HUGE_SEED}" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "--seed", ""], "a seed cannot be empty"),
        (["play", "--seed", "x" * 65], "a seed is at most 64 characters"),
        (["race", "join", ""], "a room code cannot be empty"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str) -> None:
    status, _, err = run(*args)
    assert status == 2
    assert message in err
    assert "Traceback" not in err
    assert "Future exception" not in err


def test_unknown_room_in_any_case_is_said_once(server: ServerProcess) -> None:
    status, out, err = run("race", "join", "NOSUCHRM", "--server", server.url, "--moves", "-")
    assert status == 2
    lines = [line for line in err.splitlines() if line]
    assert lines == [
        "solitaire: there is no room nosuchrm on this server (check the code; 'solitaire rooms' "
        "lists the open ones)"
    ]
    assert "no_such_room" not in out


def test_room_codes_are_case_insensitive(server: ServerProcess) -> None:
    ann = spawn("race", "create", "--server", server.url, "--name", "ann", "--no-color")
    bob = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        bob = spawn("race", "join", code.upper(), "--server", server.url, "--name", "bob",
                    "--no-color")  # fmt: skip
        bob.expect(f"Room {code}: waiting for the race to start")
        ann.expect("bob")  # on ann's panel: the same room
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:1", "cannot reach the server at http://127.0.0.1:1"),
        ("ws://127.0.0.1:1", "cannot reach the server at ws://127.0.0.1:1"),
        ("nonsense", "cannot reach the server at nonsense"),
    ],
)
def test_a_wrong_server_url_is_one_line(url: str, message: str) -> None:
    status, _, err = run("rooms", "--server", url)
    assert status == 1
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1
    assert message in lines[0]


def test_an_ascii_only_terminal_plays_with_suit_letters() -> None:
    status, out, err = run(
        "play", "--offline", "--seed", "1", "--moves", "-", stdin="d\nt1f\n",
        env={"PYTHONIOENCODING": "ascii"},
    )  # fmt: skip
    assert status == 3, err
    assert "Traceback" not in err
    assert "Waste: 3c (1 card)" in out
    assert "t1f: rejected: Qs cannot go to its foundation" in out
    out.encode("ascii")


def test_ctrl_c_in_a_race_keeps_the_seat_and_join_takes_it_back(
    server: ServerProcess, state_home: Path
) -> None:
    common = ("--server", server.url, "--seed", "1", "--no-color")
    ann = spawn("race", "create", "--name", "ann", "--players", "2", "--countdown", "0", *common)
    bob = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        bob = spawn("race", "join", code, "--name", "bob", *common)
        bob.expect("Your move")
        bob.send("d\r")
        bob.expect("played d")
        seats = list((state_home / "solitaire").glob("seat-*.json"))
        assert len(seats) == 2  # ann's and bob's
        assert {oct(p.stat().st_mode & 0o777) for p in seats} == {"0o600"}
        assert oct((state_home / "solitaire").stat().st_mode & 0o777) == "0o700"
        bob.sendintr()  # Ctrl-C: no resignation
        bob.expect(f"Left room {code} without resigning")
        bob.expect(f"solitaire race join {code}")
        assert finish(bob) == 130
        ann.expect(r"bob\s+0\s+1 away")  # bob is still in the race, away
        ann.expect(r"bob — disconnected 0:0\d")
        bob = spawn("race", "join", code, "--name", "bob", *common)
        bob.expect(r"\b1 move\b")  # bob's own game, where he left it
        bob.expect(f"Took your seat back in room {code}: the game goes on")
        bob.send("resign\r")
        bob.send("y\r")
        ann.expect("bob resigned with 0 cards on the foundations.")
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)


def test_quit_asks_before_it_resigns_a_live_online_game(server: ServerProcess) -> None:
    ann = spawn("play", "--server", server.url, "--seed", "1", "--name", "ann", "--no-color")
    try:
        ann.expect("Your move")
        ann.send("quit\r")
        ann.expect("Quit now and you resign this game")
        ann.send("no\r")
        ann.expect("Kept playing.")
        ann.send("d\r")
        ann.expect("played d")
        ann.send("quit\r")
        ann.send("y\r")
        assert finish(ann) == 0
    finally:
        ann.close(force=True)


def _serve(*args: str, data_home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "serve"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
        start_new_session=True,
        env={**os.environ, "XDG_DATA_HOME": str(data_home)},
    )


def test_serve_says_where_to_connect_and_a_busy_port_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    first = _serve("--port", str(port), data_home=tmp_path)
    try:
        assert first.stderr is not None
        said = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = first.stderr.readline()
            said.append(line)
            if "Race a friend" in line or not line:
                break
        text = "".join(said)
        assert f"Solitaire Arena is serving on ws://127.0.0.1:{port}" in text
        assert f"solitaire play --server ws://127.0.0.1:{port}" in text
        # Where the data lives: the default data directory, under XDG_DATA_HOME.
        assert f"Accounts, ratings and races are kept in {tmp_path / 'solitaire-arena'}" in text
        # A second one on the same port: one line, no traceback, a failing status.
        second = _serve("--port", str(port), data_home=tmp_path / "second")
        _, err = second.communicate(timeout=120)
        assert second.returncode == 1
        lines = [line for line in err.splitlines() if line and "pip" not in line.lower()]
        assert lines[-1] == (
            f"scripts/serve: cannot listen on 127.0.0.1:{port}: the address is already in use "
            "(another server running? choose another --port)"
        )
        assert "Traceback" not in err
        # The server itself, started directly on the busy port, says the same in one line.
        direct = subprocess.run(
            [sys.executable, "-m", "server", "--port", str(port), "--store", "memory"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert direct.returncode == 1
        assert direct.stderr.strip().splitlines() == [
            f"solitaire-server: cannot listen on 127.0.0.1:{port}: the address is already in "
            "use (another server running? choose another --port)"
        ]
    finally:
        os.killpg(first.pid, signal.SIGTERM)
        first.wait(timeout=30)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # the first server is gone, its port free again


def test_a_spectator_watches_4_racers_at_80x24(server: ServerProcess, tmp_path: Path) -> None:
    """Four scripted racers, one spectator in an 80x24 terminal: every board fits, labelled
    with the racer's number and name, the title stays on the first row, the results show."""
    script = tmp_path / "bot.moves"
    script.write_text("d\nd\nresign\n")
    common = ["--server", server.url, "--seed", "1", "--moves", str(script)]
    creator = subprocess.Popen(
        [sys.executable, "-m", "client", "race", "create", "--name", "ann", "--players", "4",
         "--countdown", "1", *common],
        stdout=subprocess.PIPE, text=True, cwd=str(ROOT),
    )  # fmt: skip
    bots: list[subprocess.Popen[str]] = [creator]
    watcher = None
    try:
        assert creator.stdout is not None
        code = creator.stdout.readline().split()[-1]
        watcher = spawn("watch", code, "--server", server.url, "--no-color", columns=80, rows=24)
        term = Term(watcher, 80, 24)
        term.wait(r"Waiting for the race to start")
        for name in ("bob", "山田太郎", "dörte"):
            bots.append(
                subprocess.Popen(
                    [sys.executable, "-m", "client", "race", "join", code, "--name", name, *common],
                    stdout=subprocess.DEVNULL,
                    cwd=str(ROOT),
                )
            )
        text = term.wait(r"Results: 1\.", timeout=60)
        shown = term.lines()
        assert shown[0].startswith(f"Solitaire Arena - watching room {code}")
        # Each board carries its racer's number in the panel, so typing it picks that board.
        rows = [re.search(r"\s([1-4])\s+(\S+)\s+0\s+2 resigned$", row) for row in shown]
        panel = {m.group(2): m.group(1) for m in rows if m}
        assert set(panel) == {"ann", "bob", "山田太郎", "dörte"}
        for name, number in panel.items():
            assert re.search(rf"^{number}\. {name}: 0/52, 2 moves", text, re.MULTILINE), name
        assert "Race over: every game is done." in " ".join(text.split())
        for bot in bots:
            assert bot.wait(timeout=60) == 0
        term.type("quit")
        assert finish(watcher) == 0
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        if watcher is not None:
            watcher.close(force=True)


def test_away_past_the_grace_the_server_resigns_and_join_says_so(tmp_path: Path) -> None:
    server = ServerProcess(log_path=tmp_path / "server.log", extra_args=["--abandon-grace-s", "1"])
    server.start()
    common = ("--server", server.url, "--seed", "1", "--no-color")
    ann = spawn("race", "create", "--name", "ann", "--players", "2", "--countdown", "0", *common)
    bob = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        bob = spawn("race", "join", code, "--name", "bob", *common)
        bob.expect("Your move")
        bob.sendintr()
        assert finish(bob) == 130
        ann.expect("bob resigned with 0 cards on the foundations.")  # by the server, after 1 s
        bob = spawn("race", "join", code, "--name", "bob", *common)
        bob.expect("You resigned with 0 cards on the foundations. Waiting for the others")
        bob.expect(f"Back in room {code}: your game there is over.")
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)
        server.stop()


def test_an_in_memory_server_restart_says_the_game_was_lost(tmp_path: Path) -> None:
    server = ServerProcess(log_path=tmp_path / "server.log")
    server.start()
    ann = spawn("play", "--server", server.url, "--seed", "1", "--name", "ann", "--no-color")
    try:
        ann.expect("Your move")
        server.kill()
        ann.expect("Connection lost: reconnecting")
        server.start()  # the same port, an empty memory store
        ann.expect("The server restarted and lost this game")
        ann.expect("Reconnected, but the game was lost.")
        ann.send("d\r")
        ann.expect("d: this game was lost when the server restarted")
        index = ann.expect(["no seat", r"> \x1b\[K"])
        assert index == 1
        ann.send("quit\r")
        assert finish(ann) == 0
    finally:
        ann.close(force=True)
        server.stop()
