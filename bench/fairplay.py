"""How well the fair-play assessment tells cheaters from people (not a test).

    python -m bench.fairplay [--people N] [--cheaters N] [--games N] [--seed N] [--quick]

Simulated accounts race rated Quadrennial races of four through the real server: the App with
its WebSocket endpoint, its analysis process and its assessor, in this process on a simulated
clock (server.runtime.clock.FakeClock: the bench moves it to each move's time, so a race of
simulated minutes takes a fraction of a second, and every time the server records is the
simulated one). Each account registers, creates or joins rooms, moves, sends `focus_lost` and
resigns over the protocol; the server decides everything as for anyone.

- **People** play as the server's bots of levels 1 to 5 (server/bots/domain/player.py: their
  slips, their solver budgets, giving up), each with a person's think time: log-normal around
  the level's median, times a factor of the position, (legal moves / 2.5) ** e, with e drawn
  per person from 0.3 to 1.0 (some people's pace follows the position less), and now and then
  a long pause (3 % of moves, 3 to 8 times longer). A third play in the browser and lose focus
  now and then (0.3 a game on average).
- **Cheaters** play the first pass as the greedy player does, at a person's pace; once the
  stock has been dealt through (the whole deck is known: the first redeal), they play the
  solver's line (found with a budget of CHEAT_NODES positions) with human-like log-normal delays
  (median 1.8 s) that do not depend on the position; when the solver proves no line they go on
  greedily. **Careful cheaters** also slip on purpose (a move off the line one move in 20,
  then the solver again) and vary their delays more. Neither sends focus lost (a terminal).

The assessment sees only what the server records; which simulation an account is, is known
only to this bench. After the last race every game is analysed (the server's analyser at
`--analysis-nodes`) and assessed (the server's assessor); then each account's level is folded
over its first 10 and 20 games. The report: per kind of account, the share flagged "likely
assisted" or above at each checkpoint (with a Wilson 95 % interval), the levels, the mean
timing correlation. The goal: at 20 games at least 90 % of cheaters and at most 1 % of people.

Results go to bench/results/fairplay.json.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect

from bench.common import machine, unpack, write_json
from bench.solver import wilson
from server.analysis.services.analyser import ANALYSIS_DUE_INDEX
from server.app import App
from server.bots.domain.player import (
    LEVELS,
    Level,
    Memory,
    choose,
    remember,
    wants_solver,
    with_solution,
)
from server.referee.domain.assessment import standing
from server.referee.domain.events import ASSESSMENT_DUE_INDEX
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.runtime.logging import configure_logging
from server.store import MemoryEventStore
from shared import apply_move, is_over, legal_moves, solve
from shared.solver import Status, good_move
from shared.state import GameState

CHECKPOINTS = (10, 20)
RACE_SIZE = 4
CHEAT_NODES = 30_000  # the cheat's solver budget once the deck is known (about 0.3 s at most)
CAREFUL_SLIP = 0.05  # a careful cheater's share of moves off the line, on purpose
PAUSE = 0.03  # a person's share of moves with a long pause (a look away, a sip)
WEB_SHARE = 1 / 3  # people who play in the browser, and lose focus now and then
FOCUS_PER_GAME = 0.3
FLOOR_MS = 350  # nobody moves faster than this (the bots' pace floor is 400 ms)
KINDS = ("person", "cheater", "careful")


@dataclass
class Sim:
    """One simulated account and what it knows of its current game."""

    name: str
    kind: str
    level: Level
    exponent: float  # how much a person's pace follows the position
    web: bool
    rng: random.Random
    ws: ClientConnection | None = None
    inbox: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    answers: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    # the current game
    player: str = ""
    state: GameState | None = None
    memory: Memory | None = None
    line: list[str] = field(default_factory=list)
    solved: int = 0
    done: bool = True
    moves: int = 0

    @property
    def cheats(self) -> bool:
        return self.kind != "person"

    async def open(self, url: str) -> None:
        self.ws = await connect(url, max_size=None, compression=None)
        self.reader = asyncio.create_task(self._read())
        await self.ask({"type": "hello", "protocol": 1, "name": self.name}, "welcome", ref=False)

    async def _read(self) -> None:
        assert self.ws is not None
        async for frame in self.ws:
            for one in unpack(frame):
                key = _answer_key(one)
                waiter = self.answers.pop(key, None) if key else None
                if waiter is not None and not waiter.done():
                    waiter.set_result(one)

    async def ask(self, msg: dict[str, Any], answer: str, *, ref: bool = True) -> dict[str, Any]:
        """Send ``msg`` and wait for its answer (by its ref, or the first of that type)."""
        assert self.ws is not None
        key = f"ref:{self.name}:{msg['type']}" if ref else f"type:{answer}"
        if ref:
            msg = {**msg, "ref": key}
        waiter = asyncio.get_running_loop().create_future()
        self.answers[key] = waiter
        await self.ws.send(msgpack.packb(msg))
        got = await asyncio.wait_for(waiter, 30)
        if got["type"] not in (answer, "ack", "reject") and got["type"] == "error":
            raise RuntimeError(f"{self.name}: {msg['type']} refused: {got}")
        return got

    def expect(self, kind: str) -> asyncio.Future[dict[str, Any]]:
        waiter = asyncio.get_running_loop().create_future()
        self.answers[f"type:{kind}"] = waiter
        return waiter

    async def send(self, msg: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(msgpack.packb(msg))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


def _answer_key(msg: dict[str, Any]) -> str | None:
    if msg.get("ref"):
        return str(msg["ref"])
    if msg["type"] in ("ack", "reject"):
        return f"move:{msg.get('id')}"
    if msg["type"] in ("welcome", "started", "finished"):
        return f"type:{msg['type']}"
    return None


# ---- how each kind thinks and moves (pure, given the random source) ------------------------


def person_think_ms(sim: Sim, state: GameState) -> int:
    """A person's think time: the level's log-normal, scaled by how much there is to choose
    from, now and then a long pause."""
    choices = max(1, len(legal_moves(state)))
    median = sim.level.think_median_ms * (choices / 2.5) ** sim.exponent
    drawn = sim.rng.lognormvariate(math.log(median), sim.level.think_sigma + 0.1)
    if sim.rng.random() < PAUSE:
        drawn *= sim.rng.uniform(3, 8)
    return max(FLOOR_MS, round(drawn))


def cheat_delay_ms(sim: Sim) -> int:
    """A cheater's delay on the line: human-like, whatever the position."""
    sigma = 0.6 if sim.kind == "careful" else 0.45
    return max(FLOOR_MS, round(sim.rng.lognormvariate(math.log(1800), sigma)))


