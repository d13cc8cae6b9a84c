"""The winnability table (not a test): solve deals 1..N of each variant under a node budget.

    python -m bench.solver [--seeds N] [--swiss-max-nodes N] [--quadrennial-max-nodes N]
                           [--variant swiss|quadrennial] [--workers N] [--fresh]
                           [--hints N] [--prepare N] [--census N] [--quick]

Prints, per variant, how many deals the solver proved won, proved unwinnable, or left unknown
(the budget ran out), the Wilson 95 % interval of the win rate (unknowns counted as losses for
the lower bound and as wins for the upper, as Solvitaire does), nodes and CPU time per deal.
Every winning line is replayed through apply_move before it is counted.

Resumable: each deal's result is appended, as it is solved, to
bench/results/solver-<variant>-<budget>.jsonl (one JSON object per seed), and a later run
with the same budget solves only the seeds not there yet (`--fresh` starts over). The summary
goes to bench/results/solver.json. Deals are solved by `--workers` processes (default: every
core). `--hints N` also times `hint` (the server's budget) at every position of N random
games per variant, and gives its p50/p99. `--census N` enumerates the reachable positions of
Swiss seeds 1..N component by component (shared.solver.layers), up to `--census-positions`
each: how large the space a complete search must cover is.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import machine, results_dir, write_json
from server.runtime.config import Config
from shared import apply_move, is_over, is_won, legal_moves, new_game, solve
from shared.solver import hint
from shared.solver.layers import census
from shared.variants import VARIANTS

# Budgets chosen so seeds 1..1,000 take minutes per variant on the 2-core machine the
# figures in docs/winnability.md come from.
DEFAULT_MAX_NODES = {"swiss": 10_000, "quadrennial": 1_000_000}
QUICK_SEEDS = 10
QUICK_MAX_NODES = 1_000
HINT_MAX_NODES = 10_000  # the server's --solver-max-nodes default
HINT_GAME_MOVES = 150  # random Swiss play can shuffle runs for ever: a game stops here
Z95 = 1.959964


def solve_seed(variant: str, seed: int, max_nodes: int) -> dict[str, Any]:
    """One deal's verdict, nodes and CPU solving time; a won line is replayed to check it."""
    state = new_game(variant, seed=seed)
    start = time.process_time()
    solution = solve(state, max_nodes=max_nodes)
    seconds = time.process_time() - start
    if solution.status == "won":
        end = state
        for move in solution.moves:
            end = apply_move(end, move)
        if not is_won(end):
            raise AssertionError(f"{variant} seed {seed}: the solver's line does not win")
    return {
        "seed": seed,
        "status": solution.status.value,
        "nodes": solution.nodes,
        "moves": len(solution.moves),
        "seconds": round(seconds, 4),
    }


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial rate."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)


def journal(variant: str, max_nodes: int) -> Path:
    """Where one variant's per-seed results at one budget accumulate."""
    return results_dir() / f"solver-{variant}-{max_nodes}.jsonl"


