"""The bots' table (not a test): how each level plays, and what a bot's move costs the server.

    python -m bench.bots [--deals N] [--workers N] [--quick] [--write-docs]

Each level plays deals 1..N of each variant with the same policy the server runs
(server.bots.domain.player.play_out: the same choices, think times summed on a simulated clock, the
solver in process). Per variant and level it prints the win rate with its Wilson 95 % interval,
the mean time to a win and to the end of any game (think times only: what a racer would see),
cards on the foundations, moves and slips, and the policy's and the solver's CPU per move.

Then the server's CPU per bot move: a server's parts in this process (memory store, its own
clock) run races of one idle person and three level-2 bots to the end, and the process's CPU
time is divided by the bots' moves. The ceiling beside it, measured in the same run, is an
ordinary move sent through the same command path (a person's, with no policy): a bot's move
should cost about that plus its policy.

Results go to bench/results/bots.json; `--write-docs` also rewrites the table in docs/bots.md
between its markers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import machine, write_json
from bench.solver import wilson
from server.app import App
from server.bots.domain.player import LEVELS, Pace, play_out
from server.race.domain.model import Room
from server.runtime.clock import SystemClock
from server.runtime.config import Config
from server.runtime.logging import configure_logging
from server.runtime.solver_pool import SolverPool
from server.store import MemoryEventStore
from shared import legal_moves, new_game, solve
from shared.state import GameState
from shared.variants import VARIANTS

DOCS = Path(__file__).resolve().parents[1] / "docs" / "bots.md"
BEGIN, END = "<!-- bench.bots table -->", "<!-- end of bench.bots table -->"
QUICK_DEALS = 2  # per level and variant: every row of the table, at least cost (CI)


def _solve_timed(spent: list[float]) -> Any:
    def run(state: GameState, nodes: int) -> Any:
        start = time.process_time()
        try:
            return solve(state, max_nodes=nodes)
        finally:
            spent[0] += time.process_time() - start

    return run


def play_deal(variant: str, level: int, deal: int) -> dict[str, Any]:
    """One game of one level on one deal; runs in a worker process."""
    spent = [0.0]
    start = time.process_time()
    played = play_out(
        new_game(variant, seed=deal),
        LEVELS[level],
        Pace(),
        random.Random(deal * 10 + level),
        _solve_timed(spent),
    )
    total = time.process_time() - start
    return {
        "deal": deal,
        "won": played.won,
        "elapsed_ms": played.elapsed_ms,
        "moves": played.moves,
        "slips": played.slips,
        "foundation": played.foundation,
        "solver_s": spent[0],
        "policy_s": total - spent[0],
    }


def summarize(games: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(games)
    wins = [g for g in games if g["won"]]
    moves = sum(g["moves"] for g in games) or 1
    low, high = wilson(len(wins), n)
    return {
        "deals": n,
        "wins": len(wins),
        "win_rate": len(wins) / n if n else 0.0,
        "win_rate_95": [round(low, 3), round(high, 3)],
        "mean_win_s": round(sum(g["elapsed_ms"] for g in wins) / len(wins) / 1000, 1)
        if wins
        else None,
        "mean_game_s": round(sum(g["elapsed_ms"] for g in games) / n / 1000, 1),
        "mean_foundation": round(sum(g["foundation"] for g in games) / n, 1),
        "mean_moves": round(moves / n, 1),
        "slip_rate": round(sum(g["slips"] for g in games) / moves, 3),
        "policy_us_per_move": round(sum(g["policy_s"] for g in games) / moves * 1e6, 1),
        "solver_us_per_move": round(sum(g["solver_s"] for g in games) / moves * 1e6, 1),
    }


def run_levels(deals: int, workers: int) -> dict[str, dict[str, Any]]:
    jobs = [(v, level, d) for v in VARIANTS for level in LEVELS for d in range(1, deals + 1)]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(play_deal, *zip(*jobs, strict=True), chunksize=4))
    report: dict[str, dict[str, Any]] = {}
    for variant in VARIANTS:
        report[variant] = {}
        for level in LEVELS:
            games = [
                r
                for (v, lv, _), r in zip(jobs, results, strict=True)
                if v == variant and lv == level
            ]
            report[variant][str(level)] = summarize(games)
    return report


def bots_done(room: Room) -> bool:
    games = [room.games.get(s.player) for s in room.bots()]
    return all(g is not None and g.progress.status.done for g in games)


def started(room: Room) -> bool:
    game = room.games.get("p")
    return game is not None and game.state is not None


class Changed:
    """Wakes whoever waits whenever a room changed: waiting for a race's end without polling."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def on_change(self, room: Any, changes: Any) -> None:
        self.event.set()

    async def until(self, ready: Callable[[], bool]) -> None:
        while not ready():
            self.event.clear()
            await self.event.wait()


BOT_MOVES_A_RACE = 300
"""The bot moves one race of the server-cost part measures at most (its bots keep company to the
idle person until the race's clock otherwise)."""


def measured(app: App, room: Room, played: int) -> bool:
    """A race's bots are done, or have made ``BOT_MOVES_A_RACE`` moves since ``played``."""
    return bots_done(room) or app.bots.moves - played >= BOT_MOVES_A_RACE


