"""Soak benchmark: races without end against one server on Redis with the archive, and whether
its memory stays flat.

    python -m bench.soak [--quick] [--minutes 5] [--concurrency 10] [--room-size 2]
                         [--warmup-s S] [--sample-s 5] [--unload-after-s 300]
                         [--archive-after-s 30] [--max-moves 60] [--spectator-every 3]
                         [--reconnect-every 4] [--late-viewer-every 5] [--loop auto]

Starts a private redis-server and ``python -m server`` on it (the SQLite archive in a
temporary data directory), then keeps ``--concurrency`` races going: each a room of
``--room-size`` guests who create, join, start and play random legal moves of their public view
(``shared.public_legal_moves``) until their game is over or ``--max-moves`` (then they resign).
Every ``--spectator-every``-th race has a spectator from the start; in every
``--reconnect-every``-th race a racer drops its connection mid-game, comes back with its resume
token, sends its last move again under the same id (the same ack must come back) and plays on;
every ``--late-viewer-every``-th race a viewer joins a race that finished a while ago (often
unloaded, or archived: it is read again) and checks it gets every game and the results.

Every ``--sample-s`` it samples the server's RSS and open files (psutil), its asyncio tasks
and loaded rooms (``/metrics``), and Redis's keys (``DBSIZE``) and ``used_memory``. After the
warm-up (by default the unload and archive delays and a minute: the rooms waiting to be unloaded
or archived reach their steady number), the growth per 1,000 races is the least-squares slope of
each against the races finished (RSS's also over the second half of those races alone: a leak
grows there too, a climb that levels off does not). Writes bench/results/soak.json:
``samples``, ``growth`` and ``targets`` (RSS growth ≤ 1 MiB per 1,000 races after warm-up).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import random
import tempfile
import time
import urllib.request
from collections import Counter, deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.common import (
    Inbox,
    PrivateRedis,
    free_port,
    machine,
    raise_nofile,
    table,
    versions,
    write_json,
)
from bench.load import ANSWER_TIMEOUT, SERVER_ARGS, server_complaints
from server.runtime.loops import loop_factory
from shared import PublicView, public_fold, public_fold_event, public_legal_moves
from shared import protocol as p

GROWTH_GOAL_MIB = 1.0  # RSS growth per 1,000 races after warm-up
VARIANTS = ("swiss", "quadrennial")


def send(ws: ClientConnection, msg: dict[str, Any]) -> Any:
    return ws.send(p.encode_unchecked(msg))


async def expect(inbox: Inbox, kind: str) -> dict[str, Any]:
    """The next message of ``kind``; the ones before it are dropped; an ``error`` raises."""
    async with asyncio.timeout(ANSWER_TIMEOUT):
        while True:
            msg = await inbox.next()
            if msg["type"] == kind:
                return msg
            if msg["type"] == p.ERROR:
                raise RuntimeError(f"{msg['code']}: {msg['reason']}")


@dataclass
class Counts:
    """What the racing side did and saw."""

    races: int = 0
    moves: int = 0
    resignations: int = 0
    spectators: int = 0
    reconnects: int = 0
    resent_acks_matched: int = 0
    late_views: int = 0
    late_views_complete: int = 0


class Seat:
    """A racer: one connection at a time, its game folded from its own public events."""

    def __init__(self, url: str, room: str, rng: random.Random) -> None:
        self.url = url
        self.room = room
        self.rng = rng
        self.ws: ClientConnection | None = None
        self.inbox: Inbox | None = None
        self.token = ""
        self.view: PublicView | None = None
        self.version = 0
        self.next_id = 0
        self.last: tuple[int, str, int] | None = None  # (id, move, acked version)

    async def connect(self, *, resume: bool = False) -> dict[str, Any]:
        self.ws = await connect(p.room_url(self.url, self.room), compression=None, max_size=None)
        self.inbox = Inbox(self.ws)
        hello: dict[str, Any] = {"type": p.HELLO, "protocol": 1, "name": "soak"}
        if resume:
            hello["resume"] = self.token
        await send(self.ws, hello)
        welcome = await expect(self.inbox, p.WELCOME)
        self.token = welcome["token"]
        return welcome

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    def fold(self, msg: dict[str, Any]) -> None:
        if msg["type"] == p.GAME_EVENT and msg["version"] == self.version + 1:
            self.view = public_fold_event(self.view, msg["event"])
            self.version = msg["version"]
        elif msg["type"] == p.GAME and msg["events"]:
            self.view = public_fold(msg["events"])
            self.version = msg["version"]

    async def answer(self, move_id: int) -> dict[str, Any]:
        """The ``ack`` or ``reject`` of a move; game events on the way are folded."""
        assert self.inbox is not None
        async with asyncio.timeout(ANSWER_TIMEOUT):
            while True:
                msg = await self.inbox.next()
                self.fold(msg)
                if msg["type"] in (p.ACK, p.REJECT) and msg["id"] == move_id:
                    return msg
                if msg["type"] == p.ERROR:
                    raise RuntimeError(f"{msg['code']}: {msg['reason']}")

    async def started(self) -> None:
        """Until the game's first event is folded."""
        assert self.inbox is not None
        async with asyncio.timeout(ANSWER_TIMEOUT * 3):
            while self.version == 0:
                self.fold(await self.inbox.next())

    async def move(self) -> bool:
        """One random legal move; False when the game has none left (it is over)."""
        assert self.ws is not None
        assert self.view is not None
        legal = sorted(public_legal_moves(self.view))
        if not legal:
            return False
        self.next_id += 1
        move = self.rng.choice(legal)
        await send(self.ws, {"type": p.MOVE, "id": self.next_id, "move": move})
        answer = await self.answer(self.next_id)
        if answer["type"] != p.ACK:
            raise RuntimeError(f"move refused: {answer}")
        self.last = (self.next_id, move, answer["version"])
        while self.version < answer["version"]:  # the event comes before its ack; be sure
            assert self.inbox is not None
            self.fold(await self.inbox.next())
        return True

    async def finished(self) -> dict[str, Any]:
        assert self.inbox is not None
        async with asyncio.timeout(ANSWER_TIMEOUT * 3):
            while True:
                msg = await self.inbox.next()
                if msg["type"] == p.FINISHED:
                    return msg


