"""`solitaire tournament` through real pseudo-terminals at 80x24 against a real server on a real
Redis: a tournament created from the terminal, two logged-in players who join it and are paired
into one race after another without typing anything between them, berserk halving a racer's
clock, the standings with both races on their sheets between races, Ctrl-C pausing (withdrawn,
the points kept) and `join` again carrying on; and two scripted racers (`--moves`, one with
`--json`) playing their script in every race to the end of the tournament, as a bot would; and
a race whose rival never sat down, after which the player waits to be paired again."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pexpect
import pytest

from server.race.services.presence import PROCESSES_INDEX
from server.runtime.clock import SystemClock
from server.store import RedisEventStore
from server.tournaments.domain.decide import decide_join
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.presence import placed_index, present_index
from tests.client.pty_driver import ROOT, Term, finish, spawn, type_line, words
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

SIZE = {"columns": 80, "rows": 24}
RACE_S = 30  # each race's limit: both racers resign well before it
WAIT_S = 45  # a pairing comes within a few seconds; a loaded machine may take longer


@pytest.fixture
def prefix() -> str:
    return f"t{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path, prefix: str) -> Iterator[ServerProcess]:
    process = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[
            "--redis-prefix",
            prefix,
            "--tournament-min-length-s",
            "10",
            # A paired racer's client sits down by itself within a second; a rival who never
            # does is left out after 5 s.
            "--seat-wait-s",
            "5",
        ],
    )
    process.start()
    yield process
    process.stop()


@pytest.fixture
def children() -> Iterator[list[pexpect.spawn]]:
    started: list[pexpect.spawn] = []
    yield started
    for child in started:
        child.close(force=True)


def user(tmp_path: Path, name: str) -> dict[str, str]:
    home = tmp_path / name
    home.mkdir(exist_ok=True)
    return {"XDG_STATE_HOME": str(home), "SOLITAIRE_NAME": name}


def run(
    server: ServerProcess, env: dict[str, str], children: list[pexpect.spawn], *args: str
) -> pexpect.spawn:
    child = spawn(*args, "--server", server.url, "--no-color", env_extra=env, **SIZE)
    children.append(child)
    return child


def register(
    server: ServerProcess, env: dict[str, str], name: str, children: list[pexpect.spawn]
) -> None:
    child = run(server, env, children, "register", name, "--password-stdin")
    type_line(child, f"{name}'s long secret")
    child.expect(f"Registered and logged in as {name}.")
    assert finish(child) == 0


def two_players_and_a_tournament(
    server: ServerProcess,
    tmp_path: Path,
    children: list[pexpect.spawn],
    race_s: int,
    minutes: float = 3,
) -> tuple[dict[str, str], dict[str, str], str]:
    """ann and bob registered, and a tournament of ``minutes`` ann created from the terminal:
    their environments and its id."""
    ann_env, bob_env = user(tmp_path, "ann"), user(tmp_path, "bob")
    register(server, ann_env, "ann", children)
    register(server, bob_env, "bob", children)
    create = run(server, ann_env, children, "tournament", "create", "Pty Cup", "--minutes",
                 str(minutes), "--race-time", str(race_s))  # fmt: skip
    length = f"{minutes:g} min" if minutes >= 1 else f"{minutes * 60:g} s"
    create.expect(re.compile(r"Tournament (\w+): .*?Join it with '[^']*'\.", re.S))
    code = create.match.group(1)
    said = " ".join(create.after.split())  # type: ignore[union-attr]
    assert said.startswith(f"Tournament {code}: Pty Cup (Swiss, {length}, races of 2"), said
    assert said.endswith(f"Join it with 'solitaire tournament join {code}'."), said
    # At 80 columns the confirmation breaks between words, never inside one.
    lines = create.after.replace("\r", "").splitlines()  # type: ignore[union-attr]
    assert all(len(line) <= 80 for line in lines), lines
    assert "rated, berserk, streaks; 0 players)." in said, said
    assert finish(create) == 0
    return ann_env, bob_env, code


def sheet(races: int) -> str:
    """A sheet of so many races, as the standings write it: figures spaced (a 2 then a 0 is
    never 20), a berserk race's ending in 'b'."""
    return rf"[0-4]b?(?: [0-4]b?){{{races - 1}}}"


