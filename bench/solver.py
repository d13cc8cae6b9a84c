"""The winnability table (not a test): solve deals 1..N of each variant under a node budget.

    python -m bench.solver [--seeds N] [--swiss-max-nodes N] [--quadrennial-max-nodes N]
                           [--variant swiss|quadrennial] [--workers N] [--quick]

Prints, per variant, how many deals the solver proved won, proved unwinnable, or left unknown
(the budget ran out), with nodes and time per deal and nodes per second, and writes
bench/results/solver.json (per-seed verdicts included, so a later run can be compared deal by
deal). Every winning line is replayed through apply_move before it is counted.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.common import machine, write_json
from shared import apply_move, is_won, new_game, solve
from shared.variants import VARIANTS

# Budgets chosen so seeds 1..1,000 take a few minutes per variant on one core of the 2-core
# machine the figures in docs/winnability.md come from.
DEFAULT_MAX_NODES = {"swiss": 5_000, "quadrennial": 100_000}
QUICK_SEEDS = 10
QUICK_MAX_NODES = 1_000


def solve_seed(variant: str, seed: int, max_nodes: int) -> dict[str, Any]:
    """One deal's verdict, nodes and solving time; a won line is replayed to check it."""
    state = new_game(variant, seed=seed)
    start = time.perf_counter()
    solution = solve(state, max_nodes=max_nodes)
    seconds = time.perf_counter() - start
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


def run_variant(variant: str, seeds: int, max_nodes: int, workers: int) -> dict[str, Any]:
    """Seeds 1..seeds of one variant, in `workers` processes (1: in this one)."""
    args = [(variant, seed, max_nodes) for seed in range(1, seeds + 1)]
    start = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            deals = list(pool.map(solve_seed, *zip(*args, strict=True), chunksize=8))
    else:
        deals = [solve_seed(*a) for a in args]
    wall = time.perf_counter() - start
    counts = Counter(d["status"] for d in deals)
    nodes = sum(d["nodes"] for d in deals)
    seconds = sum(d["seconds"] for d in deals)
    return {
        "max_nodes": max_nodes,
        "seeds": seeds,
        "workers": workers,
        "counts": {s: counts.get(s, 0) for s in ("won", "unwinnable", "unknown")},
        "rates": {s: counts.get(s, 0) / seeds for s in ("won", "unwinnable", "unknown")},
        "nodes_per_deal": nodes / seeds,
        "seconds_per_deal": seconds / seeds,
        "max_seconds": max(d["seconds"] for d in deals),
        "nodes_per_second": nodes / seconds if seconds else 0.0,
        "wall_seconds": wall,
        "deals": deals,
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
    parser.add_argument("--workers", type=int, default=1, help="solver processes (1)")
    parser.add_argument("--quick", action="store_true", help="a few seeds, in seconds")
    args = parser.parse_args(argv)
    seeds = QUICK_SEEDS if args.quick else args.seeds
    variants = [args.variant] if args.variant else list(VARIANTS)
    report: dict[str, Any] = {"machine": machine(), "quick": args.quick, "variants": {}}
    facts = report["machine"]
    print(f"Python {facts['python']}, {facts['cores']} cores, {args.workers} worker(s)")
    header = (
        f"{'variant':<12} {'budget':>8} {'deals':>6} {'won':>13} {'unwinnable':>13}"
        f" {'unknown':>13} {'nodes/deal':>10} {'ms/deal':>8} {'nodes/s':>8}"
    )
    print(header)
    print("-" * len(header))
    for variant in variants:
        budget = QUICK_MAX_NODES if args.quick else getattr(args, f"{variant}_max_nodes")
        result = run_variant(variant, seeds, budget, args.workers)
        report["variants"][variant] = result
        cells = [f"{result['counts'][s]:>5} {100 * result['rates'][s]:5.1f}%" for s in
                 ("won", "unwinnable", "unknown")]  # fmt: skip
        print(
            f"{variant:<12} {budget:>8,} {seeds:>6} {cells[0]:>13} {cells[1]:>13} {cells[2]:>13}"
            f" {result['nodes_per_deal']:>10,.0f} {1000 * result['seconds_per_deal']:>8.1f}"
            f" {result['nodes_per_second']:>8,.0f}"
        )
    print(f"wrote {write_json('solver.json', report)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
