"""What the Cluster and durable acks cost an append (not a test): appends/s and latency.

    python -m bench.cluster_store [--seconds S] [--writers 1,10]

Starts a private redis-server and a private Redis Cluster (three primaries, one replica each,
tests/support/redis_cluster.py), then for each writer count appends one event per call, each
writer on its own room's stream, for S seconds: on one Redis, on the Cluster, and on the Cluster
with ``ack_after_replicas=1`` (the append script then WAIT 1 on the same connection). Prints a
table and writes bench/results/cluster_store.json.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import PrivateRedis, machine, quantiles_ms, table, versions, write_json
from server.store import EventStore, RedisEventStore
from tests.support.redis_cluster import LocalRedisCluster

EVENT = {"type": "moved", "move": "t3t5x4", "revealed": ["TH", "4C"], "at": 1_767_000_000_000}


async def measure(store: EventStore, writers: int, seconds: float, tag: str) -> dict[str, Any]:
    latencies: list[int] = []
    deadline = time.monotonic() + seconds

    async def writer(n: int) -> None:
        version = 0
        stream = f"{{{tag}{n}}}:game:w"
        while time.monotonic() < deadline:
            start = time.perf_counter_ns()
            version = await store.append(stream, [EVENT], expected_version=version)
            latencies.append(time.perf_counter_ns() - start)

    began = time.monotonic()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    elapsed = time.monotonic() - began
    latencies.sort()
    return {"appends_per_s": round(len(latencies) / elapsed), **quantiles_ms(latencies)}


async def run(redis_url: str, cluster_url: str, counts: list[int], seconds: float) -> list[Any]:
    rows = []
    for writers in counts:
        for name, store in (
            ("one Redis", RedisEventStore(redis_url, prefix="b:")),
            ("Cluster", RedisEventStore(cluster_url, cluster=True, prefix="b:")),
            ("Cluster, ack after 1 replica", RedisEventStore(
                cluster_url, cluster=True, prefix="b:", ack_after_replicas=1
            )),
        ):  # fmt: skip
            try:
                result = await measure(store, writers, seconds, f"{name[:3]}{writers}-")
            finally:
                await store.aclose()
            rows.append({"store": name, "writers": writers, **result})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--writers", default="1,10")
    args = parser.parse_args()
    counts = [int(n) for n in args.writers.split(",")]
    redis = PrivateRedis("everysec")
    cluster = LocalRedisCluster(Path(tempfile.mkdtemp(prefix="bench-cluster-")), replicas=1)
    try:
        cluster.start()
        rows = asyncio.run(run(redis.url, cluster.url, counts, args.seconds))
    finally:
        cluster.kill()
        redis.stop()
    print(
        table(
            [
                (
                    f"{r['store']}, {r['writers']} writer(s)",
                    f"{r['appends_per_s']:>6} appends/s   p50 {r['p50_ms']:.2f} ms"
                    f"   p99 {r['p99_ms']:.2f} ms",
                )
                for r in rows
            ],
            "append one event (AOF everysec, loopback, 3 primaries + 3 replicas)",
        )
    )
    write_json("cluster_store", {"machine": machine(), "versions": versions(), "rows": rows})


if __name__ == "__main__":
    main()
