"""Storm benchmark: a burst of connections to one server, every one let in or told to come back.

    python -m bench.storm [--quick] [--connections N] [--seconds S] [--resume R]
                          [--clients P] [--workers W]

Two storms on a server on a private Redis, and the first again on a bare websockets server
that only answers ``hello`` and ``join`` (the ceiling: the same handshakes and frames, no game):

- **spectators**: N connections (5,000; 400 with --quick) opened evenly over S seconds (2) by P
  client processes (2), each saying ``hello`` and joining one live race as a spectator;
- **resume**: R racers (2,000; 200 with --quick) seated in races of 4 when the server is killed
  (SIGKILL) and started again, all reconnecting within S seconds with their resume tokens.

A connection is **in** once it has its ``joined`` (a resumed racer: its ``welcome`` with
``resumed``). The server may answer a handshake with HTTP 503 and ``Retry-After``, or a frame
with ``error`` ``busy`` and ``retry_after_ms``: those are answers, and the client comes back
after that time with jitter, as the terminal and web clients do. Anything else that ends a
connection before it is in (a reset, a handshake with no valid HTTP response, a close without
an answer, a timeout) is **lost**, counted once per attempt, and retried after a backoff so the
run still ends. Goal: 0 lost; every connection in within 2x the bare server's time. Prints a
table and writes bench/results/storm.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from bench.common import (
    PrivateRedis,
    free_port,
    machine,
    quantiles_ms,
    raise_nofile,
    table,
    write_json,
)

TIMEOUT = 120.0  # seconds a storm may take in all before the run gives up
GOAL_RATIO = 2.0


@dataclass
class Tally:
    """One client process's outcome of a storm."""

    admitted: int = 0
    busy: int = 0
    lost: int = 0
    lost_kinds: dict[str, int] = field(default_factory=dict)
    handshake_ns: list[int] = field(default_factory=list)
    in_at: list[float] = field(default_factory=list)  # seconds since the storm began

    def lose(self, kind: str) -> None:
        self.lost += 1
        self.lost_kinds[kind] = self.lost_kinds.get(kind, 0) + 1


def frame(msg: dict[str, Any]) -> bytes:
    return msgpack.packb(msg)


def retry_after_s(exc: InvalidStatus) -> float:
    value = exc.response.headers.get("Retry-After", "1")
    try:
        return max(0.05, float(value))
    except ValueError:
        return 1.0


async def one(
    url: str, job: dict[str, Any], began: float, tally: Tally, hold: asyncio.Event
) -> None:
    """One client of the storm: connect, hello, join (or resume) until in; then hold the
    connection open until every client of this process is in, as a real audience would."""
    attempt = 0
    while time.monotonic() - began < TIMEOUT:
        attempt += 1
        started = time.perf_counter_ns()
        try:
            async with connect(url, open_timeout=30, max_size=None, compression=None) as ws:
                tally.handshake_ns.append(time.perf_counter_ns() - started)
                hello: dict[str, Any] = {"type": "hello", "protocol": 1, "name": "storm"}
                if "resume" in job:
                    hello["resume"] = job["resume"]
                await ws.send(frame(hello))
                while True:
                    data = await asyncio.wait_for(ws.recv(decode=False), 30)
                    msg = msgpack.unpackb(data)
                    messages = msg["messages"] if msg.get("type") == "batch" else [msg]
                    outcome = _outcome(messages, job)
                    if outcome == "welcome" and "room" in job:
                        await ws.send(
                            frame({"type": "join", "room": job["room"], "role": "spectator"})
                        )
                        continue
                    if isinstance(outcome, float):  # busy: come back later
                        tally.busy += 1
                        break
                    if outcome == "in":
                        tally.admitted += 1
                        tally.in_at.append(time.monotonic() - began)
                        await hold.wait()
                        return
                    if outcome == "refused":
                        tally.lose("refused")
                        return
            await asyncio.sleep(outcome * random.uniform(1.0, 1.5))
            continue
        except InvalidStatus as exc:
            if exc.response.status_code == 503:
                tally.busy += 1
                await asyncio.sleep(retry_after_s(exc) * random.uniform(1.0, 1.5))
                continue
            tally.lose(f"http_{exc.response.status_code}")
        except Exception as exc:  # a silent drop (a reset, no HTTP answer, a timeout), by its kind
            tally.lose(type(exc).__name__)
        await asyncio.sleep(min(5.0, 0.2 * 2**attempt) * random.random())


def _outcome(messages: list[dict[str, Any]], job: dict[str, Any]) -> str | float | None:
    """What these messages say of the client: in, told to come back (seconds), refused."""
    for msg in messages:
        kind = msg.get("type")
        if kind == "error" and msg.get("code") == "busy":
            return float(msg.get("retry_after_ms", 1000)) / 1000
        if kind == "error":
            return "refused"
        if kind == "welcome" and "resume" in job:
            return "in" if msg.get("resumed") else "refused"
        if kind == "welcome":
            return "welcome"
        if kind == "joined":
            return "in"
    return None


