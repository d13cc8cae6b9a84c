"""Capacity benchmark: how many idle connections one server process holds, and their memory.

    python -m bench.capacity [--quick] [--connections C] [--heartbeat S] [--hold S]
                             [--processes P]

Starts a private redis-server and ``python -m server`` on it, then P client processes
(``python -m bench.capacity hold``) that together open C WebSocket connections, each sending
``hello`` (so every one is a real session), then hold them idle with heartbeats: a protocol
``ping`` every ``--heartbeat`` seconds (spread out) besides websockets' own keepalive pings.
Both sides raise their open-files limit to the hard limit first (the server inherits it).

Reports the connections opened and still answering after the hold, the server's RSS before and
with all of them (psutil; and the kernel's high-water mark), the RSS per connection, the
server's CPU while they idle, the ping round trip p50/p99 during the hold, and failures.
Prints a table and writes bench/results/capacity.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.common import (
    Inbox,
    PrivateRedis,
    ProcessSampler,
    machine,
    quantiles_ms,
    raise_nofile,
    table,
    versions,
    write_json,
)
from shared import protocol as p

OPEN_CONCURRENCY = 200
PER_PROCESS = 5000  # connections one client process opens by default


class Holder:
    """One client process's share of the idle connections."""

    def __init__(self, url: str, count: int, heartbeat: float, hold: float) -> None:
        self.url = url
        self.count = count
        self.heartbeat = heartbeat
        self.hold = hold
        self.conns: list[ClientConnection] = []
        self.failed: dict[str, int] = {}
        self.rtt_ns: list[int] = []
        self.answered: set[int] = set()
        self.holding = True

    async def open_one(self, gate: asyncio.Semaphore) -> None:
        try:
            async with gate:
                ws = await connect(self.url, compression=None, open_timeout=60)
                await ws.send(p.encode_unchecked({"type": p.HELLO, "protocol": 1, "name": "idle"}))
                async with asyncio.timeout(60):
                    await Inbox(ws).next()
            self.conns.append(ws)
        except Exception as exc:
            kind = type(exc).__name__
            self.failed[kind] = self.failed.get(kind, 0) + 1

    async def beat(self, index: int, ws: ClientConnection, rng: random.Random) -> None:
        """Ping every heartbeat, first at a random phase; a pong marks the connection alive."""
        await asyncio.sleep(rng.random() * self.heartbeat)
        inbox = Inbox(ws)
        while self.holding:
            sent = time.perf_counter_ns()
            try:
                await ws.send(p.encode_unchecked({"type": p.PING, "ref": index}))
                async with asyncio.timeout(max(10.0, self.heartbeat)):
                    while (await inbox.next())["type"] != p.PONG:
                        pass
            except (ConnectionClosed, TimeoutError):
                self.answered.discard(index)
                return
            self.rtt_ns.append(time.perf_counter_ns() - sent)
            self.answered.add(index)
            await asyncio.sleep(self.heartbeat)

    async def run(self) -> dict[str, Any]:
        began = time.monotonic()
        gate = asyncio.Semaphore(OPEN_CONCURRENCY)
        await asyncio.gather(*(self.open_one(gate) for _ in range(self.count)))
        opened_s = time.monotonic() - began
        print(f"READY {len(self.conns)}", flush=True)
        rng = random.Random(len(self.conns))
        beats = [asyncio.create_task(self.beat(i, ws, rng)) for i, ws in enumerate(self.conns)]
        await asyncio.sleep(self.hold)
        self.holding = False
        alive = len(self.answered)
        print("HELD", flush=True)
        for task in beats:
            task.cancel()
        await asyncio.gather(*beats, return_exceptions=True)
        await asyncio.gather(*(ws.close() for ws in self.conns), return_exceptions=True)
        return {
            "opened": len(self.conns),
            "alive": alive,
            "failed": self.failed,
            "open_seconds": round(opened_s, 2),
            "rtt_ns": self.rtt_ns,
        }