class Soak:
    """The racing side: ``concurrency`` races at a time, one after another, until told to stop."""

    def __init__(self, url: str, args: argparse.Namespace) -> None:
        self.url = url
        self.args = args
        self.counts = Counts()
        self.errors: Counter[str] = Counter()
        self.numbers = itertools.count(1)
        self.ended: deque[tuple[str, int]] = deque(maxlen=200)  # (room, racers) finished
        self.stopping = False
        self.draining: set[asyncio.Task[None]] = set()  # spectators reading, held till done

    async def run(self, slot: int) -> None:
        rng = random.Random(slot)
        while not self.stopping:
            number = next(self.numbers)
            try:
                await self.race(number, rng)
            except (RuntimeError, TimeoutError, OSError, ConnectionClosed) as exc:
                self.errors[type(exc).__name__ + ": " + str(exc)[:80]] += 1
                await asyncio.sleep(0.5)

    async def race(self, number: int, rng: random.Random) -> None:
        args = self.args
        seats: list[Seat] = []
        others: list[ClientConnection] = []
        try:
            first = Seat(self.url, "", random.Random(rng.random()))
            await first.connect()
            assert first.ws is not None
            assert first.inbox is not None
            variant = VARIANTS[number % len(VARIANTS)]
            await send(
                first.ws,
                {
                    "type": p.CREATE_ROOM,
                    "variant": variant,
                    "capacity": args.room_size,
                    "countdown_ms": 0,
                },
            )
            room = str((await expect(first.inbox, p.ROOM))["room"]["id"])
            first.room = room
            seats.append(first)
            for _ in range(args.room_size - 1):
                seat = Seat(self.url, room, random.Random(rng.random()))
                await seat.connect()
                seats.append(seat)
            for seat in seats:
                assert seat.ws is not None
                assert seat.inbox is not None
                await send(seat.ws, {"type": p.JOIN, "room": room})
                await expect(seat.inbox, p.JOINED)
            if args.spectator_every and number % args.spectator_every == 0:
                others.append(await self.spectate(room))
            await send(first.ws, {"type": p.START})
            drop = rng.randrange(len(seats)) if self.due(number, args.reconnect_every) else -1
            await asyncio.gather(*(self.play(s, i == drop) for i, s in enumerate(seats)))
            for seat in seats:
                await seat.finished()
            self.counts.races += 1
            self.ended.append((room, len(seats)))
            if self.due(number, args.late_viewer_every) and len(self.ended) > 20:
                await self.late_view(*self.ended[0])
        finally:
            await asyncio.gather(
                *(s.close() for s in seats), *(ws.close() for ws in others), return_exceptions=True
            )

    @staticmethod
    def due(number: int, every: int) -> bool:
        return bool(every) and number % every == 0

    async def play(self, seat: Seat, drop: bool) -> None:
        await seat.started()
        drop_at = seat.rng.randrange(5, 30) if drop else -1
        for moves in itertools.count():
            if moves == self.args.max_moves:
                assert seat.ws is not None
                await send(seat.ws, {"type": p.RESIGN})
                self.counts.resignations += 1
                return
            if moves == drop_at and seat.last is not None:
                await self.reconnect(seat)
            if not await seat.move():
                return
            self.counts.moves += 1

    async def reconnect(self, seat: Seat) -> None:
        """Drop the connection, resume the seat, send the last move again under its id."""
        await seat.close()
        welcome = await seat.connect(resume=True)
        if not welcome["resumed"]:
            raise RuntimeError("resume refused")
        self.counts.reconnects += 1
        assert seat.ws is not None
        assert seat.inbox is not None
        assert seat.last is not None
        while True:  # room, then the game so far
            msg = await seat.inbox.next()
            seat.fold(msg)
            if msg["type"] == p.GAME:
                break
        move_id, move, version = seat.last
        await send(seat.ws, {"type": p.MOVE, "id": move_id, "move": move})
        answer = await seat.answer(move_id)
        if answer["type"] != p.ACK or answer["version"] != version:
            raise RuntimeError(f"a resent move was answered {answer}, not its ack at {version}")
        self.counts.resent_acks_matched += 1

    async def view(self, ws: ClientConnection, room: str, name: str) -> Inbox:
        """Hello, then join ``room`` as a spectator: the inbox after ``joined``."""
        inbox = Inbox(ws)
        await send(ws, {"type": p.HELLO, "protocol": 1, "name": name})
        await expect(inbox, p.WELCOME)
        await send(ws, {"type": p.JOIN, "room": room, "role": "spectator"})
        await expect(inbox, p.JOINED)
        return inbox

    async def spectate(self, room: str) -> ClientConnection:
        ws = await connect(p.room_url(self.url, room), compression=None, max_size=None)
        await self.view(ws, room, "fan")
        self.counts.spectators += 1
        task = asyncio.get_running_loop().create_task(self.drain(ws))
        self.draining.add(task)
        task.add_done_callback(self.draining.discard)
        return ws

    @staticmethod
    async def drain(ws: ClientConnection) -> None:
        """A spectator reads every frame it is sent and keeps none: a viewer who stops reading
        would be dropped as a slow reader, which is not what the soak measures."""
        with contextlib.suppress(ConnectionClosed):
            async for _frame in ws:
                continue

    async def late_view(self, room: str, racers: int) -> None:
        """A viewer of a race that ended a while ago: every game, then the results."""
        ws = await connect(p.room_url(self.url, room), compression=None, max_size=None)
        try:
            inbox = await self.view(ws, room, "late")
            self.counts.late_views += 1
            games = 0
            async with asyncio.timeout(ANSWER_TIMEOUT):
                while True:
                    msg = await inbox.next()
                    if msg["type"] == p.GAME and msg["events"]:
                        games += 1
                    elif msg["type"] == p.FINISHED:
                        break
            if games == racers:
                self.counts.late_views_complete += 1
            else:
                raise RuntimeError(f"a late viewer of {room} got {games} of {racers} games")
        finally:
            await ws.close()


