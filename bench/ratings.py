"""Ratings benchmark: how fast the ratings projection is rebuilt from the log, and what a rated
race's finish costs the finishing action, against an unrated one in the same run.

    python -m bench.ratings [--quick] [--races N] [--accounts A] [--finishes F]

1. Rebuild: fills a private redis-server with N ``race_rated`` events (2..6 racers drawn from A
   accounts, random places, some wins) in the swiss ratings stream, appended in batches through
   the store API exactly as ``Ratings.record`` writes them, then times ``Ratings.rebuild``
   (read the stream, fold it with openskill, rewrite the leaderboard index) and the pure fold
   alone. Reported as races per second. Then a moderator's fair-play mark of one account and its
   removal: every rating folded again without (then with) its races, the leaderboard rewritten.
2. Finish cost: starts ``python -m server`` on that Redis, registers two accounts, and runs F
   two-racer races, alternately rated and unrated (``create_room`` ``rated: false``), both
   racers logged in. The first racer resigns; the second's resignation finishes the race, and
   is timed from its send to its own ``resigned`` game event (the action's answer: a
   resignation has no ack) and to ``finished``; for rated races also to the ``rating_changes``
   answer of a ``race_ratings`` sent on ``finished``.

3. Argon2id: the time one hash and one verification take with the server's parameters
   (argon2-cffi's PasswordHasher defaults), median of 5, in this process.

Prints a table and writes bench/results/ratings.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import PrivateRedis, machine, quantiles_ms, table, versions, write_json
from server.accounts.domain.ratings import RaceRated, RatingTable, encode, ratings_stream
from server.accounts.services.ratings import Ratings
from server.runtime.clock import SystemClock
from server.store import RedisEventStore

BATCH = 500


def race_events(races: int, accounts: int, seed: int = 24) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    names = [f"acct{i:05d}" for i in range(accounts)]
    events = []
    for race in range(races):
        racers = rng.sample(names, rng.randint(2, 6))
        winners = rng.randint(0, 2)
        events.append(
            encode(
                RaceRated(
                    race * 1000,
                    f"r{race:07d}",
                    "swiss",
                    tuple(
                        {
                            "account": a,
                            "name": a,
                            "place": place,
                            "won": place <= winners,
                            "time_ms": 60_000 + place * 1000 if place <= winners else None,
                        }
                        for place, a in enumerate(racers, 1)
                    ),
                )
            )
        )
    return events


def _answers(ref: str, msg: dict[str, Any]) -> bool:
    """Whether ``msg`` answers the request sent with ``ref``."""
    return msg.get("ref") == ref


async def rebuild(url: str, races: int, accounts: int) -> dict[str, Any]:
    events = race_events(races, accounts)
    store = RedisEventStore(url, prefix="bench:")
    try:
        stream = ratings_stream("swiss")
        version = 0
        t0 = time.perf_counter()
        for start in range(0, len(events), BATCH):
            chunk = events[start : start + BATCH]
            version = await store.append(stream, chunk, expected_version=version)
        fill_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        table_ = RatingTable("swiss")
        for i, data in enumerate(events, 1):
            table_.apply(i, data)
        fold_s = time.perf_counter() - t0

        ratings = Ratings(store, SystemClock())
        t0 = time.perf_counter()
        folded = await ratings.rebuild(["swiss"])
        rebuild_s = time.perf_counter() - t0
        assert folded["swiss"] == races
        players = len(ratings.tables["swiss"].players)
        # A fair-play mark: every rating folded again without one account's races, and the
        # leaderboards rewritten (both variants' logs take the mark; quadrennial's is empty).
        marked = "acct00000"
        kept = sum(1 for e in events if all(r["account"] != marked for r in e["racers"]))
        t0 = time.perf_counter()
        await ratings.mark(marked)
        mark_s = time.perf_counter() - t0
        assert marked not in ratings.tables["swiss"].players
        t0 = time.perf_counter()
        await ratings.mark(marked, marked=False)
        unmark_s = time.perf_counter() - t0
    finally:
        await store.aclose()
    return {
        "races": races,
        "accounts": accounts,
        "rated_players": players,
        "fill_s": round(fill_s, 3),
        "fold_only_s": round(fold_s, 3),
        "fold_only_races_per_s": round(races / fold_s),
        "rebuild_s": round(rebuild_s, 3),
        "rebuild_races_per_s": round(races / rebuild_s),
        "mark": {"races_kept": kept, "mark_s": round(mark_s, 3), "unmark_s": round(unmark_s, 3)},
    }


async def finishes(url: str, count: int, log: Path) -> dict[str, Any]:
    from tests.server.wsclient import Client
    from tests.support.server_process import ServerProcess

    server = ServerProcess(
        redis_url=url,
        log_path=log,
        extra_args=["--rate", "1000", "--burst", "1000", "--redis-prefix", "benchfin:"],
    )
    server.start()
    clients: list[Client] = []
    timings: dict[str, dict[str, list[int]]] = {
        kind: {"answer": [], "finished": [], "ratings": []} for kind in ("rated", "unrated")
    }
    try:
        for name in ("ann", "bob"):
            client = await Client(server.url, name).open()
            await client.hello()
            await client.send({"type": "register", "name": name, "password": "bench-" * 3})
            await client.expect("account", wait_s=60)
            clients.append(client)
        ann, bob = clients
        for race in range(count):
            rated = race % 2 == 0
            kind = "rated" if rated else "unrated"
            for c in clients:
                c.unread.clear()  # the last race's room updates
            ref = f"create-{race}"
            create = {"type": "create_room", "variant": "swiss", "countdown_ms": 0, "ref": ref}
            await ann.send({**create, "rated": rated})
            answer = await ann.expect("room", partial(_answers, ref))
            room = answer["room"]["id"]
            for c in clients:
                await c.send({"type": "join", "room": room})
                await c.expect("joined")
            await ann.send({"type": "start"})
            for c in clients:
                await c.expect("started")
            await ann.send({"type": "resign"})
            await ann.expect("game_event", lambda m: m["event"]["type"] == "resigned")
            t0 = time.perf_counter_ns()
            await bob.send({"type": "resign"})
            await bob.expect(
                "game_event",
                lambda m: m["event"]["type"] == "resigned" and m["player"] == bob.session,
            )
            timings[kind]["answer"].append(time.perf_counter_ns() - t0)
            await bob.expect("finished")
            timings[kind]["finished"].append(time.perf_counter_ns() - t0)
            if rated:
                await bob.send({"type": "race_ratings", "room": room, "ref": race})
                await bob.expect("rating_changes")
                timings[kind]["ratings"].append(time.perf_counter_ns() - t0)
            await ann.expect("finished")
            for c in clients:
                await c.send({"type": "leave"})
                await c.expect("left")
    finally:
        for c in clients:
            await c.close()
        server.stop()
    return {
        kind: {what: quantiles_ms(values) for what, values in parts.items() if values}
        for kind, parts in timings.items()
    }


def argon2_timing(samples: int = 5) -> dict[str, Any]:
    from argon2 import PasswordHasher

    hasher = PasswordHasher()
    hashes, verifies = [], []
    for i in range(samples):
        t0 = time.perf_counter_ns()
        hashed = hasher.hash(f"a password {i}")
        hashes.append(time.perf_counter_ns() - t0)
        t0 = time.perf_counter_ns()
        hasher.verify(hashed, f"a password {i}")
        verifies.append(time.perf_counter_ns() - t0)
    return {
        "parameters": {
            "type": "argon2id",
            "time_cost": hasher.time_cost,
            "memory_kib": hasher.memory_cost,
            "parallelism": hasher.parallelism,
            "hash_len": hasher.hash_len,
            "salt_len": hasher.salt_len,
        },
        "hash": quantiles_ms(hashes),
        "verify": quantiles_ms(verifies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run for CI")
    parser.add_argument("--races", type=int, default=None)
    parser.add_argument("--accounts", type=int, default=None)
    parser.add_argument("--finishes", type=int, default=None)
    args = parser.parse_args()
    races = args.races or (2_000 if args.quick else 100_000)
    accounts = args.accounts or (100 if args.quick else 5_000)
    count = args.finishes or (4 if args.quick else 60)
    redis = PrivateRedis("everysec")
    try:
        rebuilt = asyncio.run(rebuild(redis.url, races, accounts))
        log = Path(redis.dir) / "server.log"
        finish = asyncio.run(finishes(redis.url, count, log))
        argon2 = argon2_timing()
        report = {
            "machine": machine(),
            "versions": versions(redis.url),
            "quick": args.quick,
            "rebuild": rebuilt,
            "finish": finish,
            "argon2": argon2,
            "load_average": os.getloadavg(),
        }
    finally:
        redis.stop()
    path = write_json("ratings.json", report)
    r = rebuilt
    rows = [
        ("races folded by the rebuild", f"{r['races']:,} ({r['rated_players']} players)"),
        ("rebuild (read, fold, index)", f"{r['rebuild_s']} s, {r['rebuild_races_per_s']:,}/s"),
        ("fold only (openskill)", f"{r['fold_only_s']} s, {r['fold_only_races_per_s']:,}/s"),
        (
            "fair-play mark: refold + leaderboard",
            f"{r['mark']['mark_s']} s "
            f"({r['mark']['races_kept']:,} races kept); unmark {r['mark']['unmark_s']} s",
        ),
    ]
    for kind, parts in finish.items():
        for what, q in parts.items():
            figure = f"p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms (n {q['n']})"
            rows.append((f"{kind}: resign -> {what}", figure))
    for what in ("hash", "verify"):
        rows.append((f"argon2id {what} (t=3, 64 MiB, p=4)", f"p50 {argon2[what]['p50_ms']} ms"))
    rows.append(("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())))
    print(table(rows, "bench.ratings"))
    print(f"wrote {path}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