def hold_main(argv: list[str]) -> int:
    """``python -m bench.capacity hold``: one client process; prints READY, HELD, then JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.capacity hold")
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--heartbeat", type=float, required=True)
    parser.add_argument("--hold", type=float, required=True)
    args = parser.parse_args(argv)
    raise_nofile()
    result = asyncio.run(Holder(args.url, args.count, args.heartbeat, args.hold).run())
    print(json.dumps(result), flush=True)
    return 0


def measure(args: argparse.Namespace, redis: PrivateRedis, log: Path) -> dict[str, Any]:
    from tests.support.server_process import ServerProcess

    server = ServerProcess(redis_url=redis.url, log_path=log, extra_args=["--log-level", "warning"])
    server.start(timeout=30)
    assert server.process is not None
    sampler = ProcessSampler(server.process.pid)
    time.sleep(0.5)
    baseline = sampler.window()["rss_mib"]
    counts = [len(c) for c in split(args.connections, args.processes)]
    holders = [hold_process(server.url, n, args) for n in counts]
    try:
        began = time.monotonic()
        for proc in holders:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line.startswith("READY"):
                raise SystemExit(f"a client process failed to open its connections: {line!r}")
        open_s = time.monotonic() - began
        sampler.mark()  # the hold: every connection open and idle, heartbeats only
        for proc in holders:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "HELD":
                raise SystemExit("a client process failed during the hold")
        held = sampler.window()
        results = []
        for proc in holders:
            assert proc.stdout is not None
            results.append(json.loads(proc.stdout.read()))
            proc.wait(timeout=60)
    finally:
        for proc in holders:
            if proc.poll() is None:
                proc.kill()
        sampler.stop()
        server.stop()
    opened = sum(r["opened"] for r in results)
    failed: dict[str, int] = {}
    for r in results:
        for kind, n in r["failed"].items():
            failed[kind] = failed.get(kind, 0) + n
    rss = held["rss_mib"]
    per_conn_kib = (rss - baseline) * 1024 / opened if opened else 0.0
    return {
        "connections": args.connections,
        "client_processes": len(counts),
        "opened": opened,
        "alive_after_hold": sum(r["alive"] for r in results),
        "failed": failed,
        "open_seconds": round(open_s, 2),
        "heartbeat_seconds": args.heartbeat,
        "hold_seconds": args.hold,
        "server_rss_baseline_mib": baseline,
        "server_rss_mib": rss,
        "server_peak_rss_mib": held["peak_rss_mib"],
        "rss_per_connection_kib": round(per_conn_kib, 1),
        "projected_rss_10000_mib": round(baseline + per_conn_kib * 10000 / 1024, 1),
        "server_cpu_percent_idle": held["cpu_percent"],
        "ping": quantiles_ms([ns for r in results for ns in r["rtt_ns"]]),
    }


def hold_process(url: str, count: int, args: argparse.Namespace) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "bench.capacity", "hold", "--url", url, "--count", str(count),
               "--heartbeat", str(args.heartbeat), "--hold", str(args.hold)]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def split(total: int, processes: int) -> list[range]:
    share = math.ceil(total / processes)
    return [range(i, min(total, i + share)) for i in range(0, total, share)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hold"]:
        return hold_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m bench.capacity", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="500 connections, a short hold")
    parser.add_argument("--connections", type=int, help="idle connections (default 10000)")
    parser.add_argument("--heartbeat", type=float, help="seconds between pings (default 10)")
    parser.add_argument("--hold", type=float, help="seconds to hold them (default 30)")
    parser.add_argument("--processes", type=int, help=f"client processes ({PER_PROCESS} each)")
    parser.add_argument("--fsync", choices=["everysec", "always", "no"], default="everysec")
    args = parser.parse_args(argv)
    args.connections = args.connections or (500 if args.quick else 10_000)
    args.heartbeat = args.heartbeat or (1.0 if args.quick else 10.0)
    args.hold = args.hold or (2.0 if args.quick else 30.0)
    args.processes = args.processes or max(1, math.ceil(args.connections / PER_PROCESS))
    soft, hard = raise_nofile()
    if args.connections + 100 > soft * args.processes:
        print(f"warning: open-files limit {soft} may be too low for {args.connections}")
    redis = PrivateRedis(args.fsync)
    try:
        found = versions(redis.url)
        with tempfile.TemporaryDirectory(prefix="bench-capacity-") as logs:
            result = measure(args, redis, Path(logs) / "server.log")
    finally:
        redis.stop()
    gib = result["server_rss_mib"] / 1024
    rows = [
        ("connections opened", f"{result['opened']:,} of {args.connections:,}"),
        ("still answering after hold", f"{result['alive_after_hold']:,}"),
        ("failures", str(result["failed"] or 0)),
        ("time to open", f"{result['open_seconds']} s ({result['client_processes']} clients)"),
        ("server RSS before", f"{result['server_rss_baseline_mib']:.0f} MiB"),
        ("server RSS with all", f"{result['server_rss_mib']:.0f} MiB ({gib:.2f} GiB)"),
        ("server peak RSS", f"{result['server_peak_rss_mib']:.0f} MiB"),
        ("RSS per connection", f"{result['rss_per_connection_kib']:.1f} KiB"),
        ("projected at 10,000", f"{result['projected_rss_10000_mib']:.0f} MiB"),
        ("server CPU while idle", f"{result['server_cpu_percent_idle']:.1f} %"),
        ("ping p50 / p99", f"{result['ping']['p50_ms']:.2f} / {result['ping']['p99_ms']:.2f} ms"),
    ]
    title = (
        f"capacity: {args.connections:,} idle connections, ping every {args.heartbeat:g} s, "
        f"held {args.hold:g} s"
    )
    print(table(rows, title))
    judged = args.connections >= 10_000
    met = judged and result["alive_after_hold"] >= 10_000 and gib < 1.0
    target = {
        "target": "10,000 idle connections in under 1 GiB RSS",
        "figure": f"{result['alive_after_hold']:,} held in {gib:.2f} GiB",
        "met": met if judged else None,
    }
    verdict = ("met " if met else "MISSED") if judged else "n/a "
    print(f"{verdict}  {target['target']}: {target['figure']}")
    report = {
        "benchmark": "capacity",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick,
        "machine": {**machine(), "nofile": [soft, hard]},
        "versions": found,
        "result": result,
        "targets": [target],
    }
    print(f"wrote {write_json('capacity.json', report)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
