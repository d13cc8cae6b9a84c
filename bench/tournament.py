"""Tournament benchmark: load-generator clients in one tournament, then the same clients in
quick races, on one server process and on ``--workers 2``.

    python -m bench.tournament [--quick] [--clients N] [--seconds S] [--quick-race-seconds Q]
        [--workers-list 1,2] [--loop auto|uvloop|asyncio]

For each worker count: a real server (``python -m server``) on a private redis-server; N logged
in clients (1,000; 40 with --quick; their accounts written to the store as registration writes
them, with one Argon2 hash for all, so the run does not spend minutes hashing) join one
tournament of S seconds (120; 30 with --quick) whose races have a 30 s limit (10 s with
--quick). Each client plays every race it is paired into as the load generator's racers do:
random legal moves from its own public board (5 to 15, 50 ms apart, each once the last is
answered and its event folded, as a person sees the board before the next), then it resigns.
Measured at the clients:

- pairing wait: from the end of a client's race (its ``finished``) to its next
  ``tournament_paired`` (the documented wait applies here), and to its next race's ``started``
  (that plus seating and the 3 s countdown);
- standings lag: from a client's ``finished`` to the first ``tournament_standings`` whose own
  row counts that race;
- every error and refused move (``reject``) by code: a legal load has none;
- server CPU per race (the server and its workers, ``ProcessSampler``) over the tournament,
  against the same clients playing the same way in quick races of 2 for as long (or for
  ``--quick-race-seconds``: a smoke run needs only a few), on the same server right after.

The clients share the server's cores, so their own event loop is the server's (``--loop``,
uvloop where installed): the less CPU the load generator takes, the less of the latency
measured is its own.

Prints a table and writes bench/results/tournament.json.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from argon2 import PasswordHasher

from bench.common import (
    PrivateRedis,
    ProcessSampler,
    machine,
    quantiles_ms,
    raise_nofile,
    table,
    unpack,
    versions,
    write_json,
)
from server.accounts.domain import accounts as a
from server.accounts.services.accounts import KEY_INDEX
from server.race.domain.model import room_stream
from server.runtime.loops import loop_factory
from server.store import RedisEventStore
from server.tournaments.domain.events import tournament_stream
from server.tournaments.domain.pairing import wait_ms
from shared.protocol import encode_unchecked
from shared.views import PublicView, public_fold_event, public_legal_moves

COUNTDOWN_MS = 3_000  # a tournament race's countdown
ANSWER_TIMEOUT_S = 10.0  # a move unanswered this long is counted, and its race left
SERVER_ARGS = ["--rate", "1000", "--burst", "1000", "--max-rooms", "100000",
               "--tournament-min-length-s", "10", "--tournament-requests-per-minute", "100000",
               "--log-level", "warning"]  # fmt: skip


async def seed_accounts(url: str, prefix: str, count: int) -> list[tuple[str, str]]:
    """``count`` accounts and a key each, as ``register`` writes them (one hash for all)."""
    store = RedisEventStore(url, prefix=prefix)
    password_hash = PasswordHasher().hash("bench password")
    out = []
    try:
        for i in range(count):
            name = f"b{i:04d}"
            key = secrets.token_urlsafe(a.KEY_BYTES)
            events = a.decide_register(
                None, name, password_hash=password_hash, key_hash=a.key_hash(key), now=0
            )
            await store.append(
                a.account_stream(name), [a.encode(e) for e in events], expected_version=0
            )
            await store.index_put(KEY_INDEX, a.key_hash(key), 0, name.encode())
            out.append((name, key))
    finally:
        await store.aclose()
    return out


async def stream_figures(url: str, prefix: str, tournament: str) -> dict[str, Any]:
    """What the tournament's stream says: from each race's end (its room's finish) to its
    scoring, and from a racer's scored race to their next pairing (server side, ms)."""
    store = RedisEventStore(url, prefix=prefix)
    try:
        events = [e.data for e in await store.read(tournament_stream(tournament))]
        rooms = {e["room"] for e in events if e["type"] == "race_scored"}
        finished = await store.read_many([room_stream(r) for r in rooms])
    finally:
        await store.aclose()
    ended_at = {}
    for stream, stored in finished.items():
        for event in stored:
            if event.data["type"] in ("race_finished", "room_closed"):
                ended_at[stream] = event.data["at"]
    to_scored, to_paired = [], []
    free_since: dict[str, int] = {}
    for e in events:
        if e["type"] == "race_scored":
            end = ended_at.get(room_stream(e["room"]))
            if end is not None:
                to_scored.append((e["at"] - end) * 1_000_000)
            for r in e["results"]:
                free_since[r["account"]] = e["at"]
        elif e["type"] == "race_paired":
            for account in e["players"]:
                if account in free_since:
                    to_paired.append((e["at"] - free_since.pop(account)) * 1_000_000)
    return {
        "end_to_scored": quantiles_ms(to_scored),
        "scored_to_paired": quantiles_ms(to_paired),
        "events": len(events),
    }


@dataclass
class Figures:
    """What the clients measured, in ns."""

    to_paired: list[int] = field(default_factory=list)
    to_started: list[int] = field(default_factory=list)
    standings_lag: list[int] = field(default_factory=list)
    rooms: set[str] = field(default_factory=set)
    errors: dict[str, int] = field(default_factory=dict)


class Client:
    """One load-generator client: plays what it is seated in, tournament or quick race."""

    def __init__(self, url: str, name: str, key: str, figures: Figures, rng: random.Random) -> None:
        self.url, self.name, self.key = url, name, key
        self.figures, self.rng = figures, rng
        self.ws: Any = None
        self.session = ""
        self.room: str | None = None
        self.view: PublicView | None = None
        self.moves_left = 0
        self.next_id = 0
        self.version = 0  # of its own game, as folded into ``view``
        self.pending: int | None = None  # the move sent and not yet answered
        self.answered_version = 0  # its own game's version once the last answer is folded
        self.answered = asyncio.Event()
        self.playing: str | None = None  # the room a play task plays in
        self.ended_at: int | None = None  # when its last race finished (ns)
        self.paired_seen = False
        self.races = 0
        self.lag_from: int | None = None
        self.quick = False
        self.done = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()

    async def send(self, msg: dict[str, Any]) -> None:
        await self.ws.send(encode_unchecked(msg))

    async def open(self) -> None:
        self.ws = await websockets.connect(self.url, max_size=None, compression=None)
        await self.send({"type": "hello", "protocol": 1, "name": self.name, "key": self.key})

    async def run(self, stop_at: float) -> None:
        try:
            while time.monotonic() < stop_at and not self.done.is_set():
                try:
                    async with asyncio.timeout(max(0.1, stop_at - time.monotonic())):
                        frame = await self.ws.recv()
                except TimeoutError:
                    break
                for msg in unpack(frame):
                    await self.on(msg)
        except websockets.ConnectionClosed:
            self.figures.errors["closed"] = self.figures.errors.get("closed", 0) + 1

    async def on(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        now = time.perf_counter_ns()
        if kind == "welcome":
            self.session = msg["session"]
        elif kind == "tournament_paired":
            if self.ended_at is not None:
                self.figures.to_paired.append(now - self.ended_at)
            self.paired_seen = True
        elif kind == "joined" and msg.get("role") == "player":
            self.room, self.view, self.version = msg["room"], None, 0
        elif kind == "started" and msg["room"] == self.room:
            if self.ended_at is not None:
                self.figures.to_started.append(now - self.ended_at)
                self.ended_at = None
            self.moves_left = self.rng.randint(5, 15)
        elif kind in ("game", "game_event") and msg.get("player") == self.session:
            events = msg["events"] if kind == "game" else [msg["event"]]
            for event in events:
                self.view = public_fold_event(self.view, event)
            self.version = max(self.version, int(msg["version"]))
            self._maybe_answered()
            started = kind == "game" or msg["event"]["type"] == "game_started"
            if started and self.playing != self.room:  # a snapshot and game_started: one task
                self.playing = self.room
                task = asyncio.get_running_loop().create_task(self.play())
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        elif kind == "ack" and msg["id"] == self.pending:
            self.pending, self.answered_version = None, int(msg["version"])
            self._maybe_answered()
        elif kind == "reject" and msg["id"] == self.pending:
            self.pending = None
            self._count(f"reject {msg['code']}")
            self._maybe_answered()
        elif kind == "finished" and msg["room"] == self.room:
            self.figures.rooms.add(msg["room"])
            self.ended_at = self.lag_from = now
            self.races += 1
            self.room = None
            if self.quick:
                await self.send({"type": "leave"})
                await self.send({"type": "quick", "variant": "swiss", "players": 2})
        elif kind == "tournament_standings" and self.lag_from is not None:
            me = msg.get("me")
            if me is not None and me["races"] >= self.races:
                self.figures.standings_lag.append(now - self.lag_from)
                self.lag_from = None
        elif kind == "tournament" and msg["tournament"]["status"] == "finished":
            self.done.set()
        elif kind == "error":
            self._count(msg["code"])

    def _count(self, error: str) -> None:
        self.figures.errors[error] = self.figures.errors.get(error, 0) + 1

    def _maybe_answered(self) -> None:
        if self.pending is None and self.version >= self.answered_version:
            self.answered.set()

    async def play(self) -> None:
        """Random legal moves from its own board, 50 ms apart, then resign."""
        with contextlib.suppress(websockets.ConnectionClosed):
            await self._play()

    async def _play(self) -> None:
        room = self.room
        while self.moves_left > 0 and self.view is not None and self.room == room:
            await asyncio.sleep(0.05)
            legal = sorted(public_legal_moves(self.view)) if self.view is not None else []
            if not legal or self.room != room:
                break
            self.moves_left -= 1
            self.next_id += 1
            self.pending = self.next_id
            self.answered.clear()
            await self.send({"type": "move", "id": self.next_id, "move": self.rng.choice(legal)})
            try:
                async with asyncio.timeout(ANSWER_TIMEOUT_S):
                    await self.answered.wait()
            except TimeoutError:
                self._count("unanswered")
                break
        if self.room == room:
            await self.send({"type": "resign"})


async def run_once(url: str, redis_url: str, prefix: str, clients: int, seconds: int,
                   limit_ms: int, sampler: ProcessSampler,
                   quick_seconds: float | None = None) -> dict[str, Any]:  # fmt: skip
    accounts = await seed_accounts(redis_url, prefix, clients)
    rng = random.Random(45)
    tour, quick = Figures(), Figures()
    players = [Client(url, name, key, tour, random.Random(rng.random())) for name, key in accounts]
    for i in range(0, len(players), 50):
        await asyncio.gather(*(p.open() for p in players[i : i + 50]))
    host = players[0]
    starts_at = int(time.time() * 1000) + 3_000
    create = {"type": "create_tournament", "name": "Bench", "length_ms": seconds * 1000,
              "time_limit_ms": limit_ms, "starts_at": starts_at, "ref": "create"}  # fmt: skip
    await host.send(create)
    tournament = None
    while tournament is None:
        for msg in unpack(await host.ws.recv()):
            if msg["type"] == "welcome":
                host.session = msg["session"]
            elif msg.get("ref") == "create":
                assert msg["type"] == "tournament", msg
                tournament = msg["tournament"]["id"]
    for p in players:
        await p.send({"type": "join_tournament", "tournament": tournament})
    await asyncio.sleep(max(0.0, starts_at / 1000 - time.time()))
    sampler.mark()
    began = time.monotonic()

    async def in_stream_before_the_end() -> dict[str, Any]:
        # Read while the stream is still in the store: the finished tournament goes to the
        # archive as soon as its last race ends. No pairing happens in the last stretch.
        await asyncio.sleep(max(0.0, seconds - 1.0))
        return await stream_figures(redis_url, prefix, tournament)

    reading = asyncio.create_task(in_stream_before_the_end())
    await asyncio.gather(*(p.run(began + seconds + 60) for p in players))
    tour_window = sampler.window()
    tour_seconds = time.monotonic() - began
    in_stream = await reading
    # The same clients, the same play, in quick races of 2 for as long (unless told).
    for p in players:
        p.figures, p.quick, p.room, p.ended_at = quick, True, None, None
        p.done.clear()
        await p.send({"type": "unfollow_tournament"})
        await p.send({"type": "leave"})
        await p.send({"type": "quick", "variant": "swiss", "players": 2})
    sampler.mark()
    began = time.monotonic()
    quick_for = tour_seconds if quick_seconds is None else quick_seconds
    await asyncio.gather(*(p.run(began + quick_for) for p in players))
    quick_window = sampler.window()
    for p in players:
        for task in list(p.tasks):
            task.cancel()
        await p.ws.close()

    def per_race(window: dict[str, float], races: int) -> float | None:
        return round(1000 * window["cpu_seconds"] / races, 2) if races else None

    tour_cpu = per_race(tour_window, len(tour.rooms))
    quick_cpu = per_race(quick_window, len(quick.rooms))
    return {
        "clients": clients,
        "tournament_seconds": seconds,
        "race_time_limit_ms": limit_ms,
        "documented_wait_ms": wait_ms(limit_ms),
        "tournament": {
            "races": len(tour.rooms),
            "pairing_wait": quantiles_ms(tour.to_paired),
            "to_next_start": quantiles_ms(tour.to_started),
            "standings_lag": quantiles_ms(tour.standings_lag),
            "in_stream": in_stream,
            "server_process": tour_window,
            "cpu_per_race_ms": tour_cpu,
            "errors": tour.errors,
        },
        "quick": {
            "seconds": round(quick_for, 1),
            "races": len(quick.rooms),
            "server_process": quick_window,
            "cpu_per_race_ms": quick_cpu,
            "errors": quick.errors,
        },
        "cpu_per_race_vs_quick": round(tour_cpu / quick_cpu, 3) if tour_cpu and quick_cpu else None,
    }


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    wait = result["documented_wait_ms"]
    t = result["tournament"]
    p99 = t["pairing_wait"].get("p99_ms")
    lag = t["standings_lag"].get("p99_ms")
    ratio = result["cpu_per_race_vs_quick"]
    return [
        {
            "target": f"pairing wait p99 <= documented wait + 1 s ({wait + 1000} ms)",
            "value": p99,
            "met": p99 is not None and p99 <= wait + 1000,
        },
        {
            "target": "standings lag p99 <= 2 s",
            "value": lag,
            "met": lag is not None and lag <= 2000,
        },
        {
            "target": "server CPU per race <= 1.1 x quick races'",
            "value": ratio,
            "met": ratio is not None and ratio <= 1.1,
        },
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run for CI")
    parser.add_argument("--clients", type=int)
    parser.add_argument("--seconds", type=int, help="the tournament's length")
    parser.add_argument(
        "--quick-race-seconds",
        type=float,
        help="how long the quick races compared run (default: as long as the tournament ran)",
    )
    parser.add_argument("--workers-list", default=None, help="worker counts (1,2; quick: 1)")
    parser.add_argument(
        "--loop",
        choices=["auto", "uvloop", "asyncio"],
        default="auto",
        help="the clients' event loop (auto: uvloop where installed)",
    )
    args = parser.parse_args(argv)
    clients = args.clients or (40 if args.quick else 1000)
    seconds = args.seconds or (30 if args.quick else 120)
    limit_ms = 10_000 if args.quick else 30_000
    workers = [int(w) for w in (args.workers_list or ("1" if args.quick else "1,2")).split(",")]
    raise_nofile()
    from tests.support.server_process import ServerProcess

    redis = PrivateRedis("everysec")
    runs: dict[str, Any] = {}
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    try:
        for count in workers:
            prefix = f"bt{secrets.token_hex(3)}:"
            server = ServerProcess(
                redis_url=redis.url,
                extra_args=[*SERVER_ARGS, "--redis-prefix", prefix, "--workers", str(count)],
                log_path=logs / f"bench-tournament-w{count}.log",
            )
            server.start(timeout=30)
            assert server.process is not None
            sampler = ProcessSampler(server.process.pid)
            try:
                with asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
                    result = runner.run(
                        run_once(
                            server.url,
                            redis.url,
                            prefix,
                            clients,
                            seconds,
                            limit_ms,
                            sampler,
                            args.quick_race_seconds,
                        )
                    )
            finally:
                sampler.stop()
                server.stop()
            result["targets"] = targets(result)
            runs[f"workers_{count}"] = result
        report = {
            "machine": machine(),
            "versions": versions(redis.url),
            "quick": args.quick,
            "clients_loop": args.loop,
            "runs": runs,
            "load_average": os.getloadavg(),
        }
    finally:
        redis.stop()
    path = write_json("tournament.json", report)
    rows = []
    for name, result in runs.items():
        t = result["tournament"]
        scored, paired = t["in_stream"]["end_to_scored"], t["in_stream"]["scored_to_paired"]
        rows += [
            (f"{name}: clients, races (tournament / quick)",
             f"{result['clients']}, {t['races']} / {result['quick']['races']}"),
            (f"{name}: pairing wait p50 / p99",
             f"{t['pairing_wait'].get('p50_ms')} / {t['pairing_wait'].get('p99_ms')} ms "
             f"(documented wait {result['documented_wait_ms']} ms)"),
            (f"{name}: to next start p50 / p99",
             f"{t['to_next_start'].get('p50_ms')} / {t['to_next_start'].get('p99_ms')} ms"),
            (f"{name}: standings lag p99", f"{t['standings_lag'].get('p99_ms')} ms"),
            (f"{name}: in the stream, end to scored / scored to paired, p50 / p99",
             f"{scored.get('p50_ms')} / {scored.get('p99_ms')}, "
             f"{paired.get('p50_ms')} / {paired.get('p99_ms')} ms"),
            (f"{name}: errors and refused moves (tournament / quick)",
             f"{t['errors'] or 'none'} / {result['quick']['errors'] or 'none'}"),
            (f"{name}: server CPU per race (tournament / quick)",
             f"{t['cpu_per_race_ms']} / {result['quick']['cpu_per_race_ms']} ms "
             f"= {result['cpu_per_race_vs_quick']}x"),
        ]  # fmt: skip
    print(table(rows, "bench.tournament"))
    print(f"wrote {path}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
