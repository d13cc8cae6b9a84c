"""`solitaire challenge create`, `play`, `show` and `list`, and `rooms`, through real
pseudo-terminals at 80x24 against a real server on a real Redis: ann challenges bob, plays,
and sees nothing of the standings until bob has played too; then both see them, settled."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect

from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.server_process import ServerProcess

SIZE = {"columns": 80, "rows": 24}


def run(server: ServerProcess, env: dict[str, str], *args: str) -> pexpect.spawn:
    return spawn(*args, "--server", server.url, "--no-color", env_extra=env, **SIZE)


def account(server: ServerProcess, tmp_path: Path, name: str) -> dict[str, str]:
    home = tmp_path / name
    home.mkdir()
    env = {"XDG_STATE_HOME": str(home), "SOLITAIRE_NAME": name}
    child = run(server, env, "register", name, "--password-stdin")
    type_line(child, f"{name}'s long secret")
    child.expect(f"Registered and logged in as {name}.")
    assert finish(child) == 0
    return env


def play_and_resign(server: ServerProcess, env: dict[str, str], code: str) -> None:
    child = run(server, env, "challenge", "play", code)
    try:
        child.expect(words(f"Challenge {code}: one attempt"))
        type_line(child, "resign")
        child.expect("Resign this game")
        type_line(child, "y")
        child.expect(words("You resigned"))
        type_line(child, "quit")
        assert finish(child) == 0
    finally:
        child.close(force=True)


def test_a_challenge_made_played_and_shown(server: ServerProcess, tmp_path: Path) -> None:
    ann = account(server, tmp_path, "ann")
    bob = account(server, tmp_path, "bob")

    child = run(server, ann, "challenge", "create", "--to", "bob", "--variant", "quadrennial")
    child.expect(r"Challenge ([a-z2-9]{10}) \(quadrennial\) for bob; closes")
    code = str(child.match.group(1))
    child.expect(words(f"play it: solitaire challenge play {code}"))
    child.expect(re.escape(f"/play?challenge={code}"))
    assert finish(child) == 0

    child = run(server, bob, "rooms")
    child.expect("Your open challenges:")
    child.expect(words(f"{code} quadrennial by ann"))
    child.expect(words("(your turn)"))
    assert finish(child) == 0

    play_and_resign(server, ann, code)
    child = run(server, ann, "challenge", "play", code)
    child.expect(words(f"you have played challenge {code}"))
    assert finish(child) != 0

    child = run(server, bob, "challenge", "show", code)
    child.expect(words("the standings are shown once you have played it"))
    child.expect(words(f"your turn: solitaire challenge play {code}"))
    assert finish(child) == 0

    play_and_resign(server, bob, code)
    child = run(server, bob, "challenge", "show", code)
    child.expect(words("over (all played), 2 of 2 played"))
    child.expect(r"seed \S+ \(salt [0-9a-f]+\): matches the commitment")
    child.expect(r"\s+1\s+\w+\s+resigned")
    child.expect(r"\s+2\s+\w+\s+resigned")
    assert finish(child) == 0

    child = run(server, ann, "challenge", "list")
    child.expect(words(f"{code} quadrennial by ann 2/2 over (you resigned, place"))
    assert finish(child) == 0
    child = run(server, ann, "profile")
    child.expect(words("Finished challenges"))
    child.expect(words(f"{code} quadrennial by ann place"))
    child.expect(rf"{code}\s+quadrennial\s+place \d/2\s+\d+ \([+-]?\d+\) \(challenge\)")
    assert finish(child) == 0
