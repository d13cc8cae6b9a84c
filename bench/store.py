"""Benchmark of the event store (not a test): appends/s and append latency, beside bare XADD.

    python -m bench.store [--quick] [--fsync everysec|always|no] [--seconds S]

Starts its own redis-server (a free port, a temporary directory, AOF on with the given fsync
policy), then for 1, 10 and 100 concurrent writers, each on its own stream, measures for a fixed
time: the Redis store's append (Lua compare-and-append), redis-py's bare XADD of the same bytes
on the same kind of pool (the floor), the memory store, and the SQLite store (a temporary data
directory, synchronous FULL and NORMAL). A contended case has 10 writers on
one stream, each reading the version and appending, so most appends lose. Prints a table and
writes bench/results/store.json (or store-<fsync>.json) with the core count and versions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import hiredis
import msgpack
import redis
import redis.asyncio as aioredis
from redis.utils import HIREDIS_AVAILABLE

from bench.common import PrivateRedis, percentile, redis_server_version, write_json
from server.store import EventStore, MemoryEventStore, RedisEventStore, SqliteEventStore, codec
from shared.errors import WrongExpectedVersion

RESULTS = Path(__file__).resolve().parent / "results"
EVENT = {"type": "moved", "move": "t3t5x4", "revealed": ["TH", "4C"], "at": 1_767_000_000_000}
WRITERS = (1, 10, 100)
CONTENDED_WRITERS = 10
SQLITE_SYNC = ("FULL", "NORMAL")  # the SQLite store's synchronous setting: fsync per commit or not
POOL = 128  # the store's default max_connections; bare XADD gets the same pool


@dataclass(frozen=True)
class Result:
    case: str
    writers: int
    appends: int
    conflicts: int
    seconds: float
    appends_per_s: float
    p50_ms: float
    p99_ms: float


async def timed(
    case: str, writers: int, seconds: float, one: Callable[[int], Awaitable[bool]]
) -> Result:
    """Run ``writers`` loops of ``one(writer)`` for ``seconds``; it returns False on a conflict."""
    latencies: list[int] = []
    conflicts = 0
    stop = time.perf_counter() + seconds

    async def loop(writer: int) -> None:
        nonlocal conflicts
        while time.perf_counter() < stop:
            start = time.perf_counter_ns()
            ok = await one(writer)
            if ok:
                latencies.append(time.perf_counter_ns() - start)
            else:
                conflicts += 1
            if writers > 1:
                await asyncio.sleep(0)  # the memory store never yields by itself

    began = time.perf_counter()
    await asyncio.gather(*(loop(w) for w in range(writers)))
    elapsed = time.perf_counter() - began
    latencies.sort()
    return Result(
        case, writers, len(latencies), conflicts, round(elapsed, 3),
        round(len(latencies) / elapsed, 1),
        round(percentile(latencies, 0.50), 3), round(percentile(latencies, 0.99), 3),
    )  # fmt: skip


def own_stream_appender(store: EventStore, tag: str) -> Callable[[int], Awaitable[bool]]:
    versions: dict[int, int] = {}

    async def one(writer: int) -> bool:
        version = versions.get(writer, 0)
        versions[writer] = await store.append(
            f"{{{tag}}}:game:w{writer}", [EVENT], expected_version=version
        )
        return True

    return one


def contended_appender(store: EventStore, stream: str) -> Callable[[int], Awaitable[bool]]:
    async def one(writer: int) -> bool:
        try:
            await store.append(stream, [EVENT], expected_version=await store.last_version(stream))
        except WrongExpectedVersion:
            return False
        return True

    return one


async def run(url: str, seconds: float) -> list[Result]:
    results: list[Result] = []
    payload = codec.encode(EVENT)
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=POOL, protocol=2)
    bare = aioredis.Redis(connection_pool=pool)
    async with RedisEventStore(url, prefix="bench:") as store:
        for writers in WRITERS:
            tag = f"w{writers}"

            async def xadd(writer: int, tag: str = tag) -> bool:
                await bare.xadd(f"bare:{{{tag}}}:game:w{writer}", {codec.FIELD: payload})
                return True

            results.append(await timed("bare XADD", writers, seconds, xadd))
            results.append(
                await timed("redis store", writers, seconds, own_stream_appender(store, tag))
            )
            memory = MemoryEventStore()
            results.append(
                await timed("memory store", writers, seconds, own_stream_appender(memory, tag))
            )
            for sync in SQLITE_SYNC:
                with tempfile.TemporaryDirectory() as where:
                    async with SqliteEventStore(where, synchronous=sync) as sqlite:
                        appender = own_stream_appender(sqlite, tag)
                        results.append(
                            await timed(f"sqlite store, {sync}", writers, seconds, appender)
                        )
            cases = 3 + len(SQLITE_SYNC)
            for line in format_table(results[-cases:], header=writers == WRITERS[0]):
                print(line, flush=True)
        contended = [
            await timed(
                "redis store, 1 stream",
                CONTENDED_WRITERS,
                seconds,
                contended_appender(store, "{hot}:room"),
            ),
            await timed(
                "memory store, 1 stream",
                CONTENDED_WRITERS,
                seconds,
                contended_appender(MemoryEventStore(), "{hot}:room"),
            ),
        ]
        results.extend(contended)
        for line in format_table(contended, header=False):
            print(line, flush=True)
    await bare.aclose()
    await pool.aclose()
    return results


def format_table(results: list[Result], *, header: bool) -> list[str]:
    lines = []
    if header:
        lines.append(
            f"{'case':<24}{'writers':>8}{'appends/s':>12}{'p50 ms':>9}{'p99 ms':>9}"
            f"{'appends':>9}{'conflicts':>10}"
        )
    for r in results:
        lines.append(
            f"{r.case:<24}{r.writers:>8}{r.appends_per_s:>12,.0f}{r.p50_ms:>9.3f}{r.p99_ms:>9.3f}"
            f"{r.appends:>9}{r.conflicts:>10}"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.2 s per case instead of 3 s")
    parser.add_argument("--seconds", type=float, help="seconds per case")
    parser.add_argument("--fsync", choices=["everysec", "always", "no"], default="everysec")
    args = parser.parse_args(argv)
    seconds = args.seconds or (0.2 if args.quick else 3.0)
    server = PrivateRedis(args.fsync)
    try:
        print(f"event store benchmark: {seconds} s per case, appendfsync {args.fsync}")
        results = asyncio.run(run(server.url, seconds))
        server_version = redis_server_version(server.url)
    finally:
        server.stop()
    report: dict[str, Any] = {
        "benchmark": "event store appends",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds_per_case": seconds,
        "appendfsync": args.fsync,
        "event_bytes": len(codec.encode(EVENT)),
        "machine": {
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
        },
        "versions": {
            "redis-server": server_version,
            "redis-py": redis.__version__,
            "hiredis": hiredis.__version__,
            "hiredis_parser": HIREDIS_AVAILABLE,
            "msgpack": ".".join(map(str, msgpack.version)),
        },
        "results": [asdict(r) for r in results],
    }
    name = "store.json" if args.fsync == "everysec" else f"store-{args.fsync}.json"
    print(f"wrote {write_json(name, report)}")


if __name__ == "__main__":
    main()