def play_and_resign(term: Term, moves: int = 1) -> None:
    """A move (a racer who never moves is withdrawn as absent), then resign."""
    term.type("d")
    term.wait(rf"\b{moves} moves?\b")
    term.type("resign")
    term.wait("Resign this game")
    term.type("y")


@pytest.mark.long
def test_two_players_race_again_and_again_then_pause_and_carry_on(
    server: ServerProcess, tmp_path: Path, children: list[pexpect.spawn]
) -> None:
    ann_env, bob_env, code = two_players_and_a_tournament(server, tmp_path, children, RACE_S)

    listed = run(server, ann_env, children, "tournament", "list")
    listed.expect(rf"{code}\s+Pty Cup\s+swiss\s+3 min\s+0\s+\d\d:\d\d left")
    assert finish(listed) == 0

    ann = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    screen = ann.wait("Waiting to be paired")
    # The header names the tournament and its id, once.
    assert screen.splitlines()[0].rstrip() == f"Solitaire Arena - tournament Pty Cup - {code}"
    bob = Term(run(server, bob_env, children, "tournament", "join", code), **SIZE)
    bob.wait("Waiting to be paired")
    for race in (1, 2):
        # The race opens by itself: nobody types anything between races.
        for term in (ann, bob):
            term.wait(rf"race {race} - room \w+", timeout=WAIT_S)
        if race == 1:
            # Berserk, typed as the race opens (its countdown waits for both racers, then 3 s).
            ann.type("berserk")
            ann.wait(words("Berserk: your clock is halved"))
            bob.wait(words("ann went berserk: their clock is halved."))
        for term in (ann, bob):
            term.wait(words("Go! The race has started"), timeout=WAIT_S)
        if race == 1:
            assert re.search(r"clock 00:(1[0-5]|0\d) left", ann.wait(r"clock \d\d:\d\d left"))
            assert re.search(r"clock 00:(2\d|30) left", bob.wait(r"clock \d\d:\d\d left"))
        play_and_resign(ann)
        play_and_resign(bob)
        # Back to the standings, with the race on both sheets.
        # (One look at the screen: the next pairing comes within seconds.)
        bob.wait(r"Waiting to be paired for", timeout=WAIT_S)
        screen = ann.wait(
            rf"(?s)tournament Pty Cup.*>\s+\d+\s+ann\s+\d+(?: x2)?\s+{sheet(race)}\s.*"
            r"Waiting to be paired for",
            timeout=WAIT_S,
        )
        assert re.search(rf"\n\s+\d+\s+bob\s+\d+(?: x2)?\s+{sheet(race)}\s", screen)
        assert re.search(rf"Your sheet: (\db? ){{{race}}}= \d+ points?, rank \d", screen)
        assert all(len(line) <= 80 for line in screen.splitlines())
    points = int(re.search(r"= (\d+) points?", screen).group(1))  # type: ignore[union-attr]

    # Ctrl-C pauses bob: withdrawn, his points kept.
    bob.child.sendintr()
    bob.wait(words(f"Paused in tournament {code}: your points stay"))
    assert finish(bob.child) == 130
    ann.wait(rf"\n\s+\d+\s+bob\s+\d+(?: x2)?\s+{sheet(2)}\s+\d+\s+paused", timeout=WAIT_S)
    # Alone, ann is not paired; she pauses and leaves with 'quit'.
    ann.type("quit")
    ann.wait(words(f"Paused in tournament {code}"))
    assert finish(ann.child) == 0

    # `join` again carries on: the same sheet, waiting again.
    again = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    screen = again.wait(
        rf">\s+\d+\s+ann\s+\d+(?: x2)?\s+{sheet(2)}\s+\d+\s+waiting", timeout=WAIT_S
    )
    assert f"= {points} point" in screen
    again.type("pause")
    again.wait(words("Paused: you are not paired"))
    again.type("quit")
    assert finish(again.child) == 0


