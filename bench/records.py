"""The compact game record's size (not a test): bytes per move, think time included.

    python -m bench.records [--games N] [--seed S] [--quick]

Encodes games as the server stores them (a game_started with the deck and no seed, moves with
their revealed cards and the client's move ids, a resignation when the player gives up):
random playouts of both variants with think times of 0.3 to 5 s, and the solver's won games.
Every record is decoded and compared with its events before it is counted. Writes
bench/results/records.json (key ``bytes_per_move``: all games together) and prints it.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench.common import machine, write_json
from shared import apply_move, legal_moves, new_game, solve
from shared.deal import deal_deck
from shared.events import move_event, resign_event, start_event
from shared.record import decode_game, encode_game
from shared.variants import VARIANTS

REDIS_BYTES_PER_MOVE = 108  # a finished race in Redis (docs/storage.md)
GOAL_BYTES_PER_MOVE = 4
QUICK_GAMES = 10
SOLVER_MAX_NODES = 20_000


def game_events(
    variant: str,
    seed: int,
    moves: Sequence[str] | Callable[[Any], str | None],
    *,
    think_ms: Callable[[], int],
    start_at: int,
    first_id: int = 1,
    resign: bool = False,
) -> list[dict[str, Any]]:
    """A game's stored events: ``moves`` a line to play, or a chooser given the position (None
    to stop); a resignation at the end when asked and the game is not won."""
    deck = deal_deck(variant, seed)
    events = [start_event(variant, deck, at=start_at)]
    state = new_game(variant, deck=deck)
    at, cid = start_at, first_id
    line = iter(moves) if not callable(moves) else None
    while True:
        move = next(line, None) if line is not None else moves(state)  # type: ignore[operator]
        if move is None:
            break
        at += think_ms()
        event = move_event(state, move, at=at)
        event["cid"] = cid
        events.append(event)
        state, cid = apply_move(state, move), cid + 1
    if resign and not state.won:
        events.append(resign_event(at=at + think_ms()))
    return events


def random_games(count: int, rng: random.Random, start_at: int) -> list[list[dict[str, Any]]]:
    """Random playouts of both variants, 60 to 250 moves, resigned when not over."""
    games = []
    for i in range(count):
        variant = VARIANTS[i % 2]
        budget = rng.randint(60, 250)

        def choose(state: Any, budget: list[int] = [budget]) -> str | None:  # noqa: B006
            legal = sorted(legal_moves(state))
            budget[0] -= 1
            return rng.choice(legal) if legal and budget[0] >= 0 else None

        games.append(
            game_events(
                variant,
                rng.randrange(1 << 32),
                choose,
                think_ms=lambda: rng.randint(300, 5000),
                start_at=start_at + i * 3_600_000,
                first_id=rng.randint(1, 500),
                resign=True,
            )
        )
    return games


def won_games(count: int, rng: random.Random, start_at: int) -> list[list[dict[str, Any]]]:
    """The solver's winning lines of the first seeds it wins within its budget, both variants."""
    games: list[list[dict[str, Any]]] = []
    for variant in VARIANTS:
        won = 0
        for seed in range(1, 20 * count + 1):
            solution = solve(new_game(variant, seed=seed), max_nodes=SOLVER_MAX_NODES)
            if not solution.moves:
                continue
            think = lambda: rng.randint(300, 5000)  # noqa: E731
            games.append(
                game_events(variant, seed, solution.moves, think_ms=think, start_at=start_at)
            )
            won += 1
            if won == count:
                break
    return games


def measure(games: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Bytes and moves of the games' records, each checked to decode to its events."""
    total_bytes = total_moves = 0
    for events in games:
        record = encode_game(events)
        if decode_game(record) != events:
            raise AssertionError("a record did not decode to the events it was made from")
        total_bytes += len(record)
        total_moves += len(events) - 1
    return {
        "games": len(games),
        "moves": total_moves,
        "bytes": total_bytes,
        "bytes_per_move": round(total_bytes / max(total_moves, 1), 3),
        "bytes_per_game": round(total_bytes / max(len(games), 1), 1),
    }


def run(games: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    start_at = 1_780_000_000_000
    began = time.perf_counter()
    random_part = random_games(games, rng, start_at)
    won_part = won_games(max(games // 10, 1), rng, start_at)
    per_move = measure(random_part + won_part)["bytes_per_move"]
    report = {
        "bytes_per_move": per_move,
        "goal_bytes_per_move": GOAL_BYTES_PER_MOVE,
        "met": per_move <= GOAL_BYTES_PER_MOVE,
        "random_playouts": measure(random_part),
        "solver_wins": measure(won_part),
        "redis_bytes_per_move": REDIS_BYTES_PER_MOVE,
        "think_ms": [300, 5000],
        "seed": seed,
        "seconds": round(time.perf_counter() - began, 1),
        "machine": machine(),
    }
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.records", description=__doc__)
    parser.add_argument("--games", type=int, default=200, help="random playouts (default 200)")
    parser.add_argument("--seed", type=int, default=40, help="the random generator's seed")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_GAMES} playouts (CI)")
    args = parser.parse_args(argv)
    report = run(QUICK_GAMES if args.quick else args.games, args.seed)
    report["quick"] = args.quick
    path = write_json("records.json", report)
    print(f"{report['bytes_per_move']} bytes per move ({path})")


if __name__ == "__main__":
    main()
