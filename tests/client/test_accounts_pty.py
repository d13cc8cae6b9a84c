"""Accounts (a new password included), a rated race, the leaderboard and a profile, through
real pseudo-terminals at 80x24 against a real server on a real Redis."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pexpect
import pytest

from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.server_process import ServerProcess

SIZE = {"columns": 80, "rows": 24}


def user(tmp_path: Path, name: str) -> dict[str, str]:
    home = tmp_path / name
    home.mkdir()
    return {"XDG_STATE_HOME": str(home), "SOLITAIRE_NAME": name}


def run(server: ServerProcess, env: dict[str, str], *args: str) -> pexpect.spawn:
    return spawn(*args, "--server", server.url, "--no-color", env_extra=env, **SIZE)


def login(server: ServerProcess, env: dict[str, str], name: str, password: str) -> pexpect.spawn:
    """``solitaire login NAME`` with the password typed at its prompt."""
    child = run(server, env, "login", name)
    child.expect("Password: ")
    type_line(child, password)
    return child


@pytest.mark.long
def test_register_login_a_rated_race_then_leaderboard_and_profile(
    server: ServerProcess, tmp_path: Path
) -> None:
    ann_env, bob_env = user(tmp_path, "ann"), user(tmp_path, "bob")
    password = "ann's long secret"

    # register: the password is asked twice, never echoed.
    child = run(server, ann_env, "register", "ann")
    child.expect("Password: ")
    type_line(child, password)
    child.expect("Password again: ")
    type_line(child, password)
    child.expect("Registered and logged in as ann.")
    assert password not in (child.before or "")
    assert finish(child) == 0
    saved = list(Path(ann_env["XDG_STATE_HOME"], "solitaire").glob("account-*.json"))
    assert len(saved) == 1
    assert stat.S_IMODE(os.stat(saved[0]).st_mode) == 0o600
    assert password not in saved[0].read_text()

    # bob registers from a script, logs out, logs in at the terminal.
    child = run(server, bob_env, "register", "bob", "--password-stdin")
    type_line(child, "bob's long secret")
    child.expect("Registered and logged in as bob.")
    assert finish(child) == 0
    child = run(server, bob_env, "logout")
    child.expect("Logged out.")
    assert finish(child) == 0
    child = run(server, bob_env, "whoami")
    child.expect(r"Not logged in \(guest\)\.")
    assert finish(child) == 0
    child = login(server, bob_env, "BOB", "wrong password")
    child.expect("unknown name or wrong password")
    assert finish(child) == 2
    child = login(server, bob_env, "BOB", "bob's long secret")
    child.expect("Logged in as bob.")
    assert finish(child) == 0
    child = run(server, bob_env, "whoami")
    child.expect("Logged in as bob.")
    assert finish(child) == 0

    # bob logs in on his laptop too, then changes his password here: the laptop's login ends,
    # this one stays.
    laptop_env = user(tmp_path, "laptop")
    child = run(server, laptop_env, "login", "bob", "--password-stdin")
    type_line(child, "bob's long secret")
    child.expect("Logged in as bob.")
    assert finish(child) == 0
    for again, status in (("bob's new secreT", 2), ("bob's new secret", 0)):
        child = run(server, bob_env, "password")
        child.expect("Current password: ")
        type_line(child, "bob's long secret")
        child.expect("New password: ")
        type_line(child, "bob's new secret")
        child.expect("New password again: ")
        type_line(child, again)
        if status:
            child.expect("the two new passwords differ")
        else:
            child.expect("Password changed for bob.")
            child.expect(words("1 other login ended: log in again there with the new password."))
        assert "secret" not in (child.before or "")
        assert finish(child) == status
    child = run(server, laptop_env, "whoami")
    child.expect(words("Not logged in (the server no longer knows your key): log in."))
    assert finish(child) == 0
    child = login(server, laptop_env, "bob", "bob's long secret")
    child.expect("unknown name or wrong password")
    assert finish(child) == 2
    child = run(server, laptop_env, "login", "bob", "--password-stdin")
    type_line(child, "bob's new secret")
    child.expect("Logged in as bob.")
    assert finish(child) == 0

    # A rated race: a secret seed, both logged in.
    ann = run(server, ann_env, "race", "create", "--countdown", "1")
    bob = None
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        ann.expect(words("rated: counts for the racers who are logged in"))
        bob = run(server, bob_env, "race", "join", code)
        bob.expect("waiting for the race to start")
        ann.expect("bob")
        type_line(ann, "start")
        for racer in (ann, bob):
            racer.expect("Go! The race has started")
        type_line(ann, "resign")
        ann.expect("Resign this game")  # as a person, who reads it first
        type_line(ann, "y")
        ann.expect("Waiting for the others")
        type_line(bob, "resign")
        bob.expect("Resign this game")  # as a person, who reads it first
        type_line(bob, "yes")
        for racer in (ann, bob):
            racer.expect("Race over: every game is done")
            # ann joined first: with no card on a foundation, the join order decides.
            racer.expect(words("Ratings: ann 1500 →") + r"\s+(\d+) \(\+(\d+)\)")
            racer.expect(r"bob 1500 → (\d+) \(-(\d+)\)")
        type_line(ann, "quit")
        type_line(bob, "quit")
        assert finish(ann) == 0
        assert finish(bob) == 0
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)

    child = run(server, bob_env, "leaderboard", "--top", "1")
    child.expect(r"Leaderboard: swiss \(2 rated players")
    child.expect(r"\s+1\s+ann\s+\d+\?\s+1\s+0")
    child.expect(r">\s+2\s+bob\s+\d+\?\s+1\s+0")  # bob's own line, outside the top 1
    assert finish(child) == 0

    child = run(server, bob_env, "profile", "ann")
    child.expect("Profile: ann")
    child.expect(r"swiss\s+\d+\?\s+rank 1/2\s+1 game, 0 wins, best win -")
    child.expect(re.escape(f"{code}  swiss        place 1/2"))
    assert finish(child) == 0