@pytest.mark.long
def test_ctrl_c_in_a_race_keeps_the_seat_and_join_takes_it_back(
    server: ServerProcess, tmp_path: Path, children: list[pexpect.spawn]
) -> None:
    ann_env, bob_env, code = two_players_and_a_tournament(server, tmp_path, children, RACE_S)
    ann = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    bob = Term(run(server, bob_env, children, "tournament", "join", code), **SIZE)
    for term in (ann, bob):
        term.wait(words("Go! The race has started"), timeout=WAIT_S)
    ann.type("d")
    ann.wait(r"\b1 move\b")
    # Ctrl-C mid-race: paused in the tournament, the race's seat kept for the grace.
    ann.child.sendintr()
    ann.wait(words(f"Paused in tournament {code}: your points stay"))
    ann.wait(words("Your seat in race room"))
    assert finish(ann.child) == 130
    # `join` again takes the seat back, with the move made, and the race goes on.
    again = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    again.wait(words("Took your seat back in room"), timeout=WAIT_S)
    again.wait(r"\b1 move\b")
    play_and_resign(again, moves=2)
    play_and_resign(bob)
    for term in (again, bob):
        term.wait(r"Waiting to be paired for", timeout=WAIT_S)
    screen = again.wait(r">\s+\d+\s+ann\s+\d+(?: x2)?\s+[0-4]\s+\d+\s+waiting")
    assert re.search(r"\n\s+\d+\s+bob\s+\d+(?: x2)?\s+[0-4]\s", screen)
    for term in (again, bob):
        term.type("quit")
        term.wait(words(f"Paused in tournament {code}"))
        assert finish(term.child) == 0


@pytest.mark.long
def test_a_berserk_clock_that_runs_out_is_a_timeout_in_every_line(
    server: ServerProcess, tmp_path: Path, children: list[pexpect.spawn]
) -> None:
    """Berserk said before it is typed and after (the halved clock, in the Go line too); the
    clock running out is told as a timeout, to the racer and the rival, and on the sheet."""
    ann_env, bob_env, code = two_players_and_a_tournament(
        server, tmp_path, children, race_s=20, minutes=1
    )
    ann = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    bob = Term(run(server, bob_env, children, "tournament", "join", code), **SIZE)
    hint = words("Type 'berserk' to race on 00:10 instead of 00:20.")
    ann.wait(hint, timeout=WAIT_S)
    # The countdown's line keeps it: berserk is not typed blind.
    ann.wait(r"Get ready: the race starts in \d\.\.\.(?:\s|\x1b\[K)+" + hint, timeout=WAIT_S)
    ann.type("berserk")
    ann.wait(words("Berserk: your clock is halved to 00:10; a first place in 20 moves"))
    for term, limit in ((ann, "10 seconds"), (bob, "20 seconds")):
        term.wait(words(f"Go! The race has started: {limit} to play."), timeout=WAIT_S)
    # The countdown's lines in the order things happened.
    told = " ".join(bob.text().split())
    lines = ("Paired: race 1 in room", "The race starts in 3 seconds.", "ann went berserk", "Go!")
    at = [told.find(line) for line in lines]
    assert -1 not in at, told
    assert at == sorted(at), told
    ann.type("d")  # one move: a racer who never moves is taken as absent
    room = re.search(r"race 1 - room (\w+)", ann.wait(r"\b1 move\b")).group(1)  # type: ignore[union-attr]
    screen = ann.wait(words("You ran out of time with 0 cards on the foundations."), timeout=20)
    assert "resigned" not in screen.lower()
    screen = bob.wait(words("ann ran out of time with 0 cards on the foundations."), timeout=20)
    assert re.search(r"\b2  ann\s+0\s+1 time up", screen), screen
    assert "resigned" not in screen.lower()
    play_and_resign(bob)
    screen = ann.wait(words("You ran out of time in race 1."), timeout=WAIT_S)
    assert "You resigned" not in screen
    assert "bob resigned with 0 cards" in screen
    assert re.search(r"Results: .*\bann \(0, out of time\)", " ".join(screen.split())), screen
    # The standings' ratings are the live ones: the rated race moved both from their 1500.
    shown = dict(re.findall(r"\b(ann|bob)\s+\d+\s+\db?\s+(\d+)\s+(?:waiting|paused)", screen))
    assert sorted(shown) == ["ann", "bob"], screen
    assert "1500" not in shown.values(), screen
    # The sheet's rating line comes once the server has rated the race, which may be just
    # after the standings (read live) show the new rating.
    ann.wait(words(f"ann 1500 → {shown['ann']}"))
    for term in (ann, bob):
        term.type("quit")
        term.wait(words(f"Paused in tournament {code}"))
        assert finish(term.child) == 0
    # The replay and the export say it too.
    replay = Term(run(server, bob_env, children, "replay", room, "--player", "ann"), **SIZE)
    replay.wait(r"step 0/2 \(the deal\)")
    replay.type("2")
    screen = replay.wait(r"step 2/2 \(ran out of time\)")
    assert "The player ran out of time with 0 cards" in " ".join(screen.split()), screen
    replay.type("q")
    assert finish(replay.child) == 0
    export = run(server, bob_env, children, "export", room, "--player", "ann")
    export.expect(pexpect.EOF)
    record = str(export.before)
    assert '[Result "timed_out"]' in record, record
    assert re.search(r"^resign \d+:\d\d\.\d{3} clock\s*$", record, re.M), record
    assert finish(export) == 0
    # And ann's profile: the race is there, out of time.
    profile = Term(run(server, bob_env, children, "profile", "ann"), **SIZE)
    screen = profile.wait(rf"{room}\s+swiss\s+place \d/2, out of time\s+\d+ \(")
    assert "resign" not in screen
    assert finish(profile.child) == 0


