"""Archive benchmark: finished races moved from Redis to the archive, on SQLite and PostgreSQL.

    python -m bench.archive [--quick] [--races N] [--pool P] [--workers 1,2]

1. A pool of real races: P races of each variant (swiss, quadrennial) and size (2, 3, 4 racers),
   played to the end by the server's own commands in-process (random legal moves, 40 to 160 a
   game at 0.2 to 2 s each, then a resignation unless the game was won), their streams read.
2. For each backend (SQLite in a temporary directory, then a private PostgreSQL as the
   ``postgres`` user on a free port): a private redis-server's ``used_memory`` is read, N
   finished races (the pool's, each under a room id of its own) are written to it as the
   server writes them, with their ``archive-due`` entries, and ``used_memory`` read again;
   then the archiver (``server.race.services.archiver``) sweeps until none waits, timed (races
   archived per second: read, write, read back and check, delete), and ``used_memory`` read a
   third time, once Redis's cron had a few seconds to shrink its tables (the goal: back within
   5 % of before the races).
3. The archive's size: bytes per race and per move (``bytes_per_move``: the whole record, room
   events and summary included, over the games' moves; ``game_bytes_per_move``: the compact game
   records alone), beside what the same races took in Redis.
4. Replay from the archive: for a sample of races, the time to read one whole (the store says
   it has none, the archive serves it) and fold it, as a spectator's or a replay's join does.
5. Real servers: the same N races in the private Redis, archived into SQLite by a server
   process (``python -m server --archive-after-s 0``) with ``--workers 1`` and then with
   ``--workers 2``, timed from the server answering until no race waits: races archived per
   second by a deployment, each worker claiming the rooms it archives (``--workers`` list).

Prints a table and writes bench/results/archive.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import redis

from bench.common import PrivateRedis, machine, quantiles_ms, table, versions, write_json
from server.app import App
from server.archive import Archive, SqliteArchive
from server.archive.games import encode_game
from server.archive.postgres import PostgresArchive
from server.race.domain.fold import fold_stored
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room, game_stream, room_stream
from server.race.services.archiver import ARCHIVE_DUE_INDEX, Archiver
from server.race.services.directory import ROOMS_INDEX, SEATS_INDEX
from server.race.services.reader import read_room
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.runtime.logging import configure_logging
from server.store import MemoryEventStore, RedisEventStore
from shared.game import legal_moves

VARIANTS = ("swiss", "quadrennial")
SIZES = (2, 3, 4)
FILL_CONCURRENCY = 64
WARM_UP = 16  # races archived before the measurement


@dataclass(frozen=True)
class Race:
    """A finished race's events: its room stream's, and each player's game; what the directory
    holds of it (its summary)."""

    room: list[dict[str, Any]]
    games: dict[str, list[dict[str, Any]]]
    finished_at: int
    summary: dict[str, Any]

    @property
    def moves(self) -> int:
        return sum(sum(1 for e in g if e.get("type") == "moved") for g in self.games.values())


async def play_pool(per_kind: int, moves: tuple[int, int], seed: int = 40) -> list[Race]:
    """Races played to the end by the server's commands, in-process on a memory store."""
    rng = random.Random(seed)
    store, clock = MemoryEventStore(), FakeClock()
    app = App(Config(), store, clock)
    app.delivery.ticker.send_many = lambda peers, msg: None
    app.race_clock.poll_s = 0.005
    app.open()
    races = []
    try:
        for variant in VARIANTS:
            for size in SIZES:
                for _ in range(per_kind):
                    races.append(await play_one(app, store, clock, rng, variant, size, moves))
    finally:
        await app.close_parts()
    return races


