"""A rematch as three racers and a spectator see it, through real pseudo-terminals at 80x24
against a real server on a real Redis: the race ends, one asks, another follows, they race
again in one new room, and the one who asks too late is told where to watch it."""

from __future__ import annotations

import pexpect

from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.server_process import ServerProcess

SIZE = {"columns": 80, "rows": 24}


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
        cy = run(server, "cy", "race", "join", code)
        watcher = run(server, "dee", "watch", code)
        children += [bob, cy, watcher]
        for racer in (bob, cy):
            racer.expect("waiting for the race to start")
        ann.expect("cy")
        type_line(ann, "rematch")
        ann.expect("rematch: once the race is over")
        type_line(ann, "start")
        racers = (ann, bob, cy)
        for racer in racers:
            racer.expect("Go! The race has started")
        for racer in racers:
            type_line(racer, "resign")
            racer.expect("Resign this game")  # as a person, who reads it first
            type_line(racer, "y")
        for racer in racers:
            racer.expect("Race over: every game is done")
            racer.expect(words("Next: 'rematch' to race them again"))

        type_line(ann, "rematch")
        ann.expect(rf"Rematch of room {code}: you are in room ([a-z0-9]+)\.")
        rematch = ann.match.group(1)
        assert rematch != code
        for racer in (bob, cy):
            racer.expect(words(f"A rematch is on in room {rematch}: type 'rematch' to race again."))
        watcher.expect(words(f"A rematch is on in room {rematch}: type 'rematch' to watch it."))
        type_line(bob, "rematch")
        bob.expect(words(f"Rematch of room {code}: you are in room {rematch}."))
        ann.expect("bob")  # seated beside ann in the rematch's lobby
        type_line(watcher, "rematch")  # the spectator follows them
        watcher.expect(r"bob\s+0\s+0\s+waiting")  # the panel, drawn above the message
        watcher.expect(words(f"Watching the rematch in room {rematch}."))
        type_line(ann, "start")
        for racer in (ann, bob):
            racer.expect("Go! The race has started")
        watcher.expect("Watching live.")
        # cy was too slow: the rematch is on without them, and they are told where to watch it.
        type_line(cy, "rematch")
        cy.expect(words(f"the rematch in room {rematch} has already started: 'solitaire watch"))
        assert finish(cy) == 2
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