async def storm(url: str, jobs: list[dict[str, Any]], seconds: float, began: float) -> Tally:
    """Open the jobs' connections evenly over ``seconds`` from ``began``; wait until all are in."""
    tally = Tally()
    hold = asyncio.Event()
    tasks = []
    for i, job in enumerate(jobs):
        delay = began + seconds * i / max(1, len(jobs)) - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(url, job, began, tally, hold)))
    while tally.admitted + tally.lost_kinds.get("refused", 0) < len(jobs):
        if time.monotonic() - began > TIMEOUT:
            break
        await asyncio.sleep(0.05)
    hold.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return tally


def worker_main(spec: str) -> None:
    """A client process: the jobs on stdin's JSON, the tally on stdout."""
    job = json.loads(spec)
    raise_nofile()
    began = time.monotonic() + job["start_in"]
    tally = asyncio.run(storm(job["url"], job["jobs"], job["seconds"], began))
    print(json.dumps(tally.__dict__))


def run_storm(url: str, jobs: list[dict[str, Any]], seconds: float, clients: int) -> dict[str, Any]:
    """The storm from ``clients`` processes, started together; their tallies summed."""
    shares = [jobs[i::clients] for i in range(clients)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.storm",
                "--worker",
                json.dumps({"url": url, "jobs": share, "seconds": seconds, "start_in": 1.0}),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for share in shares
    ]
    total = Tally()
    for proc in procs:
        out, _ = proc.communicate(timeout=TIMEOUT + 60)
        part = json.loads(out)
        total.admitted += part["admitted"]
        total.busy += part["busy"]
        total.lost += part["lost"]
        for kind, n in part["lost_kinds"].items():
            total.lost_kinds[kind] = total.lost_kinds.get(kind, 0) + n
        total.handshake_ns += part["handshake_ns"]
        total.in_at += part["in_at"]
    return {
        "connections": len(jobs),
        "in": total.admitted,
        "busy_answers": total.busy,
        "lost": total.lost,
        "lost_kinds": total.lost_kinds,
        "all_in_s": round(max(total.in_at), 3) if total.admitted == len(jobs) else None,
        "handshake_ms": quantiles_ms(sorted(total.handshake_ns)),
    }


BARE = """
import asyncio, sys, msgpack
from websockets.asyncio.server import serve

async def handler(ws):
    async for data in ws:
        msg = msgpack.unpackb(data)
        if msg["type"] == "hello":
            await ws.send(msgpack.packb({"type": "welcome", "protocol": 1, "session": "s",
                                         "token": "t", "resumed": False, "room": None}))
        elif msg["type"] == "join":
            await ws.send(msgpack.packb({"type": "joined", "room": msg["room"],
                                         "role": msg.get("role", "player"), "player": None}))

async def main():
    async with serve(handler, "127.0.0.1", int(sys.argv[1]), compression=None):
        print("ready", flush=True)
        await asyncio.Future()

asyncio.run(main())
"""