async def server_cost(races: int) -> dict[str, Any]:
    """CPU of this process per bot move, a server's parts racing bots; and per person move."""
    configure_logging("console", "warning")  # not a line per bot's resignation
    config = Config(bot_floor_ms=1, bot_think_scale=0.0005, store="memory")
    app = App(config, MemoryEventStore(), SystemClock())
    app._solver = SolverPool(ThreadPoolExecutor(1))
    changed = Changed()
    app.hub.listen(changed.on_change)
    app.open()
    try:
        bot_cpu, bot_moves = 0.0, 0
        for n in range(races):
            room = await app.commands.create_room(
                {
                    "variant": VARIANTS[n % 2],
                    "capacity": 4,
                    "countdown_ms": 0,
                    "bots": 3,
                    "bot_level": 2,
                },
                creator=f"bench{n}",
            )
            await app.commands.join(
                room, "p", name="p", token=f"t{n}", connection=f"{app.process}.{n}"
            )
            before_moves, start = app.bots.moves, time.process_time()
            await app.commands.start(room, "p")
            await changed.until(partial(started, room))
            # The person gives up at once: bots racing a person who still plays keep them
            # company when stuck (and wait), while bots alone play their games out or resign.
            await app.commands.games.resign(room, "p")
            await changed.until(partial(measured, app, room, before_moves))
            bot_cpu += time.process_time() - start
            bot_moves += app.bots.moves - before_moves
        person_cpu, person_moves = 0.0, 0
        for n in range(races):
            room = await app.commands.create_room(
                {"variant": VARIANTS[n % 2], "capacity": 1, "countdown_ms": 0},
                creator=f"solo{n}",
            )
            await app.commands.join(
                room, "p", name="p", token=f"s{n}", connection=f"{app.process}.s{n}"
            )
            await app.commands.start(room, "p")
            await changed.until(partial(started, room))
            rng = random.Random(n)
            start = time.process_time()
            for _ in range(150):
                state = room.games["p"].state
                assert state is not None
                legal = sorted(legal_moves(state))
                if not legal:
                    break
                await app.commands.games.move(room, "p", person_moves, rng.choice(legal))
                person_moves += 1
            person_cpu += time.process_time() - start
    finally:
        await app.close_parts()
    return {
        "races": races,
        "bot_moves": bot_moves,
        "cpu_us_per_bot_move": round(bot_cpu / max(bot_moves, 1) * 1e6, 1),
        "ceiling_cpu_us_per_person_move": round(person_cpu / max(person_moves, 1) * 1e6, 1),
    }


def docs_table(levels: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| variant | level | wins (95 % interval) | mean time to win | mean game | cards up "
        "| slips a move |",
        "|---|---|---|---|---|---|---|",
    ]
    for variant, by_level in levels.items():
        for level, row in by_level.items():
            low, high = row["win_rate_95"]
            win = f"{row['mean_win_s']:.0f} s" if row["mean_win_s"] is not None else "none"
            lines.append(
                f"| {variant} | {level} | {row['win_rate']:.0%} ({low:.0%} to {high:.0%}) "
                f"| {win} | {row['mean_game_s']:.0f} s | {row['mean_foundation']:.1f} "
                f"| {row['slip_rate']:.0%} |"
            )
    return "\n".join(lines)


def write_docs(report: dict[str, Any]) -> None:
    text = DOCS.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    server = report["server"]
    solver = "; ".join(
        f"{v} "
        + ", ".join(
            f"{report['levels'][v][str(n)]['solver_us_per_move'] / 1000:.1f}" for n in (3, 4, 5)
        )
        + " ms"
        for v in VARIANTS
    )
    figure = (
        docs_table(report["levels"])
        + "\n\n"
        + textwrap.fill(
            f"{report['deals']} deals per level and variant, on {report['machine']['cores']} "
            f"cores. Server CPU per bot move (level 2, {server['bot_moves']} moves): "
            f"{server['cpu_us_per_bot_move']:.0f} µs; an ordinary move through the same command "
            f"path, the ceiling measured in the same run: "
            f"{server['ceiling_cpu_us_per_person_move']:.0f} µs. The solver's CPU per move at "
            f"levels 3, 4 and 5 (on the server's hint worker, off the event loop): {solver}.",
            width=96,
        )
    )
    DOCS.write_text(f"{head}{BEGIN}\n{figure}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bots", description=__doc__)
    parser.add_argument("--deals", type=int, default=100, help="deals per level and variant")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--races", type=int, default=4, help="server races for the CPU figure")
    parser.add_argument("--quick", action="store_true", help="a few deals: the smoke test's")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/bots.md's table")
    args = parser.parse_args(argv)
    deals = QUICK_DEALS if args.quick else args.deals
    races = 1 if args.quick else args.races
    report: dict[str, Any] = {
        "machine": machine(),
        "quick": args.quick,
        "deals": deals,
        "levels": run_levels(deals, args.workers),
        "server": asyncio.run(server_cost(races)),
    }
    path = write_json("bots.json", report)
    print(docs_table(report["levels"]))
    print(report["server"])
    print(f"written to {path}")
    if args.write_docs:
        write_docs(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