@pytest.mark.long
def test_the_last_stretch_says_no_race_is_coming(
    server: ServerProcess, tmp_path: Path, children: list[pexpect.spawn]
) -> None:
    """Less than a race's time left: nobody is paired, and the wait line says so rather than
    counting a wait that will not end in a race."""
    ann_env, _, code = two_players_and_a_tournament(
        server, tmp_path, children, race_s=20, minutes=0.5
    )
    ann = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    ann.wait(r"Waiting to be paired", timeout=WAIT_S)  # alone: nobody to race
    screen = ann.wait(words("No more races: the last stretch ("), timeout=WAIT_S)
    assert re.search(r"\(00:(?:1\d|20) left, less than a race\)", screen), screen
    assert "Waiting to be paired" not in screen
    ann.type("quit")
    ann.wait(words(f"Paused in tournament {code}"))
    assert finish(ann.child) == 0


def scripted(
    server: ServerProcess, env: dict[str, str], code: str, script: Path, *extra: str
) -> subprocess.Popen[str]:
    """`tournament join` as a script runs it: no terminal, the moves from a file."""
    args = ["tournament", "join", code, "--server", server.url, "--moves", str(script), *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "client", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=str(ROOT),
        env={**os.environ, **env},
    )


def ended(process: subprocess.Popen[str], timeout: float) -> tuple[int, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"still running: {out[-2000:]}\n{err[-2000:]}") from None
    assert not err.strip(), err
    return process.returncode, out


@pytest.mark.timeout(300)
@pytest.mark.long
def test_scripted_racers_play_their_moves_in_every_race_until_the_podium(
    server: ServerProcess, tmp_path: Path, children: list[pexpect.spawn]
) -> None:
    ann_env, bob_env, code = two_players_and_a_tournament(
        server, tmp_path, children, race_s=10, minutes=0.5
    )
    moves = tmp_path / "two-deals.moves"
    moves.write_text("# each race: two deals, then the script is over (resigned)\nd\nd\n")
    ann = scripted(server, ann_env, code, moves, "--json")
    bob = scripted(server, bob_env, code, moves)
    ann_status, ann_out = ended(ann, 200)
    bob_status, bob_out = ended(bob, 60)
    assert (ann_status, bob_status) == (0, 0), (ann_out[-2000:], bob_out[-2000:])

    # --json: every line one JSON object, the messages as `race join --json` prints them.
    messages: list[dict[str, Any]] = [json.loads(line) for line in ann_out.splitlines()]
    rooms = [m["room"] for m in messages if m["type"] == "tournament_paired"]
    assert len(rooms) >= 2  # 20 s of pairing for races of 10 s: paired again and again
    me = {m["room"]: m["player"] for m in messages if m["type"] == "joined" and "player" in m}
    for room in rooms:
        mine = [
            m["event"]
            for m in messages
            if m["type"] == "game_event" and m.get("room") == room and m.get("player") == me[room]
        ]
        # The script from its first line in every race, then resigned: it ran out.
        assert [e.get("move", e["type"]) for e in mine[1:]] == ["d", "d", "resigned"], mine
        assert any(m["type"] == "finished" and m.get("room") == room for m in messages)
    standings = [m for m in messages if m["type"] == "tournament_standings"]
    assert standings[-1]["final"] is True
    assert standings[-1]["me"]["races"] == len(rooms)
    last = [m for m in messages if m["type"] == "tournament"][-1]["tournament"]
    assert last["status"] == "finished"
    assert sorted(row["account"] for row in last["podium"]) == ["ann", "bob"]

    # Without --json: a line per pairing, move and result, then the final standings.
    assert len(re.findall(r"^race \d+ in room \w+ against ann$", bob_out, re.M)) == len(rooms)
    assert bob_out.count("\nd\nd\nresigned\n") == len(rooms)
    assert "Pty Cup: the podium" in bob_out
    # The final standings: nobody is 'waiting' once it is over.
    final = bob_out[bob_out.rindex("Pty Cup: the podium") :]
    assert re.findall(r"^[ >]\s+\d+\s+(?:ann|bob)\s.*\s(\w+)$", final, re.M) == ["done"] * 2, final
    # A race's first place is called so (a win is all 52 cards up), its plural right.
    steps = re.findall(
        r"^\s+(?:1st|2nd)\s+\w+\s+\d+ points?\s+\d+ races?, (\d+ first places?)$", bob_out, re.M
    )
    assert len(steps) == 2, bob_out[-1500:]
    assert all(re.fullmatch(r"1 first place|(?:0|[2-9]\d*) first places", s) for s in steps)
    assert "Paused" not in bob_out  # the tournament ended: nothing to take back


