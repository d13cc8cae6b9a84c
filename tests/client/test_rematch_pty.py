"""A rematch as two racers and a spectator see it, through real pseudo-terminals at 80x24
against a real server on a real Redis: the race ends, one asks, the other follows, they race
again in one new room."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

SIZE = {"columns": 80, "rows": 24}


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=["--redis-prefix", f"t{uuid.uuid4().hex[:8]}:"],
    )
    process.start()
    yield process
    process.stop()


def run(server: ServerProcess, name: str, *args: str) -> pexpect.spawn:
    return spawn(
        *args, "--server", server.url, "--no-color", env_extra={"SOLITAIRE_NAME": name}, **SIZE
    )


def test_a_finished_race_is_raced_again_by_rematch(server: ServerProcess) -> None:
    ann = run(server, "ann", "race", "create", "--countdown", "1")
    children = [ann]
    try:
        ann.expect(r"Room ([a-z0-9]+): join with")
        code = ann.match.group(1)
        bob = run(server, "bob", "race", "join", code)
        watcher = run(server, "cy", "watch", code)
        children += [bob, watcher]
        bob.expect("waiting for the race to start")
        ann.expect("bob")
        type_line(ann, "rematch")
        ann.expect("rematch: once the race is over")
        type_line(ann, "start")
        for racer in (ann, bob):
            racer.expect("Go! The race has started")
        type_line(ann, "resign")
        type_line(ann, "y")
        type_line(bob, "resign")
        type_line(bob, "y")
        for racer in (ann, bob):
            racer.expect("Race over: every game is done")
            racer.expect(words("Next: 'rematch' to race them again"))

        type_line(ann, "rematch")
        ann.expect(rf"Rematch of room {code}: you are in room ([a-z0-9]+)\.")
        rematch = ann.match.group(1)
        assert rematch != code
        bob.expect(words(f"A rematch is on in room {rematch}: type 'rematch' to race again."))
        watcher.expect(words(f"A rematch is on in room {rematch}: 'solitaire watch {rematch}'."))
        type_line(bob, "rematch")
        bob.expect(words(f"Rematch of room {code}: you are in room {rematch}."))
        ann.expect("bob")  # seated beside ann in the rematch's lobby
        type_line(ann, "start")
        for racer in (ann, bob):
            racer.expect("Go! The race has started")
        type_line(bob, "quit")
        type_line(bob, "y")
        assert finish(bob) == 0
        ann.expect(words("bob resigned"))
        type_line(ann, "quit")
        type_line(ann, "y")
        assert finish(ann) == 0
        type_line(watcher, "quit")
        assert finish(watcher) == 0
    finally:
        for child in children:
            child.close(force=True)