def next_move(sim: Sim) -> tuple[str | None, int]:
    """The account's next move in its game (None: it gives up) and the time it takes."""
    state = sim.state
    assert state is not None
    if sim.cheats:
        return _cheat(sim, state)
    assert sim.memory is not None
    if wants_solver(sim.level, sim.memory, state):
        sim.memory = with_solution(sim.memory, solve(state, max_nodes=sim.level.solver_nodes))
    choice = choose(state, sim.level, sim.memory, sim.rng)
    return choice.move, person_think_ms(sim, state)


def _cheat(sim: Sim, state: GameState) -> tuple[str | None, int]:
    known = state.redeals_left < 2  # the stock was dealt through: every card has been seen
    if not known:
        return good_move(state), person_think_ms(sim, state)
    if not sim.line and sim.solved < 4:
        sim.solved += 1
        solution = solve(state, max_nodes=CHEAT_NODES)
        sim.line = list(solution.moves) if solution.status == Status.WON else []
        if solution.status != Status.WON:
            sim.solved = 4  # no line: greedy from here
    legal = sorted(legal_moves(state))
    if sim.line and sim.line[0] in legal:
        move = sim.line.pop(0)
        others = [m for m in legal if m != move]
        if sim.kind == "careful" and others and sim.rng.random() < CAREFUL_SLIP:
            move, sim.line = sim.rng.choice(others), []
        return move, cheat_delay_ms(sim)
    sim.line = []
    return good_move(state), cheat_delay_ms(sim)


# ---- the races --------------------------------------------------------------------------