@pytest.mark.parametrize(
    ("left_out", "said"),
    [
        # bob joined, and present on a connection that is gone without a word: he is paired
        # with ann, nobody seats him, and the race closes unfilled.
        ("ghost_rival", "closed: not enough of the players"),
        # ann's process is told to seat her in a race room that is gone by then (seated too
        # late under load, the race having closed): `tournament_paired`, then no seat.
        ("seat_too_late", "Not seated in race room gone1234"),
    ],
)
@pytest.mark.long
def test_a_race_that_never_starts_for_the_player_sends_them_back_to_waiting(
    server: ServerProcess,
    redis_server: RedisServer,
    prefix: str,
    tmp_path: Path,
    children: list[pexpect.spawn],
    left_out: str,
    said: str,
) -> None:
    ann_env, _, code = two_players_and_a_tournament(server, tmp_path, children, RACE_S)
    ann = Term(run(server, ann_env, children, "tournament", "join", code), **SIZE)
    ann.wait(r"Waiting to be paired for", timeout=WAIT_S)
    if left_out == "ghost_rival":
        asyncio.run(join_a_ghost(redis_server, prefix, code, "bob"))
    else:
        asyncio.run(place_in_a_gone_room(redis_server, prefix, code, "ann"))
    ann.wait(words("it starts when everyone is seated"), timeout=WAIT_S)
    screen = ann.wait(words(said), timeout=WAIT_S)
    assert "waiting to be paired again" in " ".join(screen.split()).lower()
    ann.wait(r"Waiting to be paired for", timeout=WAIT_S)
    assert ann.child.isalive()  # still in the tournament, not thrown out with an error
    ann.type("quit")
    ann.wait(words(f"Paused in tournament {code}"))
    assert finish(ann.child) == 0


async def place_in_a_gone_room(
    redis: RedisServer, prefix: str, tournament: str, account: str
) -> None:
    """Tell the process ``account`` follows the tournament on to seat them in a room that
    does not exist (as one closed before a late seat comes)."""
    store = RedisEventStore(redis.url, prefix=prefix)
    try:
        present = None
        for _ in range(100):  # present once the server noted the follow
            present = await store.index_get(present_index(tournament), account)
            if present is not None:
                break
            await asyncio.sleep(0.1)
        assert present is not None
        here = msgpack.unpackb(present.value)
        value = {"t": tournament, "r": "gone1234", "n": 1, "ps": [account, "bob"]}
        now = SystemClock().now_ms()
        await store.index_put(placed_index(here["p"]), here["s"], now, msgpack.packb(value))
    finally:
        await store.aclose()


async def join_a_ghost(redis: RedisServer, prefix: str, tournament: str, account: str) -> None:
    store = RedisEventStore(redis.url, prefix=prefix)
    try:
        book = TournamentBook(store, SystemClock())
        await book.run(tournament, lambda t, now: decide_join(t, account, account, 1500, now))
        process = (await store.index_range(PROCESSES_INDEX))[0].member  # the server's, beating
        now = SystemClock().now_ms()
        value = msgpack.packb({"p": process, "s": "ghost", "t": now - 60_000, "b": False})
        await store.index_put(present_index(tournament), account, now, value)
    finally:
        await store.aclose()