async def play_one(
    app: App,
    store: MemoryEventStore,
    clock: FakeClock,
    rng: random.Random,
    variant: str,
    size: int,
    moves: tuple[int, int],
) -> Race:
    commands = app.commands
    room = await commands.create_room(
        {"variant": variant, "capacity": size, "countdown_ms": 0}, creator="bench"
    )
    players = [f"p{i}" for i in range(size)]
    for player in players:
        await commands.join(
            room, player, name=player, token=f"t-{player}", connection=f"bench.{player}"
        )
    await commands.start(room, players[0])
    clock.advance(1)
    await until(lambda: all(room.games.get(p) and room.games[p].version for p in players))
    for player in players:
        for cid in range(rng.randint(*moves)):
            state = room.games[player].state
            assert state is not None
            legal = sorted(legal_moves(state))
            if not legal or room.games[player].progress.status.done:
                break
            clock.advance(rng.randint(200, 2000))
            await commands.games.move(room, player, cid, rng.choice(legal))
        if not room.games[player].progress.status.done:
            await commands.games.resign(room, player)
    await until(lambda: room.status is RoomStatus.FINISHED)
    assert room.finished is not None
    games = {p: [e.data for e in await store.read(room.games[p].stream)] for p in players}
    summary = {**room.summary(), "creator": "bench"}
    room_events = [e.data for e in await store.read(room.stream)]
    return Race(room_events, games, room.finished.at, summary)


async def until(ready: Any) -> None:
    for _ in range(20_000):
        if ready():
            return
        await asyncio.sleep(0.001)
    raise RuntimeError("the race never got there")


def room_id(i: int) -> str:
    return f"bench{i:07d}"


async def fill(store: RedisEventStore, pool: Sequence[Race], count: int, first: int = 0) -> None:
    """``count`` finished races in Redis as the server leaves them, each due for archiving."""
    gate = asyncio.Semaphore(FILL_CONCURRENCY)

    async def one(i: int) -> None:
        race, rid = pool[i % len(pool)], room_id(first + i)
        room_events, seats = own_seats(race, rid)
        async with gate:
            writes: list[Awaitable[Any]] = [
                store.append(room_stream(rid), room_events, expected_version=0)
            ]
            for player, events in race.games.items():
                writes.append(store.append(game_stream(rid, player), events, expected_version=0))
            writes.append(store.index_put(ARCHIVE_DUE_INDEX, rid, race.finished_at))
            # The directory's entry and the seats, as the server's Directory writes them.
            summary = msgpack.packb({**race.summary, "id": rid})
            writes.append(store.index_put(ROOMS_INDEX, rid, race.summary["created_at"], summary))
            for token in seats:
                writes.append(store.index_put(SEATS_INDEX, token, 0, rid.encode()))
            await asyncio.gather(*writes)

    await asyncio.gather(*(one(i) for i in range(count)))


