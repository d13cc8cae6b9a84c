"""`solitaire race quick` through real pseudo-terminals at 80x24 against a real server on a
real Redis: two logged-in players found by the queue, the waiting line, the race and the rating
change; Ctrl-C leaving the queue; and a match that falls through (a player never sat down, or
left in the countdown) searching again until a race."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pexpect
import pytest

from server.matchmaking.domain.queues import queue_key
from server.race.services.presence import PROCESSES_INDEX
from server.store import RedisEventStore
from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

SIZE = {"columns": 80, "rows": 24}
RANGE = r"range (±|\+-)"


@pytest.fixture
def prefix() -> str:
    return f"t{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def server(redis_server: RedisServer, prefix: str, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        # Matched players sit down within milliseconds: a room waits 4 s for one who does not.
        extra_args=["--redis-prefix", prefix, "--seat-wait-s", "4"],
    )
    process.start()
    yield process
    process.stop()


def user(tmp_path: Path, name: str) -> dict[str, str]:
    home = tmp_path / name
    home.mkdir()
    return {"XDG_STATE_HOME": str(home), "SOLITAIRE_NAME": name}


def run(server: ServerProcess, env: dict[str, str], *args: str) -> pexpect.spawn:
    return spawn(*args, "--server", server.url, "--no-color", env_extra=env, **SIZE)


def register(server: ServerProcess, env: dict[str, str], name: str) -> None:
    child = run(server, env, "register", name, "--password-stdin")
    type_line(child, f"{name}'s long secret")
    child.expect(f"Registered and logged in as {name}.")
    assert finish(child) == 0


def test_two_logged_in_players_are_matched_race_and_see_their_ratings(
    server: ServerProcess, tmp_path: Path
) -> None:
    ann_env, bob_env = user(tmp_path, "ann"), user(tmp_path, "bob")
    register(server, ann_env, "ann")
    register(server, bob_env, "bob")
    ann = run(server, ann_env, "race", "quick")
    bob = None
    try:
        ann.expect(r"searching for a swiss race: 1 waiting, 0:0\d, " + RANGE + "100")
        ann.expect(r"searching for a swiss race: 1 waiting, 0:0[1-9]")  # the clock runs
        bob = run(server, bob_env, "race", "quick")
        for racer in (ann, bob):
            racer.expect("Go! The race has started", timeout=30)
        type_line(ann, "resign")
        ann.expect("Resign this game")  # as a person, who reads it first
        type_line(ann, "y")
        ann.expect("Waiting for the others")
        type_line(bob, "resign")
        bob.expect("Resign this game")  # as a person, who reads it first
        type_line(bob, "yes")
        for racer in (ann, bob):
            racer.expect("Race over: every game is done")
            # Both resigned with no card up: the order they sat down in ranks them.
            racer.expect(r"Ratings: ([^\r\n\x1b]+)")
            line = racer.match.group(1)
            changes = re.findall(r"(ann|bob) 1500 → \d+ \(([+-])\d+\)", line)
            assert sorted(changes) in ([("ann", "+"), ("bob", "-")], [("ann", "-"), ("bob", "+")])
        type_line(ann, "quit")
        type_line(bob, "quit")
        assert finish(ann) == 0
        assert finish(bob) == 0
    finally:
        ann.close(force=True)
        if bob is not None:
            bob.close(force=True)


def test_ctrl_c_leaves_the_queue(server: ServerProcess, tmp_path: Path) -> None:
    env = user(tmp_path, "cy")
    child = run(server, env, "race", "quick", "--players", "3")
    try:
        child.expect(r"searching for a swiss race of 3 \(guests, unrated\): 1 waiting")
        child.sendintr()
        child.expect("Left the queue.")
        assert finish(child) == 130
    finally:
        child.close(force=True)
    # Nobody is left waiting: the next guest is alone in the queue.
    other = run(server, user(tmp_path, "di"), "race", "quick", "--players", "3")
    try:
        other.expect(r"searching for a swiss race of 3 \(guests, unrated\): 1 waiting")
        other.expect(r"1 waiting, 0:0[2-9]")
    finally:
        other.close(force=True)


@pytest.mark.long
def test_a_match_that_falls_through_searches_again_until_a_race(
    server: ServerProcess, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    ann = run(server, user(tmp_path, "ann"), "race", "quick")
    bob = cy = None
    try:
        ann.expect(r"searching for a swiss race \(guests, unrated\): 1 waiting")
        # A guest whose connection closes as the room is formed: queued, never seated.
        asyncio.run(queue_a_ghost(redis_server, prefix))
        ann.expect(words("the race starts when everyone is seated"), timeout=15)
        # The seat wait after the room was formed, ann is told why it closed and searches again.
        ann.expect(words("sat down, or stayed, for the start. Searching again"), timeout=30)
        ann.expect(r"searching for a swiss race \(guests, unrated\): 1 waiting")
        # Bob is matched with her and quits in the countdown: his seat is freed at once, and
        # ann does not race alone (and unrated) by surprise: she searches again.
        bob = run(server, user(tmp_path, "bob"), "race", "quick")
        bob.expect(words("The race starts in"), timeout=15)
        type_line(bob, "quit")
        assert finish(bob) == 0
        ann.expect(words("Searching again"), timeout=15)
        cy = run(server, user(tmp_path, "cy"), "race", "quick")
        for racer in (ann, cy):
            racer.expect("Go! The race has started", timeout=30)
    finally:
        for child in (ann, bob, cy):
            if child is not None:
                child.close(force=True)


async def queue_a_ghost(redis: RedisServer, prefix: str) -> None:
    store = RedisEventStore(redis.url, prefix=prefix)
    try:
        process = (await store.index_range(PROCESSES_INDEX))[0].member  # the server's, beating
        info = {"j": int(time.time() * 1000), "p": process, "n": "ghost", "a": None}
        key = queue_key("swiss", 2, rated=False)
        assert await store.queue_join(key.name, "pghost", 0, msgpack.packb(info))
    finally:
        await store.aclose()