def read_journal(path: Path) -> dict[int, dict[str, Any]]:
    """The seeds already solved (a line cut short by an interrupted run is ignored)."""
    done: dict[int, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                deal = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[int(deal["seed"])] = deal
    return done


def _solve_args(args: tuple[str, int, int]) -> dict[str, Any]:
    return solve_seed(*args)


def run_variant(
    variant: str, seeds: int, max_nodes: int, workers: int, *, fresh: bool = False
) -> dict[str, Any]:
    """Seeds 1..seeds of one variant, in `workers` processes (1: in this one), resuming
    from the journal unless `fresh`."""
    path = journal(variant, max_nodes)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fresh and path.exists():
        path.unlink()
    done = read_journal(path)
    todo = [(variant, seed, max_nodes) for seed in range(1, seeds + 1) if seed not in done]
    start = time.perf_counter()
    with path.open("a") as out:
        for deal in _solve_all(todo, workers):
            out.write(json.dumps(deal) + "\n")
            out.flush()
            done[deal["seed"]] = deal
    wall = time.perf_counter() - start
    deals = [done[seed] for seed in range(1, seeds + 1)]
    counts = Counter(d["status"] for d in deals)
    won, unknown = counts.get("won", 0), counts.get("unknown", 0)
    nodes = sum(d["nodes"] for d in deals)
    seconds = sum(d["seconds"] for d in deals)
    return {
        "max_nodes": max_nodes,
        "seeds": seeds,
        "workers": workers,
        "solved_this_run": len(todo),
        "counts": {s: counts.get(s, 0) for s in ("won", "unwinnable", "unknown")},
        "rates": {s: counts.get(s, 0) / seeds for s in ("won", "unwinnable", "unknown")},
        "win_rate_95": [wilson(won, seeds)[0], wilson(won + unknown, seeds)[1]],
        "nodes_per_deal": nodes / seeds,
        "seconds_per_deal": seconds / seeds,
        "max_seconds": max(d["seconds"] for d in deals),
        "nodes_per_second": nodes / seconds if seconds else 0.0,
        "wall_seconds_this_run": wall,
        "deals": deals,
    }


def _solve_all(todo: list[tuple[str, int, int]], workers: int) -> Iterator[dict[str, Any]]:
    if workers > 1 and len(todo) > 1:
        with ProcessPoolExecutor(workers) as pool:
            yield from pool.map(_solve_args, todo, chunksize=1)
    else:
        yield from (solve_seed(*a) for a in todo)


def hint_times(variant: str, games: int, max_nodes: int) -> dict[str, Any]:
    """CPU seconds of `hint` at every live position of `games` random games (seeded)."""
    rng = random.Random(f"hints-{variant}")
    times: list[float] = []
    heuristic = 0
    for seed in range(1, games + 1):
        state = new_game(variant, seed=seed)
        while not is_over(state) and state.moves_made < HINT_GAME_MOVES:
            start = time.process_time()
            answer = hint(state, max_nodes=max_nodes)
            times.append(time.process_time() - start)
            heuristic += answer.heuristic
            state = apply_move(state, rng.choice(sorted(legal_moves(state))))
    times.sort()

    def at(q: float) -> float:
        return times[round(q * (len(times) - 1))] if times else 0.0

    return {
        "games": games,
        "positions": len(times),
        "max_nodes": max_nodes,
        "heuristic_share": heuristic / len(times) if times else 0.0,
        "p50_s": at(0.5),
        "p99_s": at(0.99),
        "max_s": at(1.0),
    }


def census_of(seeds: int, max_positions: int) -> dict[str, Any]:
    """shared.solver.layers.census of Swiss seeds 1..seeds, with the CPU seconds of each."""
    deals = []
    for seed in range(1, seeds + 1):
        start = time.process_time()
        count = census(new_game("swiss", seed=seed), max_positions)
        deals.append(
            {
                "seed": seed,
                "positions": count.positions,
                "components": count.components,
                "largest": count.largest,
                "won": count.won,
                "complete": count.complete,
                "stock_waste": count.stock_waste,
                "seconds": round(time.process_time() - start, 2),
            }
        )
    return {"max_positions": max_positions, "deals": deals}


def prepare_times(variant: str, rooms: int, max_nodes: int, attempts: int) -> dict[str, Any]:
    """Wall seconds to prepare `rooms` winnable-only rooms one after another, as the server
    does (its SolverPool, one deal worker, fresh secret seeds)."""
    from server.runtime.solver_pool import SolverPool  # the server's own pool, as it runs

    async def run() -> tuple[list[float], list[int]]:
        pool = SolverPool(workers=1)
        times, drawn = [], []
        try:
            for _ in range(rooms):
                start = time.perf_counter()
                deal = await pool.winnable_seed(variant, max_nodes, attempts=attempts)
                times.append(time.perf_counter() - start)
                drawn.append(deal.attempts)
        finally:
            await pool.aclose()
        return sorted(times), drawn

    times, drawn = asyncio.run(run())
    return {
        "rooms": rooms,
        "max_nodes": max_nodes,
        "p50_s": times[len(times) // 2],
        "p95_s": times[max(0, round(0.95 * len(times)) - 1)],
        "max_s": times[-1],
        "mean_draws": sum(drawn) / len(drawn),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.solver", description=__doc__)
    parser.add_argument("--seeds", type=int, default=1000, help="solve seeds 1..N (1,000)")
    for variant in VARIANTS:
        parser.add_argument(
            f"--{variant}-max-nodes",
            type=int,
            default=DEFAULT_MAX_NODES[variant],
            help=f"node budget per {variant} deal ({DEFAULT_MAX_NODES[variant]:,})",
        )
    parser.add_argument("--variant", choices=VARIANTS, help="one variant only")
    cores = os.cpu_count() or 1
    parser.add_argument("--workers", type=int, default=cores, help=f"processes ({cores})")
    parser.add_argument("--fresh", action="store_true", help="ignore earlier results")
    parser.add_argument("--hints", type=int, default=0, help="time hints along N games")
    parser.add_argument(
        "--prepare", type=int, default=0, help="time N winnable-only rooms' preparation"
    )
    parser.add_argument(
        "--census", type=int, default=0, help="enumerate Swiss seeds 1..N's positions"
    )
    parser.add_argument(
        "--census-positions", type=int, default=200_000, help="positions per census (200,000)"
    )
    parser.add_argument("--quick", action="store_true", help="a few seeds, in seconds")
    args = parser.parse_args(argv)
    if args.census:
        counted = census_of(args.census, args.census_positions)
        for deal in counted["deals"]:
            print(json.dumps(deal))
        print(f"wrote {write_json('census.json', counted)}")
        return 0
    seeds = QUICK_SEEDS if args.quick else args.seeds
    variants = [args.variant] if args.variant else list(VARIANTS)
    report: dict[str, Any] = {"machine": machine(), "quick": args.quick, "variants": {}}
    facts = report["machine"]
    print(f"Python {facts['python']}, {facts['cores']} cores, {args.workers} worker(s)")
    header = (
        f"{'variant':<12} {'budget':>8} {'deals':>6} {'won':>13} {'unwinnable':>13}"
        f" {'unknown':>13} {'win rate 95%':>15} {'nodes/deal':>10} {'s/deal':>7}"
    )
    print(header)
    print("-" * len(header))
    for variant in variants:
        budget = QUICK_MAX_NODES if args.quick else getattr(args, f"{variant}_max_nodes")
        result = run_variant(variant, seeds, budget, args.workers, fresh=args.fresh or args.quick)
        report["variants"][variant] = result
        cells = [f"{result['counts'][s]:>5} {100 * result['rates'][s]:5.1f}%" for s in
                 ("won", "unwinnable", "unknown")]  # fmt: skip
        low, high = result["win_rate_95"]
        print(
            f"{variant:<12} {budget:>8,} {seeds:>6} {cells[0]:>13} {cells[1]:>13} {cells[2]:>13}"
            f" {100 * low:6.1f}-{100 * high:5.1f}% {result['nodes_per_deal']:>10,.0f}"
            f" {result['seconds_per_deal']:>7.3f}"
        )
    if args.hints:
        report["hints"] = {}
        for variant in variants:
            timing = hint_times(variant, args.hints, HINT_MAX_NODES)
            report["hints"][variant] = timing
            print(
                f"hint {variant}: {timing['positions']} positions of {args.hints} random games,"
                f" p50 {timing['p50_s']:.3f} s, p99 {timing['p99_s']:.3f} s, max"
                f" {timing['max_s']:.3f} s (CPU), {100 * timing['heuristic_share']:.1f}%"
                " heuristic"
            )
    if args.prepare:
        defaults = Config()
        report["prepare"] = {}
        for variant in variants:
            timing = prepare_times(
                variant, args.prepare, defaults.winnable_max_nodes, defaults.solver_attempts
            )
            report["prepare"][variant] = timing
            print(
                f"winnable-only {variant} rooms: {args.prepare} prepared at"
                f" {timing['max_nodes']:,} nodes a draw, p50 {timing['p50_s']:.2f} s,"
                f" p95 {timing['p95_s']:.2f} s, max {timing['max_s']:.2f} s (wall),"
                f" {timing['mean_draws']:.1f} draws each"
            )
    print(f"wrote {write_json('solver.json', report)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
