"""The fair-play assessment end to end, on a real server process that analyses every game: a
scripted player races rated Quadrennial races over the protocol, plays the first pass as the
greedy player does, then, the whole deck known from the cards it saw, the solver's line with a
script's delays; with no report filed, it appears in the moderators' queue by itself, flagged,
and `mod_show` lists its analysed games with the focus its page lost, which its rival never
sees. The rival resigns at once, as a person's own games are the other tests' business."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.game import apply_move, lay_out
from shared.solver.search import solve
from shared.solver.verdict import Status
from shared.views import PublicView, public_fold_event, public_legal_moves
from tests.server.accounts.test_accounts_e2e import ask, hello
from tests.server.wsclient import Client
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # a server process

RACES = 6
STOCK = 44  # Quadrennial's stock: once every card of it was seen, the deck is known
_ORDER = {"wf": 0, "d": 2, "redeal": 3}  # the greedy player's (shared.solver.hint.good_move)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        log_path=tmp_path / "server.log",
        extra_args=["--rate", "1000", "--burst", "1000", "--moderators", "mia",
                    "--fairplay-sweep-s", "0.2", "--analysis-max-nodes", "quadrennial=80000"],
    )  # fmt: skip
    server.start()
    yield server
    server.stop()


async def account(url: str, name: str) -> Client:
    client, _ = await hello(url, name)
    await ask(client, {"type": "register", "name": name, "password": f"pw-{name * 4}"}, "account")
    return client


class Script:
    """The cheat's client: what it has seen of its own game, and the line it follows."""

    def __init__(self, client: Client, player: str, rng: random.Random) -> None:
        self.client, self.player, self.rng = client, player, rng
        self.view: PublicView | None = None
        self.reserve: list[str] = []
        self.seen: list[str] = []  # the stock's cards in the order they came up
        self.moves: list[str] = []
        self.line: list[str] = []
        self.version = 0

    async def next_event(self) -> dict[str, Any]:
        self.version += 1
        msg = await self.client.expect(
            "game_event", lambda m: m["player"] == self.player and m["version"] == self.version
        )
        event: dict[str, Any] = msg["event"]
        self.view = public_fold_event(self.view, event)
        self.seen.extend(event.get("revealed", ()))
        return event

    def solved(self) -> None:
        """The whole deck from what it saw, the position from its moves, then the line."""
        state = lay_out("quadrennial", [*self.reserve, *self.seen])
        for move in self.moves:
            state = apply_move(state, move)
        solution = solve(state, max_nodes=200_000)
        self.line = list(solution.moves) if solution.status is Status.WON else []

    async def play(self) -> None:
        started = await self.next_event()
        self.reserve = list(started["layout"]["reserve"])
        asked = False
        while self.view is not None and (legal := public_legal_moves(self.view)):
            known = len(self.seen) == STOCK and "redeal" in self.moves
            if known and not asked:
                self.solved()
                asked = True
            move = (
                self.line.pop(0) if self.line else min(legal, key=lambda m: (_ORDER.get(m, 1), m))
            )
            if known:  # a person's pace, whatever the position
                await asyncio.sleep(self.rng.lognormvariate(-5.6, 0.4))
            assert (await self.client.move(move))["type"] == "ack"
            if len(self.moves) in (3, 9):  # a second window over the race's, twice a game
                await self.client.send({"type": "focus_lost"})
            self.moves.append(move)
            await self.next_event()


async def race(cal: Client, ann: Client, rng: random.Random) -> None:
    room = (await ask(cal, {"type": "create_room", "variant": "quadrennial", "capacity": 2,
                            "countdown_ms": 0}, "room"))["room"]  # fmt: skip
    assert room["rated"] is True
    joined = await ask(cal, {"type": "join", "room": room["id"]}, "joined")
    await ask(ann, {"type": "join", "room": room["id"]}, "joined")
    await cal.send({"type": "start"})
    await ann.expect("started")
    await ann.send({"type": "resign"})
    await Script(cal, joined["player"], rng).play()
    await cal.expect("finished")
    await ask(cal, {"type": "leave"}, "left")
    await ask(ann, {"type": "leave"}, "left")


async def test_a_player_of_the_solvers_line_is_flagged_by_itself(served: ServerProcess) -> None:
    url = served.url
    cal, ann, mia = await account(url, "cal"), await account(url, "ann"), await account(url, "mia")
    rng = random.Random(5)
    for _ in range(RACES):
        await race(cal, ann, rng)
    for _ in range(300):  # each room is assessed once its analysis is in
        rows = (await ask(mia, {"type": "mod_queue"}, "mod_queue_rows"))["rows"]
        if rows and rows[0]["flag"] and rows[0]["flag"]["games"] == RACES:
            break
        await asyncio.sleep(0.1)
    (row,) = rows
    assert (row["name"], row["reports"]) == ("cal", 0)
    assert row["flag"]["level"] in ("likely assisted", "assisted")
    assert "think time ignores the position" in row["flag"]["evidence"]
    shown = await ask(mia, {"type": "mod_show", "name": "cal"}, "mod_account")
    assert shown["assessment"]["level"] == row["flag"]["level"]
    assert len(shown["games"]) == RACES
    assert {g["kind"] for g in shown["games"]} == {"race"}
    assert {g["deal"] for g in shown["games"]} - {"unknown"}  # analysed before assessed
    assert [g["focus_lost"] for g in shown["games"]] == [2] * RACES
    assert not [m for m in ann.messages if "focus" in repr(m)]  # never shown to a rival
    ann_shown = await ask(mia, {"type": "mod_show", "name": "ann"}, "mod_account")
    assert ann_shown["assessment"]["level"] == "clean"  # resigned at once: nothing to say
    for client in (cal, ann, mia):
        await client.close()
