"""Benchmark of the game core (not a test): random playouts and folds, per variant.

    python -m bench.engine [--quick]

Playouts measure legal-move generation plus apply (moves/s). Folds replay recorded long games
from their events, privately (fold) and publicly (public_fold, which builds one view at the
end), in events/s; "by event" is public_fold_event called per event, a view each time, as a
client or bot following a game does. Each figure is given per wall second and per CPU second
of this process. Prints a table and writes bench/results/engine.json with the machine's core
count and Python version.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import write_json
from shared import (
    PublicView,
    apply_move,
    deal_deck,
    fold,
    legal_moves,
    move_event,
    new_game,
    public_event,
    public_fold,
    public_fold_event,
    start_event,
)
from shared.variants import VARIANTS

RESULTS = Path(__file__).resolve().parent / "results" / "engine.json"


class Clock:
    """Wall and CPU seconds of a stretch of work: on a shared machine the process's own CPU
    time is what the engine costs, while wall time also counts others' turns on the cores."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def lap(self) -> tuple[float, float]:
        """Wall and CPU seconds since the last lap (or the start)."""
        wall, cpu = time.perf_counter(), time.process_time()
        out = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return out


def playouts(variant: str, games: int, max_moves: int, rng: random.Random) -> dict[str, float]:
    """Random legal play from seeded deals: legal_moves + apply_move per move."""
    moves = 0
    clock = Clock()
    for g in range(games):
        state = new_game(variant, seed=g)
        for _ in range(max_moves):
            legal = legal_moves(state)
            if not legal:
                break
            state = apply_move(state, rng.choice(sorted(legal)))
            moves += 1
    seconds, cpu = clock.lap()
    return {
        "games": games,
        "moves": moves,
        "seconds": seconds,
        "moves_per_s": moves / seconds,
        "cpu_seconds": cpu,
        "moves_per_cpu_s": moves / cpu,
    }


def record_long_game(variant: str, seed: int, length: int, rng: random.Random) -> list[Any]:
    """The events of one random game, as long as the position allows up to `length` moves.

    Swiss prefers tableau shuffling moves so a game runs long; Quadrennial ends when it ends."""
    state = new_game(variant, seed=seed)
    events: list[Any] = [start_event(variant, deal_deck(variant, seed), at=0)]
    for i in range(length):
        legal = sorted(legal_moves(state))
        if not legal:
            break
        move = rng.choice(legal)
        events.append(move_event(state, move, at=i + 1))
        state = apply_move(state, move)
    return events


def folds(variant: str, games: int, length: int, rng: random.Random) -> dict[str, float]:
    """Fold every recorded game once, privately and publicly."""
    recorded = [record_long_game(variant, seed, length, rng) for seed in range(games)]
    events = sum(len(e) for e in recorded)
    public = [[public_event(e) for e in game] for game in recorded]
    clock = Clock()
    for game in recorded:
        fold(game)
    private_s, private_cpu = clock.lap()
    for game in public:
        public_fold(game)
    public_s, public_cpu = clock.lap()
    for game in public:
        view: PublicView | None = None
        for event in game:
            view = public_fold_event(view, event)
    stepwise_s, stepwise_cpu = clock.lap()
    return {
        "games": games,
        "events": events,
        "avg_events_per_game": events / games,
        "fold_seconds": private_s,
        "fold_events_per_s": events / private_s,
        "fold_events_per_cpu_s": events / private_cpu,
        "public_fold_seconds": public_s,
        "public_fold_events_per_s": events / public_s,
        "public_fold_events_per_cpu_s": events / public_cpu,
        "public_fold_event_seconds": stepwise_s,
        "public_fold_event_events_per_s": events / stepwise_s,
        "public_fold_event_events_per_cpu_s": events / stepwise_cpu,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small run, a few seconds")
    args = parser.parse_args(argv)
    games = 100 if args.quick else 1000
    fold_games = 100 if args.quick else 1000
    rng = random.Random(20261129)
    results: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "cores": os.cpu_count(),
        "quick": args.quick,
        "variants": {},
    }
    print(
        f"Python {results['python']}, {results['cores']} cores" + (" (quick)" if args.quick else "")
    )
    for variant in VARIANTS:
        play = playouts(variant, games, 400, rng)
        fld = folds(variant, fold_games, 200, rng)
        results["variants"][variant] = {"playouts": play, "folds": fld}
    header = (
        f"{'variant':<12} {'':>5} {'playout moves/s':>16} {'fold events/s':>14}"
        f" {'public fold ev/s':>17} {'by event ev/s':>14}"
    )
    print(header)
    print("-" * len(header))
    for per, suffix in (("wall", "_per_s"), ("CPU", "_per_cpu_s")):
        for variant in VARIANTS:
            play = results["variants"][variant]["playouts"]
            fld = results["variants"][variant]["folds"]
            print(
                f"{variant:<12} {per:>5} {play['moves' + suffix]:>16,.0f}"
                f" {fld['fold_events' + suffix]:>14,.0f}"
                f" {fld['public_fold_events' + suffix]:>17,.0f}"
                f" {fld['public_fold_event_events' + suffix]:>14,.0f}"
            )
    print(
        "wall: per second of elapsed time; CPU: per second of this process's CPU time "
        "(what the engine costs when other work shares the cores)"
    )
    for variant in VARIANTS:
        fld = results["variants"][variant]["folds"]
        print(
            f"{variant}: folded {fld['games']} games, {fld['events']} events "
            f"(avg {fld['avg_events_per_game']:.0f}) in {fld['fold_seconds']:.3f} s"
        )
    print(f"wrote {write_json(RESULTS.name, results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
