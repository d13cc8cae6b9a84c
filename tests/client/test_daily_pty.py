"""`solitaire daily` and `solitaire daily results` through real pseudo-terminals at 80x24
against a real server on a real Redis: the attempt, the refused second one, the standings."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.server_process import ServerProcess

SIZE = {"columns": 80, "rows": 24}


def run(server: ServerProcess, env: dict[str, str], *args: str) -> pexpect.spawn:
    return spawn(*args, "--server", server.url, "--no-color", env_extra=env, **SIZE)


def test_daily_once_then_results(server: ServerProcess, tmp_path: Path) -> None:
    home = tmp_path / "ann"
    home.mkdir()
    env = {"XDG_STATE_HOME": str(home), "SOLITAIRE_NAME": "ann"}
    child = run(server, env, "register", "ann", "--password-stdin")
    type_line(child, "ann's long secret")
    child.expect("Registered and logged in as ann.")
    assert finish(child) == 0

    child = run(server, env, "daily")
    try:
        child.expect(words("Daily challenge") + r"\s+\d{4}-\d\d-\d\d")
        child.expect(words("one attempt"))
        type_line(child, "resign")
        child.expect("Resign this game")  # as a person, who reads it first
        type_line(child, "y")
        child.expect(words("You resigned"))
        type_line(child, "quit")
        assert finish(child) == 0
    finally:
        child.close(force=True)

    child = run(server, env, "daily")
    child.expect(words("you have played today's swiss daily already"))
    assert finish(child) != 0

    child = run(server, env, "daily", "results")
    child.expect(r"Daily swiss \d{4}-\d\d-\d\d: the day is on; seed and replays at midnight UTC")
    child.expect(r"commitment [0-9a-f]{64}")
    child.expect(r">\s+1\s+ann\s+resigned\s+\d+:\d\d\s+\d+")
    assert finish(child) == 0

    child = run(server, env, "profile")
    child.expect(words("daily challenge: played 1 day in a row, won 0 days in a row"))
    assert finish(child) == 0
