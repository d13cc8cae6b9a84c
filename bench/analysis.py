"""What a finished game's analysis costs (not a test): CPU per game and per move, by variant,
for games as the server sees them.

    python -m bench.analysis [--deals N] [--workers N] [--quick]

Deals 1..N of each variant are played by each bot level (server.bots.domain.player.play_out,
the server's own policy, on a simulated clock) and by random play (random legal moves, a card
to its foundation seven times in ten when one can go), and each game is analysed as the server
analyses it (shared.solver.analysis.analyse at the default budget, in process; `--quick`: one
deal each at a tenth of it, which checks the run and measures nothing). Per variant and
kind of player it reports the analysis's CPU per game and per move (p50, p99, max), the
searches and positions expanded per game, and the share of positions settled (won or lost);
each "won" verdict's line is replayed through shared's rules (the deal's and the last won
position's), and the count of those that fail is reported (it must be 0).

Results go to bench/results/analysis.json.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.common import machine, write_json
from server.bots.domain.player import LEVELS, Pace, play_out
from shared import GameState, apply_move, legal_moves, new_game, solve
from shared.solver.analysis import (
    DEFAULT_MAX_NODES,
    SOLVER_VERSION,
    analyse,
    positions_of,
    winning_line,
)
from shared.variants import VARIANTS

KINDS = [*(f"level {n}" for n in sorted(LEVELS)), "random"]
QUICK_DEALS = 1
QUICK_SHARE = 10  # --quick analyses with a tenth of the default budget: it checks the run only
MAX_MOVES = 400  # a game longer than this is cut there (random Swiss play never ends)


def random_moves(variant: str, deal: int) -> tuple[str, ...]:
    """Random legal moves from a deal, a card to its foundation seven times in ten."""
    rng = random.Random(deal)
    state = new_game(variant, seed=deal)
    moves: list[str] = []
    while len(moves) < MAX_MOVES:
        legal = sorted(legal_moves(state))
        if not legal:
            break
        up = [m for m in legal if m.endswith("f") and not m.startswith("f")]
        move = rng.choice(up) if up and rng.random() < 0.7 else rng.choice(legal)
        moves.append(move)
        state = apply_move(state, move)
    return tuple(moves)


def game_moves(variant: str, kind: str, deal: int) -> tuple[str, ...]:
    if kind == "random":
        return random_moves(variant, deal)
    level = LEVELS[int(kind.split()[1])]
    played = play_out(
        new_game(variant, seed=deal),
        level,
        Pace(),
        random.Random(deal * 10 + level.number),
        lambda state, nodes: solve(state, max_nodes=nodes),
        max_moves=MAX_MOVES,
    )
    return played.line


def _replays(state: GameState, line: tuple[str, ...] | None) -> bool:
    if line is None:
        return False
    for move in line:
        state = apply_move(state, move)
    return state.won


def analyse_game(variant: str, kind: str, deal: int, max_nodes: int) -> dict[str, Any]:
    """One game played and analysed; runs in a worker process."""
    moves = game_moves(variant, kind, deal)
    start = new_game(variant, seed=deal)
    began = time.process_time()
    analysis = analyse(start, moves, max_nodes=max_nodes)
    cpu = time.process_time() - began
    positions = positions_of(start, moves)
    wrong = 0
    for k in {0, analysis.won_until} if analysis.won_until >= 0 else set():
        wrong += not _replays(positions[k], winning_line(analysis, positions, k))
    return {
        "deal": deal,
        "moves": len(moves),
        "won": positions[-1].won,
        "cpu_s": cpu,
        "nodes": analysis.nodes,
        "searches": analysis.searches,
        "positions": analysis.positions,
        "settled": analysis.settled,
        "deal_verdict": analysis.deal.value,
        "losing_move": analysis.losing_move,
        "wrong_lines": wrong,
    }


def _q(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))] if ordered else 0.0


def summarize(games: list[dict[str, Any]]) -> dict[str, Any]:
    per_game = [g["cpu_s"] for g in games]
    per_move = [g["cpu_s"] / g["moves"] for g in games if g["moves"]]
    positions = sum(g["positions"] for g in games) or 1
    return {
        "games": len(games),
        "won_games": sum(g["won"] for g in games),
        "mean_moves": round(sum(g["moves"] for g in games) / len(games), 1),
        "cpu_s_per_game": {
            "p50": round(_q(per_game, 0.5), 4),
            "p99": round(_q(per_game, 0.99), 4),
            "max": round(max(per_game), 4),
        },
        "cpu_ms_per_move": {
            "p50": round(_q(per_move, 0.5) * 1000, 3),
            "p99": round(_q(per_move, 0.99) * 1000, 3),
        },
        "mean_searches": round(sum(g["searches"] for g in games) / len(games), 1),
        "mean_nodes": round(sum(g["nodes"] for g in games) / len(games)),
        "settled_share": round(sum(g["settled"] for g in games) / positions, 4),
        "deals": {
            verdict: sum(g["deal_verdict"] == verdict for g in games)
            for verdict in ("won", "lost", "unknown")
        },
        "losing_moves_found": sum(g["losing_move"] is not None for g in games),
        "wrong_lines": sum(g["wrong_lines"] for g in games),
    }


def run(
    deals: int, workers: int, budget: dict[str, int], variants: tuple[str, ...] = VARIANTS
) -> dict[str, dict[str, Any]]:
    jobs = [
        (v, kind, d, budget[v]) for v in variants for kind in KINDS for d in range(1, deals + 1)
    ]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(analyse_game, *zip(*jobs, strict=True), chunksize=2))
    report: dict[str, dict[str, Any]] = {}
    for variant in variants:
        mine = [(kind, r) for (v, kind, _, _), r in zip(jobs, results, strict=True) if v == variant]
        report[variant] = {"all": summarize([r for _, r in mine])}
        for kind in KINDS:
            report[variant][kind] = summarize([r for k, r in mine if k == kind])
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.analysis", description=__doc__)
    parser.add_argument("--deals", type=int, default=40, help="deals per kind and variant")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="one deal each: the smoke test's")
    parser.add_argument("--variant", choices=VARIANTS, default=None, help="one variant only")
    for variant in VARIANTS:
        parser.add_argument(
            f"--{variant}-max-nodes",
            type=int,
            default=DEFAULT_MAX_NODES[variant],
            help=f"the game's budget in {variant} (default: the server's)",
        )
    args = parser.parse_args(argv)
    deals = QUICK_DEALS if args.quick else args.deals
    share = QUICK_SHARE if args.quick else 1
    budget = {v: getattr(args, f"{v}_max_nodes") // share for v in VARIANTS}
    variants = (args.variant,) if args.variant else VARIANTS
    report: dict[str, Any] = {
        "machine": machine(),
        "quick": args.quick,
        "deals": deals,
        "solver_version": SOLVER_VERSION,
        "max_nodes": budget,
        "variants": run(deals, args.workers, budget, variants),
    }
    path = write_json("analysis.json", report)
    for variant, rows in report["variants"].items():
        for kind, row in rows.items():
            game, move = row["cpu_s_per_game"], row["cpu_ms_per_move"]
            print(
                f"{variant:12} {kind:8} games {row['games']:4}  CPU/game p50 {game['p50']:.3f} s"
                f" p99 {game['p99']:.3f} s  per move p50 {move['p50']:.2f} ms"
                f" p99 {move['p99']:.2f} ms  settled {row['settled_share']:.1%}"
                f"  wrong {row['wrong_lines']}"
            )
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