@dataclass(frozen=True)
class Sample:
    at_s: float
    races: int
    rss_mib: float
    open_files: int
    tasks: float
    python_blocks: float
    connections: float
    rooms_loaded: float
    redis_keys: int
    redis_used_memory_mib: float


def scrape(port: int) -> dict[str, float]:
    """The server's live gauges from /metrics (arena_tasks, arena_rooms_loaded...)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("arena_") and " " in line and "{" not in line:
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ys over xs; None without two distinct xs."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def slope_beside(xs: list[float], zs: list[float], ys: list[float]) -> float | None:
    """The least-squares slope of ys over xs with zs beside them (y = a + b x + c z): what xs
    explain that zs do not. None when the two cannot be told apart."""
    n = len(xs)
    if n < 3:
        return None
    mx, mz, my = sum(xs) / n, sum(zs) / n, sum(ys) / n
    dx, dz, dy = [x - mx for x in xs], [z - mz for z in zs], [y - my for y in ys]
    sxx = sum(a * a for a in dx)
    szz = sum(c * c for c in dz)
    sxz = sum(a * c for a, c in zip(dx, dz, strict=True))
    sxy = sum(a * b for a, b in zip(dx, dy, strict=True))
    szy = sum(c * b for c, b in zip(dz, dy, strict=True))
    det = sxx * szz - sxz * sxz
    if det <= 1e-9 * max(sxx * szz, 1e-300):
        return None
    return (sxy * szz - szy * sxz) / det


def growth(samples: list[Sample], warmup_s: float) -> dict[str, Any]:
    """Per 1,000 races after the warm-up: each figure's least-squares slope, and RSS's from the
    first to the last sample (the coarse reading)."""
    after = [s for s in samples if s.at_s >= warmup_s]
    races = [float(s.races) for s in after]
    out: dict[str, Any] = {"samples": len(after)}
    if len(after) >= 2:
        out["races"] = after[-1].races - after[0].races
        out["seconds"] = round(after[-1].at_s - after[0].at_s, 1)
    for key in (
        "rss_mib",
        "open_files",
        "tasks",
        "python_blocks",
        "connections",
        "rooms_loaded",
        "redis_keys",
        "redis_used_memory_mib",
    ):
        per_race = slope(races, [float(getattr(s, key)) for s in after])
        out[f"{key}_per_1000_races"] = None if per_race is None else round(per_race * 1000, 3)
    # The rooms in memory follow the race rate (each waits --unload-after-s), and a shared
    # machine's rate wanders: RSS's slope with the loaded rooms beside it is the growth that
    # the races themselves leave, whatever the rate.
    rooms = [float(s.rooms_loaded) for s in after]
    for key in ("rss_mib", "python_blocks"):
        beside = slope_beside(races, rooms, [float(getattr(s, key)) for s in after])
        out[f"{key}_per_1000_races_rooms_aside"] = (
            None if beside is None else round(beside * 1000, 3)
        )
    # A leak grows in both halves of the measured races; RSS that climbs only in the first (a
    # high-water mark of the loaded rooms, a bounded cache filling) is flat in the second. The
    # target is judged on the whole window; this reading tells the two apart.
    if len(after) >= 6:
        middle = (after[0].races + after[-1].races) / 2
        later = [s for s in after if s.races >= middle]
        per_race = slope([float(s.races) for s in later], [s.rss_mib for s in later])
        out["rss_mib_per_1000_races_second_half"] = (
            None if per_race is None else round(per_race * 1000, 3)
        )
    if len(after) >= 2 and after[-1].races > after[0].races:
        span = after[-1].races - after[0].races
        out["rss_mib_first_to_last_per_1000_races"] = round(
            (after[-1].rss_mib - after[0].rss_mib) / span * 1000, 3
        )
    return out


async def sample(started: float, soak: Soak, pid: int, port: int, redis: Any) -> Sample:
    import psutil

    process = psutil.Process(pid)
    gauges = await asyncio.get_running_loop().run_in_executor(None, scrape, port)
    info = await redis.info("memory")
    return Sample(
        at_s=round(time.monotonic() - started, 1),
        races=soak.counts.races,
        rss_mib=round(process.memory_info().rss / 2**20, 2),
        open_files=process.num_fds(),
        tasks=gauges.get("arena_tasks", 0.0),
        python_blocks=gauges.get("arena_python_blocks", 0.0),
        connections=gauges.get("arena_connections", 0.0),
        rooms_loaded=gauges.get("arena_rooms_loaded", 0.0),
        redis_keys=int(await redis.dbsize()),
        redis_used_memory_mib=round(int(info["used_memory"]) / 2**20, 2),
    )


async def soak_run(
    args: argparse.Namespace, url: str, pid: int, port: int, redis_url: str
) -> dict[str, Any]:
    import redis.asyncio as aioredis

    redis = aioredis.Redis.from_url(redis_url)
    soak = Soak(url, args)
    started = time.monotonic()
    stop_at = started + args.minutes * 60
    # A loaded machine may finish few races in a short run: it goes on (up to 3 times as long)
    # until it has finished the few a report needs.
    hard_stop = started + args.minutes * 180

    def running() -> bool:
        now = time.monotonic()
        return now < stop_at or (soak.counts.races < args.min_races and now < hard_stop)

    slots = [asyncio.create_task(soak.run(i)) for i in range(args.concurrency)]
    samples: list[Sample] = []
    try:
        while running():
            samples.append(await sample(started, soak, pid, port, redis))
            last = samples[-1]
            print(
                f"{last.at_s:7.0f} s  races {last.races:6d}  rss {last.rss_mib:7.1f} MiB  "
                f"fds {last.open_files:4d}  tasks {last.tasks:5.0f}  "
                f"blocks {last.python_blocks / 1000:6.0f}k  "
                f"rooms {last.rooms_loaded:5.0f}  "
                f"redis keys {last.redis_keys:6d} {last.redis_used_memory_mib:6.1f} MiB",
                flush=True,
            )
            await asyncio.sleep(args.sample_s if running() else 0.0)
        soak.stopping = True
        await asyncio.wait(slots, timeout=60)
        samples.append(await sample(started, soak, pid, port, redis))
    finally:
        for task in slots:
            task.cancel()
        await redis.aclose()
    return {"soak": soak, "samples": samples, "seconds": time.monotonic() - started}


def warmup_of(args: argparse.Namespace) -> float:
    if args.warmup_s is not None:
        return float(args.warmup_s)
    return float(max(args.unload_after_s, args.archive_after_s + 5) + 60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="10 seconds of 4 races at a time (CI)")
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=10, help="races at a time")
    parser.add_argument("--room-size", type=int, default=2)
    parser.add_argument(
        "--warmup-s",
        type=float,
        default=None,
        help="not measured; default: the unload or archive delay, plus 60 s",
    )
    parser.add_argument("--sample-s", type=float, default=5.0)
    parser.add_argument("--unload-after-s", type=float, default=300.0, help="the server's option")
    parser.add_argument("--archive-after-s", type=float, default=30.0, help="the server's option")
    parser.add_argument("--max-moves", type=int, default=60, help="then the racer resigns")
    parser.add_argument("--spectator-every", type=int, default=3)
    parser.add_argument("--reconnect-every", type=int, default=4)
    parser.add_argument("--late-viewer-every", type=int, default=5)
    parser.add_argument("--min-races", type=int, default=0, help="run on until this many")
    parser.add_argument("--loop", default="auto")
    args = parser.parse_args(argv)
    if args.quick:
        args.minutes, args.concurrency, args.sample_s = 1 / 6, 4, 1.0
        args.unload_after_s, args.archive_after_s, args.max_moves = 5.0, 2.0, 40
        args.warmup_s = 4.0 if args.warmup_s is None else args.warmup_s
        args.min_races = max(args.min_races, 4)
    raise_nofile()
    from tests.support.server_process import ServerProcess

    redis = PrivateRedis("everysec")
    scratch = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    log = scratch / "server.log"
    server = ServerProcess(
        redis_url=redis.url,
        port=free_port(),
        data_dir=None,
        log_path=log,
        extra_args=[
            *SERVER_ARGS,
            "--loop",
            args.loop,
            "--data-dir",
            str(scratch / "data"),
            "--unload-after-s",
            str(args.unload_after_s),
            "--archive-after-s",
            str(args.archive_after_s),
        ],
    )
    try:
        server.start(timeout=30)
        assert server.process is not None
        with asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
            run = runner.run(soak_run(args, server.url, server.process.pid, server.port, redis.url))
    except BaseException:
        print(server_complaints(log))
        raise
    finally:
        server.stop()
        redis.stop()
    soak: Soak = run["soak"]
    samples: list[Sample] = run["samples"]
    warmup = warmup_of(args)
    grown = growth(samples, warmup)
    per_1000 = grown.get("rss_mib_per_1000_races")
    aside = grown.get("rss_mib_per_1000_races_rooms_aside")
    measured = not args.quick and grown.get("races", 0) >= 200
    report = {
        "machine": machine(),
        "versions": versions(),
        "options": {k: v for k, v in vars(args).items()},
        "seconds": round(run["seconds"], 1),
        "warmup_s": warmup,
        "counts": asdict(soak.counts),
        "errors": dict(soak.errors),
        "races_per_s": round(soak.counts.races / run["seconds"], 2),
        "growth": grown,
        "samples": [asdict(s) for s in samples],
        "targets": {
            "rss_growth_per_1000_races_mib": {
                "goal": GROWTH_GOAL_MIB,
                "value": per_1000,
                "met": (per_1000 <= GROWTH_GOAL_MIB) if measured and per_1000 is not None else None,
            },
            "rss_growth_per_1000_races_rooms_aside_mib": {
                "goal": GROWTH_GOAL_MIB,
                "value": aside,
                "met": (aside <= GROWTH_GOAL_MIB) if measured and aside is not None else None,
            },
        },
    }
    path = write_json("soak.json", report)
    rows = [
        ("races finished", f"{soak.counts.races} ({report['races_per_s']}/s)"),
        (
            "moves, reconnects, spectators, late views",
            f"{soak.counts.moves}, {soak.counts.reconnects}, {soak.counts.spectators}, "
            f"{soak.counts.late_views}",
        ),
        ("errors", str(sum(soak.errors.values()))),
        (f"after {warmup:.0f} s warm-up: races measured", str(grown.get("races", 0))),
        ("RSS per 1,000 races (slope)", f"{per_1000} MiB (goal <= {GROWTH_GOAL_MIB})"),
        ("the same, loaded rooms aside", f"{aside} MiB"),
        (
            "the same, second half of the races measured",
            f"{grown.get('rss_mib_per_1000_races_second_half')} MiB",
        ),
        (
            "open files / tasks per 1,000 races",
            f"{grown.get('open_files_per_1000_races')} / {grown.get('tasks_per_1000_races')}",
        ),
        (
            "Redis keys / MiB per 1,000 races",
            f"{grown.get('redis_keys_per_1000_races')} / "
            f"{grown.get('redis_used_memory_mib_per_1000_races')}",
        ),
    ]
    print(table(rows, "bench.soak"))
    goal = report["targets"]["rss_growth_per_1000_races_mib"]["met"]
    print(
        f"goal RSS growth <= {GROWTH_GOAL_MIB} MiB / 1,000 races: "
        f"{'n/a' if goal is None else 'met' if goal else 'MISSED'}"
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