async def race(app: App, clock: FakeClock, group: list[Sim]) -> None:
    """One rated race of the group, moves sent at their simulated times."""
    creator = group[0]
    room = (
        await creator.ask(
            {
                "type": "create_room",
                "variant": "quadrennial",
                "capacity": len(group),
                "countdown_ms": 0,
            },
            "room",
        )
    )["room"]
    assert room["rated"], room
    for sim in group:
        sim.player = (await sim.ask({"type": "join", "room": room["id"]}, "joined"))["player"]
    started = [sim.expect("started") for sim in group]
    finished = [sim.expect("finished") for sim in group]
    await creator.send({"type": "start"})
    await asyncio.gather(*started)
    live = await app.commands.room(room["id"])
    due: list[tuple[int, int, Sim, str | None]] = []
    for i, sim in enumerate(group):
        game = live.games[sim.player]
        await _until(lambda g=game: g.state is not None)
        sim.state, sim.done, sim.line, sim.solved = game.state, False, [], 0
        sim.memory = Memory(frozenset({hash(sim.state)}))
        move, ms = next_move(sim)
        due.append((clock.now_ms() + ms, i, sim, move))
    focus = {sim.name: _focus_times(sim) for sim in group}
    while due:
        due.sort(key=lambda d: (d[0], d[1]))
        at, i, sim, move = due.pop(0)
        if at > clock.now_ms():
            clock.advance(at - clock.now_ms())
        if sim.moves in focus[sim.name]:
            await sim.send({"type": "focus_lost"})
        if move is None:
            await sim.send({"type": "resign"})
            continue
        sim.moves += 1
        mid = sim.moves
        waiter = asyncio.get_running_loop().create_future()
        sim.answers[f"move:{mid}"] = waiter
        await sim.send({"type": "move", "id": mid, "move": move})
        answer = await asyncio.wait_for(waiter, 30)
        if answer["type"] != "ack":
            continue  # the race ended (its time limit): this game is over
        assert sim.state is not None
        assert sim.memory is not None
        after = apply_move(sim.state, move)
        sim.memory = remember(sim.memory, sim.state, move, after)
        sim.state = after
        if is_over(after):
            continue
        move, ms = next_move(sim)
        due.append((clock.now_ms() + ms, i, sim, move))
    while not all(f.done() for f in finished):  # the race clock ends a race left to time
        clock.advance(1000)
        await asyncio.sleep(0.001)
    for sim in group:
        sim.moves = 0
        await sim.ask({"type": "leave"}, "left")


def _focus_times(sim: Sim) -> set[int]:
    """The moves before which a browser player's page loses focus this game."""
    if not sim.web:
        return set()
    count = 0
    while sim.rng.random() < FOCUS_PER_GAME / (1 + FOCUS_PER_GAME):  # geometric, mean 0.3
        count += 1
    return {sim.rng.randrange(1, 80) for _ in range(count)}


async def _until(ready: Any, timeout_s: float = 10.0) -> None:
    end = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > end:
            raise TimeoutError("the race never got ready")
        await asyncio.sleep(0.001)


# ---- the run ----------------------------------------------------------------------------


def population(people: int, cheaters: int, seed: int) -> list[Sim]:
    """People of every level in turn, then cheaters, half of them careful."""
    rng = random.Random(seed)
    sims = []
    for n in range(people):
        level = LEVELS[1 + n % 5]
        sims.append(Sim(f"person{n}", "person", level, rng.uniform(0.3, 1.0),
                        rng.random() < WEB_SHARE, random.Random(rng.random())))  # fmt: skip
    for n in range(cheaters):
        kind = "careful" if n % 2 else "cheater"
        sims.append(Sim(f"{kind}{n}", kind, LEVELS[1], rng.uniform(0.3, 1.0), False,
                        random.Random(rng.random())))  # fmt: skip
    return sims


async def settle(app: App) -> None:
    """Every finished race analysed, then every game assessed."""
    assessor = app.referee.assessor
    while await app.store.index_count(ANALYSIS_DUE_INDEX):
        await app.analyser.sweep()
        await asyncio.sleep(0.2)
    await app.analyser.idle.wait()
    while await app.store.index_count(ASSESSMENT_DUE_INDEX):
        await assessor.sweep()
        await asyncio.sleep(0.05)


async def run(people: int, cheaters: int, games: int, seed: int, nodes: int) -> dict[str, Any]:
    clock = FakeClock()
    config = Config(
        port=0,
        rate=100_000,
        burst=100_000,
        analysis_max_nodes={"quadrennial": nodes, "swiss": 0},
        analysis_queue=10_000,
        fairplay_sweep_s=3600.0,
        auth_attempts_per_address=100_000,  # every account registers from this address
        password_time_cost=1,
        password_memory_kib=8192,
        max_rooms=100_000,
    )
    app = App(config, MemoryEventStore(), clock)
    server = await app.start()
    app.referee.assessor.analysis_wait_ms = 10**15  # simulated hours pass: wait for analyses
    url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/"
    sims = population(people, cheaters, seed)
    began = time.monotonic()
    try:
        for sim in sims:
            await sim.open(url)
            await sim.ask({"type": "register", "name": sim.name,
                           "password": f"pw-{sim.name}-long"}, "account")  # fmt: skip
        order = random.Random(seed + 1)
        for round_ in range(games):
            order.shuffle(sims)
            groups = [sims[i : i + RACE_SIZE] for i in range(0, len(sims), RACE_SIZE)]
            for group in groups:
                await race(app, clock, group)
            print(
                f"round {round_ + 1}/{games} raced ({time.monotonic() - began:.0f} s)", flush=True
            )
        played_s = time.monotonic() - began
        await settle(app)
        figures = await tally(app, sims, games)
    finally:
        for sim in sims:
            await sim.close()
        await app.stop()
    figures["seconds"] = {"races": round(played_s, 1), "all": round(time.monotonic() - began, 1)}
    return figures


