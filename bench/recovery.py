"""Recovery benchmark: how soon a restarted server serves, and loads L live games from Redis.

    python -m bench.recovery [--quick] [--games L] [--length E] [--room-size K]

Fills a private redis-server with L live (racing, unfinished) games of E events each, in rooms
of K players: rooms are created, joined and started by the server's own commands on the Redis
store (so the room streams, the directory and each game's ``game_started`` are exactly what a
server writes), then each game gets E-1 ``moved`` events built as ``Commands.move`` builds them
(``shared.move_event`` plus the client move id ``cid``), appended through the store API in
batches instead of one round trip each. Moves are random legal ones that never end the game.

Then it starts ``python -m server`` on that Redis and times, from the moment the process is
started: ``/healthz`` answering 200 (rooms load lazily, so this should not grow with L), its
``listening`` log line, the first move accepted in a live room (a racer resumes its seat and
moves), a client's ``list_rooms`` showing every room, the ``warmed`` log line (the background
warm-up has folded every live room) and every racer having its own game back at its full
version (a spectator would not see that: fair spectating holds back what the other racers have
not turned). It also counts the server's Redis connections (CLIENT LIST, by client name) once
warm. The same server started on an empty Redis gives the fixed cost of starting Python and
importing the server, shown beside. Prints a table and writes bench/results/recovery.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
from websockets.asyncio.client import ClientConnection, connect

from bench.common import (
    Inbox,
    PrivateRedis,
    machine,
    raise_nofile,
    table,
    versions,
    write_json,
)
from server.app import App
from server.race.domain.model import Room
from server.runtime.clock import SystemClock
from server.runtime.config import Config
from server.runtime.logging import configure_logging
from server.store import RedisEventStore
from shared import (
    apply_move,
    deal_deck,
    fold,
    legal_moves,
    move_event,
    public_fold,
    public_legal_moves,
    start_event,
)
from shared import protocol as p
from shared.state import GameState

BATCH = 100  # events per append while filling
FILL_CONCURRENCY = 32
TIMEOUT = 120.0


def token(session: str) -> str:
    """The resume token each filled seat gets, so the benchmark can take a seat back."""
    return f"t-{session}"


async def fill_room(app: App, store: RedisEventStore, index: int, size: int, length: int) -> Room:
    """One racing room of ``size`` games of ``length`` events each."""
    seed, plans = plan_room(index, size, length)
    commands = app.commands
    room = await commands.create_room(
        {"variant": "swiss", "seed": seed, "capacity": size, "countdown_ms": 0}, creator="bench"
    )
    sessions = [f"p{index:05d}x{s}" for s in range(size)]
    for session in sessions:
        await commands.join(
            room, session, name=session, token=token(session), connection=f"bench.{session}"
        )
    await commands.start(room, sessions[0])
    for _ in range(1000):
        if room.games and all(g.version >= 1 for g in room.games.values()):
            break
        await asyncio.sleep(0.005)
    for session, plan in zip(sessions, plans, strict=True):
        game = room.games[session]
        state, version = game.state, game.version
        assert state is not None
        batch: list[dict[str, Any]] = []
        for cid, move in enumerate(plan, start=1):
            event = move_event(state, move, at=app.clock.now_ms())
            event["cid"] = cid  # what Commands.move adds: resent ids are answered from it
            state = apply_move(state, move)
            batch.append(event)
            if len(batch) == BATCH or cid == len(plan):
                version = await store.append(game.stream, batch, expected_version=version)
                batch = []
    return room


def plan_room(index: int, size: int, length: int) -> tuple[int, list[list[str]]]:
    """A seed and ``size`` random move lists of ``length - 1`` moves that keep a game going."""
    for attempt in range(50):
        seed = index + attempt * 1_000_003
        start = fold([start_event("swiss", deal_deck("swiss", seed), at=0)])
        plans = []
        for player in range(size):
            for retry in range(10):
                plan = plan_game(start, length - 1, random.Random(f"{seed}/{player}/{retry}"))
                if plan is not None:
                    plans.append(plan)
                    break
            else:
                break
        if len(plans) == size:
            return seed, plans
    raise SystemExit(f"no deal found whose games last {length} events; use a shorter --length")


def plan_game(state: GameState, moves: int, rng: random.Random) -> list[str] | None:
    """Random legal moves after each of which the game goes on (not won, not stuck)."""
    plan = []
    for _ in range(moves):
        options = sorted(legal_moves(state))
        rng.shuffle(options)
        for move in options:
            after = apply_move(state, move)
            if not after.won and legal_moves(after):
                break
        else:
            return None
        plan.append(move)
        state = after
    return plan


async def fill(url: str, games: int, size: int, length: int) -> int:
    """Write the rooms through the server's own code; the number of rooms."""
    configure_logging("console", "warning", stream=sys.stderr)  # not a line per room
    store = RedisEventStore(url, max_connections=FILL_CONCURRENCY)
    app = App(Config(max_rooms=10**6, max_lobbies_per_session=10**6), store, SystemClock())
    app.open()
    gate = asyncio.Semaphore(FILL_CONCURRENCY)
    count = max(1, games // size)

    async def one(i: int) -> None:
        async with gate:
            room = await fill_room(app, store, i, size, length)
            await app.hub.unload([room])  # the filler need not keep every room folded

    try:
        await asyncio.gather(*(one(i) for i in range(count)))
    finally:
        await app.close_parts()
    return count


def healthy(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


async def client(url: str, resume: str | None = None) -> tuple[ClientConnection, Inbox]:
    ws = await connect(url, compression=None, max_size=None, open_timeout=30)
    hello: dict[str, Any] = {"type": p.HELLO, "protocol": 1, "name": "timer"}
    if resume is not None:
        hello["resume"] = resume
    await ws.send(p.encode_unchecked(hello))
    inbox = Inbox(ws)
    while (await inbox.next())["type"] != p.WELCOME:
        pass
    return ws, inbox


async def first_move(url: str, session: str) -> bool:
    """A racer of a live room takes its seat back and moves; whether the move was acked."""
    ws, inbox = await client(url, resume=token(session))
    try:
        while True:
            msg = await inbox.next()
            if msg["type"] == p.GAME and msg["player"] == session:
                break
        move = sorted(public_legal_moves(public_fold(msg["events"])))[0]
        await ws.send(p.encode_unchecked({"type": p.MOVE, "id": "bench-first", "move": move}))
        while True:
            msg = await inbox.next()
            if msg["type"] in (p.ACK, p.REJECT) and msg.get("id") == "bench-first":
                return bool(msg["type"] == p.ACK)
    finally:
        await ws.close()


def redis_connections(redis_url: str) -> int:
    """The server's connections to Redis, by the client name it gives them."""
    raw = redis.Redis.from_url(redis_url)
    try:
        return sum(1 for c in raw.client_list() if c.get("name") == "solitaire-arena")
    finally:
        raw.close()


async def all_listed(url: str, rooms: int) -> int:
    """list_rooms until every room is there; how many were listed."""
    ws, inbox = await client(url)
    try:
        while True:
            await ws.send(p.encode_unchecked({"type": p.LIST_ROOMS}))
            msg = await inbox.next()
            if msg["type"] == p.ROOMS and len(msg["rooms"]) >= rooms:
                return len(msg["rooms"])
            await asyncio.sleep(0.005)
    finally:
        await ws.close()


async def resume_all(url: str, sessions: list[str], length: int) -> int:
    """Every racer takes its seat back, until each has its own game at version ``length``
    (a spectator would not: fair spectating holds back what other racers have not turned)."""
    gate = asyncio.Semaphore(200)

    async def one(session: str) -> int:
        async with gate:
            try:
                async with asyncio.timeout(TIMEOUT):
                    ws, inbox = await client(url, resume=token(session))
                    try:
                        while True:
                            msg = await inbox.next()
                            if msg["type"] == p.GAME and msg["player"] == session:
                                return int(msg["version"] >= length)
                    finally:
                        await ws.close()
            except TimeoutError:
                return 0  # counted as not complete: the table says how many were

    return sum(await asyncio.gather(*(one(s) for s in sessions)))


def logged_at(log: Path, event: str) -> float | None:
    """The wall time of the server's first log line with this event."""
    from datetime import datetime

    for line in log.read_text(errors="replace").splitlines():
        if f'"{event}"' in line:
            stamp = json.loads(line)["timestamp"]
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return None


def wait_logged(log: Path, event: str) -> float | None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = logged_at(log, event)
        if found is not None:
            return found
        time.sleep(0.01)
    return None


def restart(
    redis_url: str, log: Path, rooms: int, room_size: int, length: int, racer: str | None
) -> dict[str, Any]:
    """Start a server on the filled Redis and time each step of its recovery."""
    from tests.support.server_process import ServerProcess

    server = ServerProcess(redis_url=redis_url, log_path=log)
    wall0 = time.time()
    t0 = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    server.process = subprocess.Popen(
        server.command(), stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env
    )
    try:
        while not healthy(server.port):
            if server.process.poll() is not None:
                raise SystemExit(f"the server exited with {server.process.returncode}")
            if time.monotonic() - t0 > TIMEOUT:
                raise SystemExit("the server did not become healthy")
            time.sleep(0.005)
        t_healthy = time.monotonic() - t0

        async def clients() -> tuple[float | None, float, float, int, int]:
            t_move = None
            if racer is not None:
                if not await first_move(server.url, racer):
                    raise SystemExit("the first move after the restart was rejected")
                t_move = time.monotonic() - t0
            listed = await all_listed(server.url, rooms)
            t_listed = time.monotonic() - t0
            sessions = [
                f"p{index:05d}x{seat}" for index in range(rooms) for seat in range(room_size)
            ]
            games = await resume_all(server.url, sessions, length) if length else 0
            return t_move, t_listed, time.monotonic() - t0, listed, games

        t_move, t_listed, t_games, listed, games = asyncio.run(clients())
        warmed = wait_logged(log, "warmed")
        connections = redis_connections(redis_url)
    finally:
        server.stop()
    said = logged_at(log, "listening")
    return {
        "healthy_s": round(t_healthy, 3),
        "listening_log_s": round(said - wall0, 3) if said is not None else None,
        "first_move_s": round(t_move, 3) if t_move is not None else None,
        "warmed_log_s": round(warmed - wall0, 3) if warmed is not None else None,
        "redis_connections": connections,
        "all_rooms_listed_s": round(t_listed, 3),
        "all_games_rebuilt_s": round(t_games, 3),
        "rooms_listed": listed,
        "games_seen_complete": games,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.recovery", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="40 games of 50 events")
    parser.add_argument("--games", type=int, help="live games (default 2000)")
    parser.add_argument("--length", type=int, help="events per game (default 200)")
    parser.add_argument("--room-size", type=int, default=4, help="players (games) per room")
    parser.add_argument("--fsync", choices=["everysec", "always", "no"], default="everysec")
    args = parser.parse_args(argv)
    games = args.games or (40 if args.quick else 2000)
    length = args.length or (50 if args.quick else 200)
    raise_nofile()
    redis = PrivateRedis(args.fsync)
    try:
        found = versions(redis.url)
        began = time.monotonic()
        rooms = asyncio.run(fill(redis.url, games, args.room_size, length))
        fill_s = time.monotonic() - began
        games = rooms * args.room_size
        print(f"filled {games} games of {length} events in {rooms} rooms in {fill_s:.1f} s")
        with tempfile.TemporaryDirectory(prefix="bench-recovery-") as logs:
            empty_url = redis.url.rsplit("/", 1)[0] + "/1"  # an empty database, same server
            empty = restart(empty_url, Path(logs) / "empty.log", 0, 0, 0, None)
            full = restart(
                redis.url,
                Path(logs) / "full.log",
                rooms,
                args.room_size,
                length,
                f"p00000x{min(1, args.room_size - 1)}",
            )
    finally:
        redis.stop()

    def both(key: str) -> str:
        f, e = full[key], empty[key]
        return "-" if f is None else f"{f:.3f} s" + ("" if e is None else f"  (empty: {e:.3f} s)")

    beyond = full["healthy_s"] - empty["healthy_s"]
    seen = full["games_seen_complete"]
    rows = [
        ("process start to /healthz 200", both("healthy_s")),
        ("  'listening' log line", both("listening_log_s")),
        ("  first move accepted in a live room", f"{full['first_move_s']:.3f} s"),
        ("  every room listed", both("all_rooms_listed_s")),
        ("  'warmed': every live room folded", both("warmed_log_s")),
        ("  every game seen at full version", f"{full['all_games_rebuilt_s']:.3f} s"),
        ("/healthz beyond an empty start", f"{beyond:.3f} s"),
        ("rooms listed / games complete", f"{full['rooms_listed']} / {seen}"),
        ("Redis connections of the server", f"{full['redis_connections']}"),
    ]
    title = f"recovery: {games} live games of {length} events, rooms of {args.room_size}"
    print(table(rows, title))
    judged = games >= 1000 and length >= 200
    met = judged and full["healthy_s"] < 1.0
    target = {
        "target": "serves (/healthz 200) within 1 s of start whatever the live games",
        "figure": f"{full['healthy_s']:.3f} s from process start",
        "met": met if judged else None,
    }
    verdict = ("met " if met else "MISSED") if judged else "n/a "
    print(f"{verdict}  {target['target']}: {target['figure']}")
    report = {
        "benchmark": "recovery",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick,
        "machine": machine(),
        "versions": found,
        "games": games,
        "events_per_game": length,
        "room_size": args.room_size,
        "rooms": rooms,
        "fill_seconds": round(fill_s, 2),
        "empty_start": empty,
        "restart": full,
        "targets": [target],
    }
    print(f"wrote {write_json('recovery.json', report)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