def own_seats(race: Race, rid: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The race's room events with resume-token hashes of this copy's own (every race's seats
    are its own in the seats index), and those hashes."""
    events, seats = [], []
    for event in race.room:
        if event.get("type") == "player_joined":
            token = hashlib.sha256(f"{rid}:{event['token_hash']}".encode()).hexdigest()
            event = {**event, "token_hash": token}
            seats.append(token)
        events.append(event)
    return events, seats


async def settled_memory(url: str, before: int, seconds: float = 5.0) -> int:
    """``used_memory`` once Redis's cron has shrunk the tables the races grew (it resizes them
    a step at a time): the lowest reading within ``seconds``, sooner if back within 1 %."""
    lowest = used_memory(url)
    deadline = time.monotonic() + seconds
    while lowest > before * 1.01 and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        lowest = min(lowest, used_memory(url))
    return lowest


def used_memory(url: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


async def drain(archiver: Archiver, name: str) -> None:
    """Sweep until no finished race waits; a failed sweep ends the run."""
    while True:
        if await archiver.sweep():
            raise RuntimeError(f"archiving to {name} failed")
        if archiver.figures.waiting == 0:
            return


async def run_backend(
    name: str, archive: Archive, url: str, pool: Sequence[Race], count: int, sample: int
) -> dict[str, Any]:
    prefix = f"{name}:"
    store = RedisEventStore(url, prefix=prefix)
    clock = FakeClock()
    clock.advance(10**13)  # every race finished long ago
    try:
        # A few races archived first (not counted), so that "before" holds what "after" will:
        # the store's connections (the archiver's eight at once) and its scripts.
        await fill(store, pool, WARM_UP, first=10**6)
        await drain(Archiver(store, archive, clock, after_s=0), name)
        before = used_memory(url)
        t0 = time.perf_counter()
        await fill(store, pool, count)
        fill_s = time.perf_counter() - t0
        filled = used_memory(url)
        archiver = Archiver(store, archive, clock, after_s=0)
        t0 = time.perf_counter()
        await drain(archiver, name)
        archive_s = time.perf_counter() - t0
        after = await settled_memory(url, before)
        assert archiver.figures.archived == count, archiver.figures
        assert await archive.count() == count + WARM_UP
        size = await archive.size_bytes() * count // (count + WARM_UP)
        rng = random.Random(7)
        latencies = []
        for i in rng.sample(range(count), min(sample, count)):
            t = time.perf_counter_ns()
            read = await read_room(store, room_id(i), archive)
            assert read is not None
            assert read.archived
            folded = Room(room_id(i))
            fold_stored(folded, read.events)
            latencies.append(time.perf_counter_ns() - t)
            assert folded.status is RoomStatus.FINISHED
    finally:
        await store.aclose()
    moves = sum(pool[i % len(pool)].moves for i in range(count))
    game_bytes = _pool_game_bytes(pool, count)
    return {
        "races": count,
        "moves": moves,
        "redis_used_memory": {
            "before": before,
            "with_races": filled,
            "after_archiving": after,
            "after_vs_before_percent": round(100 * (after - before) / before, 2),
            "bytes_per_race_in_redis": round((filled - before) / count),
            "bytes_per_move_in_redis": round((filled - before) / moves, 1),
        },
        "fill_s": round(fill_s, 2),
        "archive_s": round(archive_s, 2),
        "races_archived_per_s": round(count / archive_s, 1),
        "archive_bytes": size,
        "bytes_per_race": round(size / count),
        "bytes_per_move": round(size / moves, 2),
        "game_bytes_per_move": round(game_bytes / moves, 2),
        "replay_from_archive": quantiles_ms(latencies),
    }


async def run_server(
    url: str, pool: Sequence[Race], count: int, workers: int, tmp: Path
) -> dict[str, Any]:
    """``count`` races archived by a real server of ``workers`` worker processes: the races in
    Redis first, then the server started; timed from its first answer until none waits."""
    from tests.support.server_process import ServerProcess  # as with_postgres uses tests'

    prefix = f"workers{workers}:"
    data = tmp / f"workers{workers}"
    store = RedisEventStore(url, prefix=prefix)
    try:
        await fill(store, pool, count)
        server = ServerProcess(
            redis_url=url,
            log_path=tmp / f"workers{workers}.log",
            extra_args=["--redis-prefix", prefix, "--workers", str(workers), "--data-dir",
                        str(data), "--archive-after-s", "0", "--log-level", "warning"],
        )  # fmt: skip
        server.start(timeout=60)
        try:
            t0 = time.perf_counter()
            while await store.index_count(ARCHIVE_DUE_INDEX):
                if time.perf_counter() - t0 > 3600:
                    raise RuntimeError(f"{workers} workers did not archive {count} races")
                await asyncio.sleep(0.02)
            seconds = time.perf_counter() - t0
        finally:
            server.stop()
    finally:
        await store.aclose()
    archive = SqliteArchive(data / "archive.sqlite3")
    try:
        archived = await archive.count()
    finally:
        await archive.aclose()
    if archived != count:
        raise RuntimeError(f"{workers} workers archived {archived} of {count} races")
    return {
        "workers": workers,
        "races": count,
        "seconds": round(seconds, 2),
        "races_archived_per_s": round(count / seconds, 1),
    }


def _pool_game_bytes(pool: Sequence[Race], count: int) -> int:
    sizes = [sum(len(encode_game(e)) for e in race.games.values()) for race in pool]
    return sum(sizes[i % len(pool)] for i in range(count))


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    per_kind = args.pool or (1 if args.quick else 6)
    moves = (10, 30) if args.quick else (40, 160)
    t0 = time.perf_counter()
    pool = await play_pool(per_kind, moves)
    pool_s = time.perf_counter() - t0
    count = args.races or (60 if args.quick else 10_000)
    sample = 20 if args.quick else 500
    results: dict[str, Any] = {}
    private = PrivateRedis("everysec")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-archive-") as tmp:
            sqlite = SqliteArchive(Path(tmp) / "archive.sqlite3")
            try:
                results["sqlite"] = await run_backend(
                    "sqlite", sqlite, private.url, pool, count, sample
                )
            finally:
                await sqlite.aclose()
            results["postgresql"] = await with_postgres(Path(tmp), private.url, pool, count, sample)
            servers = [
                await run_server(private.url, pool, count, workers, Path(tmp))
                for workers in args.workers
            ]
        redis_version = versions(private.url)
    finally:
        private.stop()
    return {
        "machine": machine(),
        "versions": redis_version,
        "quick": args.quick,
        "pool": {
            "races": len(pool),
            "per_variant_and_size": per_kind,
            "moves_per_game": list(moves),
            "seconds": round(pool_s, 1),
        },
        "results": results,
        "servers": servers,
        "bytes_per_move": results["sqlite"]["bytes_per_move"],
        "targets": [
            {
                "target": "Redis used_memory back within 5 % of before the races",
                "sqlite": results["sqlite"]["redis_used_memory"]["after_vs_before_percent"],
                "postgresql": results["postgresql"]["redis_used_memory"]["after_vs_before_percent"],
            }
        ],
    }


async def with_postgres(
    tmp: Path, url: str, pool: Sequence[Race], count: int, sample: int
) -> dict[str, Any]:
    from tests.support.postgres_server import PostgresServer  # as bench.ratings uses tests'

    server = PostgresServer(tmp / "postgres")
    server.start()
    try:
        archive = PostgresArchive(server.create_database("bench"))
        try:
            return await run_backend("postgresql", archive, url, pool, count, sample)
        finally:
            await archive.aclose()
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run for CI (seconds)")
    parser.add_argument("--races", type=int, default=None, help="finished races to archive")
    parser.add_argument("--pool", type=int, default=None, help="races played per variant/size")
    parser.add_argument(
        "--workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2],
        help="server worker counts to archive with, e.g. 1,2",
    )
    args = parser.parse_args()
    configure_logging("console", "warning")  # one line per archived room is not the point
    report = asyncio.run(measure(args))
    path = write_json("archive.json", report)
    rows = [
        ("races (pool)", f"{report['results']['sqlite']['races']:,} ({report['pool']['races']})")
    ]
    for name, r in report["results"].items():
        memory = r["redis_used_memory"]
        replay = r["replay_from_archive"]
        rows += [
            (f"{name}: archived", f"{r['races_archived_per_s']:,} races/s ({r['archive_s']} s)"),
            (f"{name}: bytes per race / move", f"{r['bytes_per_race']:,} / {r['bytes_per_move']}"),
            (f"{name}: game record per move", f"{r['game_bytes_per_move']} bytes"),
            (f"{name}: Redis per race / move", f"{memory['bytes_per_race_in_redis']:,} / "
                                               f"{memory['bytes_per_move_in_redis']}"),
            (f"{name}: Redis after vs before", f"{memory['after_vs_before_percent']} %"),
            (f"{name}: replay from archive",
             f"p50 {replay['p50_ms']} ms, p99 {replay['p99_ms']} ms"),
        ]  # fmt: skip
    for server in report["servers"]:
        rows.append(
            (
                f"server, --workers {server['workers']}: archived",
                f"{server['races_archived_per_s']:,} races/s ({server['seconds']} s)",
            )
        )
    rows.append(("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())))
    print(table(rows, "bench.archive"))
    print(f"wrote {path}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
