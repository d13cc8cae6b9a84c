"""Matchmaking benchmark: players arriving in the rated queue at a steady rate, the time from
queuing to seated in a formed room, and the store's round trips per formed room.

    python -m bench.matchmaking [--quick] [--players N] [--rate R] [--size K] [--rating-sd SD]

One server process's parts (``server.app.App``: the hub, the room commands, the matchmaker as
the server runs them) on a private redis-server. N players (2,000; 200 with --quick) arrive at
R per second (100), each with a rating drawn from a normal law (mean 1500, sd 150; 50 with
--quick, so that CI's run does not wait out the "anyone" minute for its last outlier): each is
queued as a `quick` request queues it (``Matchmaker.enqueue``), and when placed is seated as the
connection would seat it (``Commands.join``, then ``Matchmaker.seated``, which starts the
countdown when the room is full). Timed per player from the enqueue call to their seat's
append (p50, p99). Store round trips are counted at the Redis topology (every ``send`` and
``pipelined``: one round trip each, per node), over the whole run, divided by the rooms formed.
Players still waiting after the last arrival plus 70 s (past the "anyone" minute) are counted.

Prints a table and writes bench/results/matchmaking.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.common import PrivateRedis, machine, quantiles_ms, table, versions, write_json
from server.app import App
from server.matchmaking.domain.queues import queue_key
from server.runtime.clock import SystemClock
from server.runtime.config import Config
from server.store import RedisEventStore


def _counted(counter: dict[str, int], name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    async def counting(*args: Any, **kwargs: Any) -> Any:
        counter[name] += 1
        return await call(*args, **kwargs)

    return counting


async def run(
    url: str, players: int, rate: float, size: int, rating_sd: float, seed: int = 25
) -> dict[str, Any]:
    store = RedisEventStore(url, prefix=f"b{secrets.token_hex(4)}:")
    calls = {"send": 0, "pipelined": 0}
    topology: Any = store.topology
    topology.send = _counted(calls, "send", topology.send)
    topology.pipelined = _counted(calls, "pipelined", topology.pipelined)
    config = Config(
        max_rooms=10**6, max_lobbies_per_session=10**6, lobby_ttl_s=0, quick_bot_after_s=0
    )
    app = App(config, store, SystemClock())
    app.open()
    rng = random.Random(seed)
    key = queue_key("swiss", size, rated=True)
    seated_ns: list[int] = []
    done = asyncio.Event()

    async def arrive(i: int) -> None:
        member = f"p{i:05d}"
        started = time.perf_counter_ns()
        rating = max(800, min(2300, round(rng.gauss(1500, rating_sd))))

        async def placed(room_id: str) -> None:
            room = await app.commands.room(room_id)
            token = secrets.token_hex(8)
            await app.commands.join(
                room, member, name=member, token=token, connection=f"c{i}", account=member
            )
            seated_ns.append(time.perf_counter_ns() - started)
            await app.matchmaker.seated(room_id)
            if len(seated_ns) >= players - players % size:
                done.set()

        await app.matchmaker.enqueue(
            key, member, rating, name=member, on_placed=placed, on_status=lambda msg: None
        )

    began = time.perf_counter()
    before = dict(calls)
    arrivals = []
    for i in range(players):
        arrivals.append(asyncio.create_task(arrive(i)))
        await asyncio.sleep(max(0.0, began + (i + 1) / rate - time.perf_counter()))
    await asyncio.gather(*arrivals)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), 70)
    elapsed = time.perf_counter() - began
    used = {k: calls[k] - before[k] for k in calls}
    waiting = len(app.matchmaker.tickets)
    formed = app.matchmaker.formed
    for member in list(app.matchmaker.tickets):
        await app.matchmaker.leave(member)
    await app.close_parts()
    total = used["send"] + used["pipelined"]
    return {
        "players": players,
        "rate_per_s": rate,
        "room_size": size,
        "rating_sd": rating_sd,
        "rooms_formed": formed,
        "seated": len(seated_ns),
        "still_waiting": waiting,
        "queue_to_seated": quantiles_ms(seated_ns),
        "round_trips": used,
        "round_trips_per_room": round(total / formed, 1) if formed else None,
        "elapsed_s": round(elapsed, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run for CI")
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--rate", type=float, default=100.0, help="arrivals per second")
    parser.add_argument("--size", type=int, default=2, choices=(2, 3, 4), help="room size")
    parser.add_argument("--rating-sd", type=float, help="ratings' spread (150, quick 50)")
    args = parser.parse_args()
    players = args.players or (200 if args.quick else 2_000)
    rating_sd = args.rating_sd if args.rating_sd is not None else 50.0 if args.quick else 150.0
    redis = PrivateRedis("everysec")
    try:
        result = asyncio.run(run(redis.url, players, args.rate, args.size, rating_sd))
        report = {
            "machine": machine(),
            "versions": versions(redis.url),
            "quick": args.quick,
            "result": result,
            "load_average": os.getloadavg(),
        }
    finally:
        redis.stop()
    path = write_json("matchmaking.json", report)
    q = result["queue_to_seated"]
    rows = [
        (
            "players, arrival rate, room size, rating sd",
            f"{players}, {args.rate:g}/s, {args.size}, {rating_sd:g}",
        ),
        ("rooms formed", f"{result['rooms_formed']} ({result['seated']} seated)"),
        ("still waiting at the end", str(result["still_waiting"])),
        ("queue -> seated", f"p50 {q['p50_ms']} ms, p99 {q['p99_ms']} ms, max {q['max_ms']} ms"),
        ("store round trips per room", str(result["round_trips_per_room"])),
        ("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())),
    ]
    print(table(rows, "bench.matchmaking"))
    print(f"wrote {path}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
