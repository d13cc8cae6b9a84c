"""Reports and moderation through real pseudo-terminals at 80x24, against a real server on a
real Redis that names a moderator: a player reports another, the moderator reads the queue,
closes the account, sees it in the log, and the closed player can no longer log in; then renames
the reporter, who is told at her next login and is shown under the new name."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.pty_driver import finish, type_line, words
from tests.client.test_quick_pty import register, run, user
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess


@pytest.fixture
def refereed(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=["--redis-prefix", f"t{uuid.uuid4().hex[:8]}:", "--moderators", "Mia"],
    )
    process.start()
    yield process
    process.stop()


def test_report_queue_close_and_log_in_the_terminal(
    refereed: ServerProcess, tmp_path: Path
) -> None:
    ann, bob, mia = (user(tmp_path, n) for n in ("ann", "bob", "mia"))
    for env, name in ((ann, "ann"), (bob, "bob"), (mia, "Mia")):
        register(refereed, env, name)

    child = run(refereed, ann, "report", "bob", "--reason", "name", "--note", "an insult")
    child.expect(words("Reported bob (name): a moderator will look."))
    assert finish(child) == 0
    child = run(refereed, ann, "report", "ann", "--reason", "cheat")
    child.expect("you cannot report yourself")
    assert finish(child) == 2

    child = run(refereed, bob, "mod", "queue")
    child.expect("only a moderator may do that")
    assert finish(child) == 2
    child = run(refereed, mia, "mod", "queue")
    child.expect(r"bob\s+1 report: 1 name")
    child.expect("an insult")
    assert finish(child) == 0

    child = run(refereed, mia, "mod", "close", "bob", "--reason", "a name that insults")
    child.expect(words("mia close bob: a name that insults"))
    assert finish(child) == 0
    child = run(refereed, mia, "mod", "queue")
    child.expect("Nothing waits for a moderator.")
    assert finish(child) == 0
    child = run(refereed, mia, "mod", "log")
    child.expect(words("mia close bob: a name that insults"))
    assert finish(child) == 0

    child = run(refereed, bob, "whoami")  # the saved key was revoked with the closing
    child.expect(words("Not logged in (the server no longer knows your key): log in."))
    assert finish(child) == 0
    child = run(refereed, bob, "login", "bob", "--password-stdin")
    type_line(child, "bob's long secret")
    child.expect("is closed by a moderator")
    assert finish(child) == 2

    # A rename: the moderator names the new name, the player is told at the next login (by the
    # new name, with the old password), and everything shows the new name.
    child = run(refereed, mia, "mod", "rename", "ann", "bob", "--reason", "taken")
    child.expect("the name 'bob' is taken")
    assert finish(child) == 2
    child = run(refereed, mia, "mod", "rename", "ann", "Zoe", "--reason", "a rude name")
    child.expect(words("mia rename ann to Zoe: a rude name"))
    assert finish(child) == 0
    child = run(refereed, ann, "login", "Zoe", "--password-stdin")
    type_line(child, "ann's long secret")
    child.expect(words("Notice: a moderator renamed your account from ann to Zoe: a rude name"))
    child.expect(words("Logged in as Zoe."))
    assert finish(child) == 0
    child = run(refereed, ann, "whoami")
    child.expect(words("Logged in as Zoe."))
    assert finish(child) == 0
    child = run(refereed, mia, "profile", "ann")  # the old name finds her, shown as she is now
    child.expect(words("Profile: Zoe"))
    assert finish(child) == 0