def bare_server(port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", BARE, str(port)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    return proc


async def hello(url: str) -> tuple[Any, dict[str, Any]]:
    """A connection that said ``hello``, and its ``welcome``."""
    ws = await connect(url, max_size=None, compression=None)
    welcome = await _request(ws, {"type": "hello", "protocol": 1, "name": "racer"}, "welcome")
    return ws, welcome


async def race_room(url: str) -> str:
    """A live race of two racers who then only hold their seats: the room spectators join."""
    (a, _), (b, _) = await hello(url), await hello(url)
    made = {
        "type": "create_room",
        "variant": "swiss",
        "capacity": 2,
        "countdown_ms": 0,
        "time_limit_ms": 3_600_000,
    }
    code = (await _request(a, made, "room"))["room"]["id"]
    for ws in (a, b):
        await _request(ws, {"type": "join", "room": code}, "joined")
    await a.send(frame({"type": "start"}))
    await _request(a, {"type": "ping"}, "pong")
    return str(code)


async def _request(ws: Any, msg: dict[str, Any], answer: str) -> dict[str, Any]:
    await ws.send(frame(msg))
    async with asyncio.timeout(30):
        while True:
            got = msgpack.unpackb(await ws.recv())
            for each in got["messages"] if got.get("type") == "batch" else [got]:
                if each.get("type") == "error":
                    raise RuntimeError(each)
                if each.get("type") == answer:
                    return dict(each)


async def seated_racers(url: str, count: int) -> tuple[list[str], list[Any]]:
    """``count`` racers seated in races of 4 that have started: their resume tokens, and their
    connections, which the caller keeps open, as a server killed under them would leave them."""
    tokens: list[str] = []
    held: list[Any] = []
    while len(tokens) < count:
        group = [await hello(url) for _ in range(min(4, count - len(tokens)))]
        made = {
            "type": "create_room",
            "variant": "swiss",
            "capacity": len(group),
            "countdown_ms": 0,
            "time_limit_ms": 3_600_000,
        }
        code = (await _request(group[0][0], made, "room"))["room"]["id"]
        for ws, welcome in group:
            await _request(ws, {"type": "join", "room": code}, "joined")
            tokens.append(welcome["token"])
        await group[0][0].send(frame({"type": "start"}))
        held.extend(ws for ws, _ in group)
    await asyncio.sleep(1.0)
    return tokens, held


def start_server(redis_url: str, log: Path, port: int, workers: int, extra: list[str]) -> Any:
    from tests.support.server_process import ServerProcess

    server = ServerProcess(
        redis_url=redis_url,
        log_path=log,
        port=port,
        extra_args=["--rate", "1000", "--burst", "1000", "--workers", str(workers), *extra],
    )
    server.start(timeout=60)
    return server


def judged(result: dict[str, Any], bare_s: float | None) -> dict[str, Any]:
    ratio = result["all_in_s"] / bare_s if result["all_in_s"] and bare_s else None
    result["vs_bare"] = round(ratio, 2) if ratio is not None else None
    result["met"] = result["lost"] == 0 and ratio is not None and ratio <= GOAL_RATIO
    return result


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2])
        return
    parser = argparse.ArgumentParser(
        description="Connection storms: every one let in or told to come back (docs/benchmarks.md)."
    )
    parser.add_argument("--quick", action="store_true", help="400 spectators, 200 racers")
    parser.add_argument("--connections", type=int, default=None, help="spectators (5000)")
    parser.add_argument("--resume", type=int, default=None, help="racers resuming (2000)")
    parser.add_argument("--seconds", type=float, default=2.0, help="the storm's length")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--workers", type=int, default=1, help="the server's --workers")
    parser.add_argument(
        "--server-args",
        default="",
        help="more options for the server, e.g. '--listen-backlog 100' to see what one changes",
    )
    args = parser.parse_args()
    raise_nofile()
    spectators = args.connections or (400 if args.quick else 5000)
    racers = args.resume or (200 if args.quick else 2000)
    report: dict[str, Any] = {
        "machine": machine(),
        "seconds": args.seconds,
        "workers": args.workers,
        "clients": args.clients,
    }
    port = free_port()
    bare = bare_server(port)
    try:
        jobs = [{"room": "bare"} for _ in range(spectators)]
        report["bare"] = run_storm(f"ws://127.0.0.1:{port}/", jobs, args.seconds, args.clients)
    finally:
        bare.terminate()
        bare.wait()
    bare_s = report["bare"]["all_in_s"]
    redis = PrivateRedis("everysec")
    log = Path(tempfile.mkdtemp(prefix="bench-storm-")) / "server.log"
    try:
        port = free_port()
        server = start_server(redis.url, log, port, args.workers, args.server_args.split())
        url = f"ws://127.0.0.1:{port}/"
        try:
            code = asyncio.run(race_room(url))
            jobs = [{"room": code} for _ in range(spectators)]
            report["spectators"] = judged(run_storm(url, jobs, args.seconds, args.clients), bare_s)
            # Their connections stay referenced (open) until the kill below.
            tokens, _racing = asyncio.run(seated_racers(url, racers))
        finally:
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait()
        server = start_server(redis.url, log, port, args.workers, args.server_args.split())
        try:
            jobs = [{"resume": token} for token in tokens]
            report["resume"] = judged(run_storm(url, jobs, args.seconds, args.clients), bare_s)
        finally:
            server.stop()
    finally:
        redis.stop()
    rows = []
    for name in ("bare", "spectators", "resume"):
        r = report[name]
        rows += [
            (f"{name}: in / connections", f"{r['in']} / {r['connections']}"),
            (f"{name}: lost (no answer)", f"{r['lost']} {r['lost_kinds'] or ''}"),
            (f"{name}: busy answers", str(r["busy_answers"])),
            (f"{name}: all in after s", str(r["all_in_s"])),
            (
                f"{name}: handshake p50 / p99 ms",
                f"{r['handshake_ms']['p50_ms']} / {r['handshake_ms']['p99_ms']}",
            ),
        ]
        if name != "bare":
            rows.append(
                (
                    f"{name}: vs bare (goal <= {GOAL_RATIO}x, 0 lost)",
                    f"{r['vs_bare']}x {'met' if r['met'] else 'MISSED'}",
                )
            )
    print(table(rows, "bench.storm"))
    print(write_json("storm.json", report))


if __name__ == "__main__":
    main()