async def tally(app: App, sims: list[Sim], games: int) -> dict[str, Any]:
    """Per kind and checkpoint, the share flagged; the levels; the timing."""
    checkpoints = sorted({c for c in CHECKPOINTS if c <= games} | {games})
    by_kind: dict[str, Any] = {}
    levels: dict[str, Any] = {}
    timing: dict[str, list[float]] = {k: [] for k in KINDS}
    per_level: dict[str, Any] = {}
    for sim in sims:
        assessed = sorted(await app.referee.assessor.games(sim.name), key=lambda g: g.at)
        for n in checkpoints:
            got = standing(assessed[:n])
            row = by_kind.setdefault(f"{sim.kind} at {n}", {"accounts": 0, "flagged": 0})
            row["accounts"] += 1
            row["flagged"] += got.level.flagged
            levels.setdefault(f"{sim.kind} at {n}", Counter())[got.level.value] += 1
            if sim.kind == "person":
                key = f"level {sim.level.number} at {n}"
                lrow = per_level.setdefault(key, {"accounts": 0, "flagged": 0})
                lrow["accounts"] += 1
                lrow["flagged"] += got.level.flagged
        final = standing(assessed[:games])
        if final.timing is not None:
            timing[sim.kind].append(final.timing)
    for row in [*by_kind.values(), *per_level.values()]:
        row["share"] = round(row["flagged"] / row["accounts"], 4)
        low, high = wilson(row["flagged"], row["accounts"])
        row["wilson95"] = [round(low, 4), round(high, 4)]
    return {
        "checkpoints": checkpoints,
        "flagged": by_kind,
        "people_by_level": per_level,
        "levels": {k: dict(v) for k, v in levels.items()},
        "mean_timing": {k: round(sum(v) / len(v), 3) if v else None for k, v in timing.items()},
    }


def summary(figures: dict[str, Any], games: int) -> tuple[float, float]:
    """Cheaters (both kinds) and people flagged at the last checkpoint."""
    rows = figures["flagged"]
    cheats = [rows[f"{k} at {games}"] for k in ("cheater", "careful") if f"{k} at {games}" in rows]
    flagged = sum(r["flagged"] for r in cheats)
    total = sum(r["accounts"] for r in cheats)
    person = rows.get(f"person at {games}", {"flagged": 0, "accounts": 0})
    return (flagged / total if total else 0.0,
            person["flagged"] / person["accounts"] if person["accounts"] else 0.0)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fairplay", description=__doc__)
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--cheaters", type=int, default=20)
    parser.add_argument("--games", type=int, default=20, help="rated races per account")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--analysis-nodes", type=int, default=10_000, help="the analyser's budget a game"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a few accounts and games: a smoke run"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.people, args.cheaters, args.games, args.analysis_nodes = 2, 2, 2, 2_000
    configure_logging("console", "warning")  # not a line per move or assessment
    figures = asyncio.run(
        run(args.people, args.cheaters, args.games, args.seed, args.analysis_nodes)
    )
    cheats, people = summary(figures, args.games)
    report = {
        "machine": machine(),
        "quick": args.quick,
        "people": args.people,
        "cheaters": args.cheaters,
        "games": args.games,
        "seed": args.seed,
        "analysis_nodes": args.analysis_nodes,
        "goal": {"cheaters_flagged_at_20": ">= 0.90", "people_flagged_at_20": "<= 0.01"},
        "cheaters_flagged": round(cheats, 4),
        "people_flagged": round(people, 4),
        **figures,
    }
    path = write_json("fairplay.json", report)
    for key, row in figures["flagged"].items():
        print(f"{key:18} flagged {row['flagged']:3}/{row['accounts']:<3} ({row['share']:.1%},"
              f" 95 % {row['wilson95'][0]:.1%}-{row['wilson95'][1]:.1%})")  # fmt: skip
    print(f"at {args.games} games: cheaters flagged {cheats:.1%}, people flagged {people:.1%}")
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
