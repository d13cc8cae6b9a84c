"""Load benchmark: racing bots and spectators against a real server, beside the fan-out
ceiling and the echo.

    python -m bench.load [--quick] [--racers N] [--room-size K] [--spectators M]
                         [--spectator-rooms R] [--rate MOVES_PER_S] [--seconds S]
                         [--scenario paced|saturated|both] [--sweep [N,N,...]]
                         [--ceilings fanout,echo|none] [--ceiling-append pool|line]
                         [--fsync everysec|always|no]
                         [--workers 1[,2]] [--load-processes P] [--redis-cluster]
                         [--profile DIR]

Starts a private redis-server and ``python -m server`` on it, then ``--load-processes`` load
processes (``python -m bench.load drive``, default 2, each driving every n-th room and its
spectators, all starting together) with N racing bots in rooms of K players and M spectators
spread over the first R rooms. Every bot folds its own game's public events
(``shared.public_fold_event``) and plays a random legal move of its public view
(``shared.public_legal_moves``), waiting for the ack and its own game_event before the next.

Each scenario runs against the server, then with the same rooms, clients and pacing against
each ceiling of ``--ceilings``, each in its own process: bench/fanout.py (append, ack, forward
one message to every other member: what the goals are judged against, bench/goals.py) and
bench/echo.py (one frame back: a reference line).

- ``paced``: every bot moves ``--rate`` times per second (default 1): CPU per move, moves
  served of those offered, ack latency and spectator lag under a realistic load;
- ``saturated``: every bot moves as soon as its last move is answered: the most accepted moves
  per second;
- ``--sweep``: the paced load at each racer count (twice as many spectators, on a tenth as
  many rooms as racers), ending with the cost curve beside the fan-out ceiling.

Reports accepted moves/s, ack latency p50/p95/p99 (send to ack), spectator lag p50/p99, the
server's CPU and peak RSS (psutil), CPU per move of the server, the load processes and Redis,
the load process's own CPU and event-loop lag (if it is saturated, the figures are its limit,
not the server's) and every error. Prints a table and writes bench/results/load.json.

Spectator lag is measured from the moment the server may let a spectator have the event: fair
spectating (docs/protocol.md) holds a card back until every racer still playing has turned it,
so an event becomes visible with the move that made it so, its own or another racer's. The load
process knows every racer's moves (sent, acked, the cards each revealed), so for each event a
spectator receives it finds that releasing move: lag "from send" is receipt minus its send,
"from ack" receipt minus its ack, all on the load process's one clock. A receipt no racer's
move explains would be a fairness breach, counted as ``spectator_receipts_unexplained``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.common import (
    PrivateRedis,
    ProcessSampler,
    free_port,
    machine,
    quantiles_ms,
    raise_nofile,
    unpack,
    versions,
    wait_port,
    write_json,
)
from bench.goals import notes, print_curve, print_scenario, targets
from server.runtime.loops import loop_factory
from shared import PublicView, public_fold_event, public_legal_moves
from shared import protocol as p

SETUP_CONCURRENCY = 100
ANSWER_TIMEOUT = 10.0
COUNTDOWN_MS = 1000
ECHO_FRAME = p.encode_unchecked({"type": p.MOVE, "id": 123456, "move": "t3t5x4"})


def move_frame(move_id: int) -> bytes:
    """A move as the ceilings get it (they play no rules: any move will do)."""
    return p.encode_unchecked({"type": p.MOVE, "id": move_id, "move": "t3t5x4"})


# The server's per-connection rate limit is a protection, not what this benchmark measures.
TICK_MS = 50  # the server's default --tick-ms, passed explicitly so the goal knows it
SERVER_ARGS = ["--rate", "100000", "--burst", "100000", "--max-rooms", "100000",
               "--max-spectators-per-room", "100000", "--max-players-per-room", "64",
               "--max-lobbies-per-session", "100000", "--tick-ms", str(TICK_MS)]  # fmt: skip


@dataclass(frozen=True)
class Scenario:
    """One driven load: who connects, how fast the bots move, how long it is measured."""

    name: str
    racers: int
    room_size: int
    spectators: int
    spectator_rooms: int
    rate: float  # moves per second per bot; 0 = as fast as answers come
    seconds: float
    warmup: float
    variant: str = "swiss"


class Stats:
    """Everything the load process counts; only what happens inside the window is measured."""

    def __init__(self) -> None:
        self.measuring = False
        # The window's opening (perf_counter_ns): a move sent before it is not measured, even
        # if answered inside it, so a pause of the load process just before it is not counted.
        self.since_ns = 0
        self.acks = 0
        self.frames = 0  # every frame the load process received in the window
        self.racer_frames = 0  # of them, those racers received (the rest: spectators')
        self.ack_ns: list[int] = []
        self.ack_at_ns: list[int] = []  # when each measured move was sent, from the window's start
        self.lag_ack_ns: list[int] = []
        self.lag_send_ns: list[int] = []
        self.rejects: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.late_ticks = 0
        self.finished_games = 0
        self.unexplained = 0
        self.racers: dict[str, Racer] = {}  # by session
        self.receipts: list[tuple[str, int, int]] = []  # (player, version, ns) by spectators
        self.offered = 0.0  # moves the paced bots were due to send in the window

    def on_ack(self, player: str, version: int, sent: int, now: int, watched: bool) -> None:
        if not self.measuring or sent < self.since_ns:
            return
        self.acks += 1
        self.ack_ns.append(now - sent)
        self.ack_at_ns.append(sent - self.since_ns)

    def on_spectated(self, player: str, version: int, now: int) -> None:
        if self.measuring:
            self.receipts.append((player, version, now))

    def spectator_lags(self) -> None:
        """After the run: each receipt's lag from the move that made its event visible."""
        for player, version, now in self.receipts:
            racer = self.racers.get(player)
            found = None if racer is None else racer.visible(version, self.racers)
            if found is None:
                self.unexplained += 1
                continue
            sent, acked = found
            if sent < self.since_ns:
                continue
            self.lag_send_ns.append(now - sent)
            self.lag_ack_ns.append(now - acked)

    def forward_lags(self) -> None:
        """After a fan-out ceiling's run: each receipt's lag from its move (``version`` is the
        move's id there); an ack the mover never saw counts no lag from the ack."""
        for player, move, now in self.receipts:
            racer = self.racers.get(player)
            sent = None if racer is None else racer.timing.get(move)
            if sent is None:
                self.unexplained += 1
                continue
            if sent[0] < self.since_ns:
                continue
            self.lag_send_ns.append(now - sent[0])
            if sent[1]:
                self.lag_ack_ns.append(now - sent[1])


@dataclass(eq=False)
class Racer:
    """A bot: one connection, its game's public view, one move in flight at most."""

    ws: ClientConnection
    rng: random.Random
    watched: bool
    session: str = ""
    room: str = ""
    view: PublicView | None = None
    version: int = 0
    sent_ns: int = 0
    pending: int | None = None
    acked_version: int = 0
    next_id: int = 0
    done: bool = False
    started: asyncio.Event = field(default_factory=asyncio.Event)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    inbox: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    rivals: list[Racer] = field(default_factory=list)  # the others in its room
    # Per version of its game: (sent, acked) of the move and the cards it turned up; per card
    # the (sent, acked) of the move that first showed it to this racer; when it ran out of
    # moves (a done game holds no viewer back).
    timing: dict[int, tuple[int, int]] = field(default_factory=dict)
    reveals: dict[int, list[str]] = field(default_factory=dict)
    first_seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    done_at: tuple[int, int] | None = None
    stopped_at: float | None = None  # monotonic, when its bot stopped moving
    gave_up: bool = False  # a move went unanswered: what it was due to send still counts
    _visible: dict[int, tuple[int, int] | None] = field(default_factory=dict)
    _legal: tuple[int, list[str]] = (-1, [])  # (version, its legal moves)

    def legal(self) -> list[str]:
        """The legal moves of the folded view, sorted; worked out once a version: a watched
        bot asked twice a move (is it over? which move next?), the bots' largest cost."""
        version, moves = self._legal
        if version != self.version:
            assert self.view is not None
            moves = sorted(public_legal_moves(self.view))
            self._legal = (self.version, moves)
        return moves

    def visible(self, version: int, racers: dict[str, Racer]) -> tuple[int, int] | None:
        """(sent, acked) of the move that let viewers have this game's ``version``: the latest
        of its own move and, for each card it turned up, the move by which every other racer
        still playing had seen it; None if none did (fair spectating would not have sent it)."""
        start = version
        while start > 1 and start - 1 not in self._visible:
            start -= 1
        for v in range(start, version + 1):
            if v <= 1:
                self._visible[v] = (0, 0)
                continue
            before = self._visible.get(v - 1)
            own = self.timing.get(v)
            found: tuple[int, int] | None = None
            if before is not None and own is not None:
                found = max(before, own)
                for card in self.reveals.get(v, ()):
                    for rival in self.rivals:
                        seen = rival.first_seen.get(card)
                        if seen is None:
                            seen = rival.done_at
                        if seen is None:
                            found = None
                            break
                        found = max(found, seen)
                    if found is None:
                        break
            self._visible[v] = found
        return self._visible[version]


class Driver:
    """The load process: sets up rooms over the protocol, runs the bots, collects Stats."""

    def __init__(
        self, url: str, scenario: Scenario, target: str, part: int = 0, parts: int = 1
    ) -> None:
        self.url = url
        self.sc = scenario
        self.target = target
        self.part = part  # this load process drives rooms i with i % parts == part
        self.parts = parts
        self.stats = Stats()
        self.racers: list[Racer] = []
        self.conns: list[ClientConnection] = []
        self.gate = asyncio.Semaphore(SETUP_CONCURRENCY)
        self.connect_errors = 0
        self.closed_early = 0
        self.stopping = False

    async def open(self, room: str | None = None) -> ClientConnection:
        """A connection; one that will join ``room`` names it, as docs/protocol.md asks, so
        with --workers it is served by the room's home worker."""
        url = self.url if room is None else p.room_url(self.url, room)
        async with self.gate:
            ws = await connect(url, compression=None, max_size=None, open_timeout=30)
        self.conns.append(ws)
        return ws

    # ---- the arena ---------------------------------------------------------------------------

    async def hello(self, ws: ClientConnection, name: str) -> str:
        await ws.send(p.encode_unchecked({"type": p.HELLO, "protocol": 1, "name": name}))
        msg = await self.expect(ws, p.WELCOME)
        return str(msg["session"])

    async def expect(self, ws: ClientConnection, kind: str) -> dict[str, Any]:
        async with asyncio.timeout(ANSWER_TIMEOUT * 3):
            while True:
                for msg in unpack(await ws.recv()):
                    if msg["type"] == kind:
                        return msg
                    if msg["type"] == p.ERROR:
                        raise RuntimeError(f"setup failed: {msg['code']}: {msg['reason']}")

    async def setup_room(self, index: int, spectators: int) -> list[Racer]:
        host = await self.open()
        await self.hello(host, "host")
        create = {"type": p.CREATE_ROOM, "variant": self.sc.variant, "seed": index,
                  "capacity": self.sc.room_size, "countdown_ms": COUNTDOWN_MS}  # fmt: skip
        await host.send(p.encode_unchecked(create))
        room = str((await self.expect(host, p.ROOM))["room"]["id"])
        await host.close()
        self.conns.remove(host)
        watched = spectators > 0
        racers = []
        for seat in range(self.sc.room_size):
            ws = await self.open(room)
            racer = Racer(ws, random.Random(index * 1000 + seat), watched, room=room)
            racer.session = await self.hello(ws, f"bot{index}-{seat}")
            await ws.send(p.encode_unchecked({"type": p.JOIN, "room": room}))
            await self.expect(ws, p.JOINED)
            racers.append(racer)
        for _ in range(spectators):
            ws = await self.open(room)
            await self.hello(ws, "fan")
            await ws.send(p.encode_unchecked({"type": p.JOIN, "room": room, "role": "spectator"}))
            await self.expect(ws, p.JOINED)
            asyncio.get_running_loop().create_task(self.spectate(ws))
        return racers

    async def spectate(self, ws: ClientConnection, by_move: bool = False) -> None:
        """A spectator's frames; ``by_move``: a fan-out ceiling's, whose events carry the
        move's id."""
        stats = self.stats
        try:
            async for frame in ws:
                stats.frames += stats.measuring
                now = time.perf_counter_ns()
                for msg in unpack(frame):
                    kind = msg["type"]
                    if kind == p.GAME_EVENT:
                        key = msg["event"]["id"] if by_move else msg["version"]
                        stats.on_spectated(msg["player"], key, now)
                    elif kind == p.ERROR:
                        stats.errors[msg["code"]] += 1
        except ConnectionClosed:
            if not self.stopping:
                self.closed_early += 1

    async def read_racer(self, racer: Racer) -> None:
        stats = self.stats
        try:
            async for frame in racer.ws:
                now = time.perf_counter_ns()
                stats.frames += stats.measuring
                stats.racer_frames += stats.measuring
                for msg in unpack(frame):
                    self.on_racer_message(racer, msg, now)
                if racer.pending is None and racer.version >= racer.acked_version:
                    racer.ready.set()
        except ConnectionClosed:
            if not self.stopping:
                self.closed_early += 1
        finally:
            racer.done = True
            racer.ready.set()
            racer.started.set()

    def on_racer_message(self, racer: Racer, msg: dict[str, Any], now: int) -> None:
        stats = self.stats
        kind = msg["type"]
        if kind == p.GAME_EVENT and msg["player"] == racer.session:
            if msg["version"] == racer.version + 1:
                racer.view = public_fold_event(racer.view, msg["event"])
                racer.version = msg["version"]
                racer.reveals[racer.version] = msg["event"].get("revealed", [])
                racer.started.set()
                watched = racer.watched and racer.done_at is None and racer.version > 1
                if watched and not racer.legal():
                    racer.done_at = (now, now)  # over: it holds no viewer back from now on
        elif kind == p.ACK and msg["id"] == racer.pending:
            racer.acked_version = msg["version"]
            racer.pending = None
            if racer.watched:
                timing = (racer.sent_ns, now)
                racer.timing[msg["version"]] = timing
                for card in racer.reveals.get(msg["version"], ()):
                    racer.first_seen.setdefault(card, timing)
            stats.on_ack(racer.session, msg["version"], racer.sent_ns, now, racer.watched)
        elif kind == p.REJECT and msg["id"] == racer.pending:
            racer.pending = None
            if stats.measuring:
                stats.rejects[msg["code"]] += 1
        elif kind == p.ERROR:
            stats.errors[msg["code"]] += 1

    async def play(self, racer: Racer, stop_at: float) -> None:
        try:
            await self._play(racer, stop_at)
        finally:
            racer.stopped_at = time.monotonic()

    async def _play(self, racer: Racer, stop_at: float) -> None:
        await racer.started.wait()
        interval = 1 / self.sc.rate if self.sc.rate > 0 else 0.0
        tick = time.monotonic() + racer.rng.random() * interval
        while not racer.done and time.monotonic() < stop_at:
            if interval:
                delay = tick - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                elif self.stats.measuring:
                    self.stats.late_ticks += 1
                tick = max(tick + interval, time.monotonic())
            legal = racer.legal()
            if not legal:
                self.stats.finished_games += 1
                now = time.perf_counter_ns()
                racer.done_at = (now, now)
                return
            racer.next_id += 1
            racer.pending = racer.next_id
            racer.ready.clear()
            racer.sent_ns = time.perf_counter_ns()
            await racer.ws.send(
                p.encode_unchecked(
                    {"type": p.MOVE, "id": racer.next_id, "move": racer.rng.choice(legal)}
                )
            )
            try:
                async with asyncio.timeout(ANSWER_TIMEOUT):
                    await racer.ready.wait()
            except TimeoutError:
                self.stats.errors["timeout"] += 1
                racer.gave_up = True
                return

    async def setup_arena(self) -> None:
        made = await asyncio.gather(*(self.setup_room(i, n) for i, n in self.my_rooms()))
        self.racers = [r for room in made for r in room]
        for room in made:
            for racer in room:
                racer.rivals = [r for r in room if r is not racer]
                self.stats.racers[racer.session] = racer
        for racer in self.racers:
            asyncio.get_running_loop().create_task(self.read_racer(racer))
        starters = [room[0] for room in made]
        await asyncio.gather(*(r.ws.send(p.encode_unchecked({"type": p.START})) for r in starters))

    # ---- the echo ceiling --------------------------------------------------------------------

    async def setup_echo(self) -> None:
        async def one(i: int) -> Racer:
            return Racer(await self.open(), random.Random(i), False)

        racers = range(self.part, self.sc.racers, self.parts)
        self.racers = list(await asyncio.gather(*(one(i) for i in racers)))
        spectators = range(self.part, self.sc.spectators, self.parts)
        await asyncio.gather(*(self.open() for _ in spectators))

    async def echo_bot(self, racer: Racer, stop_at: float) -> None:
        try:
            await self._echo_bot(racer, stop_at)
        finally:
            racer.stopped_at = time.monotonic()

    async def _echo_bot(self, racer: Racer, stop_at: float) -> None:
        interval = 1 / self.sc.rate if self.sc.rate > 0 else 0.0
        tick = time.monotonic() + racer.rng.random() * interval
        stats = self.stats
        try:
            while time.monotonic() < stop_at:
                if interval:
                    delay = tick - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    elif stats.measuring:
                        stats.late_ticks += 1
                    tick = max(tick + interval, time.monotonic())
                sent = time.perf_counter_ns()
                await racer.ws.send(ECHO_FRAME)
                async with asyncio.timeout(ANSWER_TIMEOUT):
                    await racer.ws.recv()
                stats.frames += stats.measuring
                stats.racer_frames += stats.measuring
                stats.on_ack("", 0, sent, time.perf_counter_ns(), False)
        except TimeoutError:
            stats.errors["timeout"] += 1
            racer.gave_up = True
        except ConnectionClosed:
            if not self.stopping:
                self.closed_early += 1

    # ---- the fan-out ceiling (bench/fanout.py) -----------------------------------------------

    async def setup_fanout(self) -> None:
        """The arena's rooms and spectators, each connection joined to its room."""
        made = await asyncio.gather(*(self.fanout_room(i, n) for i, n in self.my_rooms()))
        self.racers = [r for room in made for r in room]
        for racer in self.racers:
            self.stats.racers[racer.session] = racer
            asyncio.get_running_loop().create_task(self.read_forwarded(racer))

    async def fanout_room(self, index: int, spectators: int) -> list[Racer]:
        racers = []
        for seat in range(self.sc.room_size):
            ws = await self.join_fanout(index, "player")
            racer = Racer(ws, random.Random(index * 1000 + seat), spectators > 0, room=str(index))
            racer.session = str((await self.expect(ws, "joined"))["session"])
            racers.append(racer)
        for _ in range(spectators):
            ws = await self.join_fanout(index, "spectator")
            await self.expect(ws, "joined")
            asyncio.get_running_loop().create_task(self.spectate(ws, by_move=True))
        return racers

    async def join_fanout(self, room: int, role: str) -> ClientConnection:
        ws = await self.open()
        await ws.send(p.encode_unchecked({"type": "join", "room": str(room), "role": role}))
        return ws

    async def read_forwarded(self, racer: Racer) -> None:
        """A fan-out racer's frames: its own acks, its rivals' forwarded moves."""
        stats = self.stats
        try:
            async for frame in racer.ws:
                now = time.perf_counter_ns()
                stats.frames += stats.measuring
                stats.racer_frames += stats.measuring
                for msg in unpack(frame):
                    if msg["type"] == p.ACK and msg["id"] == racer.pending:
                        racer.pending = None
                        if racer.watched:
                            racer.timing[msg["id"]] = (racer.sent_ns, now)
                        stats.on_ack(racer.session, msg["version"], racer.sent_ns, now, False)
                        racer.ready.set()
        except ConnectionClosed:
            if not self.stopping:
                self.closed_early += 1
        finally:
            racer.done = True
            racer.ready.set()

    async def fanout_bot(self, racer: Racer, stop_at: float) -> None:
        try:
            await self._fanout_bot(racer, stop_at)
        finally:
            racer.stopped_at = time.monotonic()

    async def _fanout_bot(self, racer: Racer, stop_at: float) -> None:
        interval = 1 / self.sc.rate if self.sc.rate > 0 else 0.0
        tick = time.monotonic() + racer.rng.random() * interval
        while not racer.done and time.monotonic() < stop_at:
            if interval:
                delay = tick - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                elif self.stats.measuring:
                    self.stats.late_ticks += 1
                tick = max(tick + interval, time.monotonic())
            racer.next_id += 1
            racer.pending = racer.next_id
            racer.ready.clear()
            racer.sent_ns = time.perf_counter_ns()
            if racer.watched:
                racer.timing[racer.next_id] = (racer.sent_ns, 0)
            await racer.ws.send(move_frame(racer.next_id))
            try:
                async with asyncio.timeout(ANSWER_TIMEOUT):
                    await racer.ready.wait()
            except TimeoutError:
                self.stats.errors["timeout"] += 1
                racer.gave_up = True
                return

    def my_rooms(self) -> list[tuple[int, int]]:
        """(room index, its spectators) of the rooms this load process drives."""
        rooms = max(1, self.sc.racers // self.sc.room_size)
        watched = min(self.sc.spectator_rooms, rooms) if self.sc.spectators else 0
        per_room = [0] * rooms
        for i in range(self.sc.spectators):
            per_room[i % watched] += 1
        return [(i, per_room[i]) for i in range(rooms) if i % self.parts == self.part]

    # ---- one run -----------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        import psutil

        began = time.monotonic()
        if self.target == "arena":
            await self.setup_arena()
            await asyncio.gather(*(r.started.wait() for r in self.racers))
        elif self.target == "fanout":
            await self.setup_fanout()
        else:
            await self.setup_echo()
        setup_s = time.monotonic() - began
        # Every load process sets up, then all start together on the orchestrator's word.
        print("READY", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        stop_at = time.monotonic() + self.sc.warmup + self.sc.seconds
        # The load process's own collector paused it for up to 90 ms (gc.callbacks): such
        # pauses are not the server's, so no collection runs from here to the window's end. The
        # last one runs before any bot moves: run after the warm-up, it held every answer back
        # for 130 ms, and in one run those were 190 of the 200 acks above the p99.
        gc.collect()
        gc.freeze()
        gc.disable()
        bot = {"arena": self.play, "fanout": self.fanout_bot}.get(self.target, self.echo_bot)
        bots = [asyncio.create_task(bot(r, stop_at)) for r in self.racers]
        lags: list[int] = []
        me = psutil.Process()
        await asyncio.sleep(self.sc.warmup)
        print("MARK", flush=True)
        self.stats.since_ns = time.perf_counter_ns()
        self.stats.measuring = True
        cpu0 = sum(me.cpu_times()[:2])
        t0 = time.monotonic()
        while time.monotonic() < t0 + self.sc.seconds:
            before = time.perf_counter_ns()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter_ns() - before - 10_000_000)
        self.stats.measuring = False
        window = time.monotonic() - t0
        cpu = sum(me.cpu_times()[:2]) - cpu0
        gc.enable()
        print("DONE", flush=True)
        self.stopping = True
        await asyncio.gather(*bots, return_exceptions=True)
        await asyncio.gather(*(ws.close() for ws in self.conns), return_exceptions=True)
        s = self.stats
        if self.target == "fanout":
            s.forward_lags()
        else:
            s.spectator_lags()
        # Paced: what the bots were due to send while the window ran and they still played
        # (a finished game offers no more moves; one left unanswered does); each counts.
        t1 = t0 + window
        s.offered = self.sc.rate * sum(
            max(0.0, (t1 if r.gave_up else min(t1, r.stopped_at or t1)) - t0) for r in self.racers
        )
        errors = dict(s.errors)
        if self.closed_early:
            errors["closed_early"] = self.closed_early
        return {
            "target": self.target,
            "connections": len(self.conns),
            "setup_seconds": round(setup_s, 2),
            "window_seconds": round(window, 3),
            "moves": s.acks,
            "offered_moves": round(s.offered, 1),
            "moves_per_s": round(s.acks / window, 1),
            "frames_received_per_s": round(s.frames / window, 1),
            "racer_frames_per_s": round(s.racer_frames / window, 1),
            "ack": quantiles_ms(s.ack_ns),
            "spectator_lag_from_ack": quantiles_ms(s.lag_ack_ns),
            "spectator_lag_from_send": quantiles_ms(s.lag_send_ns),
            "spectator_receipts_unexplained": s.unexplained,
            "rejects": dict(s.rejects),
            "errors": errors,
            "late_ticks": s.late_ticks,
            "finished_games": s.finished_games,
            "load_process": {
                "cpu_percent": round(100 * cpu / window, 1),
                "loop_lag": quantiles_ms([max(0, lag) for lag in lags]),
            },
            # Merged over the load processes by the orchestrator, then dropped from the report.
            "raw": {
                "ack": s.ack_ns,
                "ack_at": s.ack_at_ns,
                "spectator_lag_from_ack": s.lag_ack_ns,
                "spectator_lag_from_send": s.lag_send_ns,
                "loop_lag": [max(0, lag) for lag in lags],
            },
        }


def drive_main(argv: list[str]) -> int:
    """``python -m bench.load drive``: the load process; prints READY, MARK, DONE, then RESULT
    once its result is in the ``--result`` file."""
    parser = argparse.ArgumentParser(prog="python -m bench.load drive")
    parser.add_argument("--url", required=True)
    parser.add_argument("--target", choices=["arena", "fanout", "echo"], required=True)
    parser.add_argument("--scenario", required=True, help="a Scenario as JSON")
    parser.add_argument("--loop", default="auto")
    parser.add_argument("--part", type=int, default=0, help="which share of the load is this")
    parser.add_argument("--parts", type=int, default=1, help="load processes in all")
    parser.add_argument("--result", required=True, help="where to write the result (JSON)")
    args = parser.parse_args(argv)
    raise_nofile()
    scenario = Scenario(**json.loads(args.scenario))
    driver = Driver(args.url, scenario, args.target, args.part, args.parts)
    with asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
        result = runner.run(driver.run())
    # A file, not a line on stdout: with every sample in it the result is megabytes, and
    # lines that long arrived cut short at a 128 KiB boundary one run in a few (saturated).
    Path(args.result).write_text(json.dumps(result))
    print("RESULT", flush=True)
    return 0


# ---- the orchestrator --------------------------------------------------------------------------


def drive(
    url: str,
    scenario: Scenario,
    target: str,
    sampler: ProcessSampler,
    redis: ProcessSampler | Samplers,
    loop: str,
    parts: int = 1,
    metrics: ServerMetrics | None = None,
    profiler: Profiler | None = None,
) -> dict[str, Any]:
    """Run ``parts`` load processes against ``url``, each a share of the rooms (or of the
    echo clients); they start together once all are set up, and the samplers' window runs
    from the first one's MARK to the last one's DONE."""
    command = [sys.executable, "-m", "bench.load", "drive", "--url", url, "--target", target,
               "--scenario", json.dumps(asdict(scenario)), "--loop", loop]  # fmt: skip
    outputs = Path(tempfile.mkdtemp(prefix="bench-load-"))
    procs = [
        subprocess.Popen(
            [
                *command,
                "--part",
                str(part),
                "--parts",
                str(parts),
                "--result",
                str(outputs / f"{part}.json"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for part in range(parts)
    ]
    lines: queue.Queue[tuple[int, str | None]] = queue.Queue()

    def read(index: int, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put((index, line.strip()))
        lines.put((index, None))

    for index, proc in enumerate(procs):
        threading.Thread(target=read, args=(index, proc), daemon=True).start()
    window: dict[str, float] = {}
    redis_window: dict[str, float] = {}
    histograms: dict[str, dict[str, float | None]] = {}
    results: dict[int, dict[str, Any]] = {}
    ready = marked = done = ended = 0
    while ended < parts:
        index, line = lines.get()
        if line is None:
            ended += 1
            if index not in results:  # it died: do not leave the others waiting for GO
                for proc in procs:
                    proc.kill()
        elif line == "READY":
            ready += 1
            if ready == parts:
                for proc in procs:
                    assert proc.stdin is not None
                    proc.stdin.write("GO\n")
                    proc.stdin.flush()
        elif line == "MARK":
            marked += 1
            if marked == 1:
                sampler.mark()
                redis.mark()
                if metrics is not None:
                    metrics.mark()
                if profiler is not None:
                    profiler.start()
        elif line == "DONE":
            done += 1
            if done == parts:
                window = sampler.window()
                redis_window = redis.window()
                if metrics is not None:
                    histograms = metrics.window()
        elif line == "RESULT":
            results[index] = json.loads((outputs / f"{index}.json").read_text())
    codes = [proc.wait() for proc in procs]
    if profiler is not None:
        profiler.stop()
    shutil.rmtree(outputs, ignore_errors=True)
    if any(codes) or len(results) < parts:
        raise SystemExit(f"a load process failed against {target} (exits {codes})")
    result = merge([results[i] for i in range(parts)])
    result["server_process"] = window
    result["redis_cpu_percent"] = redis_window.get("cpu_percent", 0.0)
    result["server_histograms"] = histograms
    result["cpu_per_move_us"] = cpu_per_move_us(result)
    return result


def worst_by_second(at_ns: list[int], values_ns: list[int]) -> list[float]:
    """The slowest ack of each second of the window, in ms, by when its move was sent: a tail
    made by a periodic stall (a timer's work) shows as a few seconds far above the rest."""
    worst: dict[int, int] = {}
    for at, value in zip(at_ns, values_ns, strict=True):
        second = at // 1_000_000_000
        worst[second] = max(worst.get(second, 0), value)
    return [round(worst.get(k, 0) / 1e6, 1) for k in range(max(worst, default=-1) + 1)]


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from the load processes' own: counts added, quantiles of all the samples."""
    first = parts[0]
    window = max(one["window_seconds"] for one in parts)
    moves = sum(one["moves"] for one in parts)
    frames = sum(one["frames_received_per_s"] * one["window_seconds"] for one in parts)
    racer_frames = sum(one["racer_frames_per_s"] * one["window_seconds"] for one in parts)
    added: dict[str, Counter[str]] = {"rejects": Counter(), "errors": Counter()}
    for one in parts:
        for key, counter in added.items():
            counter.update(one[key])
    raw = {key: [v for one in parts for v in one["raw"][key]] for key in first["raw"]}
    cpu = [one["load_process"]["cpu_percent"] for one in parts]
    return {
        "target": first["target"],
        "connections": sum(one["connections"] for one in parts),
        "setup_seconds": max(one["setup_seconds"] for one in parts),
        "window_seconds": window,
        "moves": moves,
        "offered_moves": round(sum(one["offered_moves"] for one in parts), 1),
        "moves_per_s": round(moves / window, 1) if window else 0.0,
        "frames_received_per_s": round(frames / window, 1) if window else 0.0,
        "racer_frames_per_s": round(racer_frames / window, 1) if window else 0.0,
        "ack": quantiles_ms(raw["ack"]),
        "ack_worst_by_second": worst_by_second(raw["ack_at"], raw["ack"]),
        "spectator_lag_from_ack": quantiles_ms(raw["spectator_lag_from_ack"]),
        "spectator_lag_from_send": quantiles_ms(raw["spectator_lag_from_send"]),
        "spectator_receipts_unexplained": sum(
            one["spectator_receipts_unexplained"] for one in parts
        ),
        "rejects": dict(added["rejects"]),
        "errors": dict(added["errors"]),
        "late_ticks": sum(one["late_ticks"] for one in parts),
        "finished_games": sum(one["finished_games"] for one in parts),
        "load_process": {
            "processes": len(parts),
            "cpu_percent": round(sum(cpu), 1),
            "cpu_percent_each": cpu,
            "loop_lag": quantiles_ms(raw["loop_lag"]),
        },
    }


class BenchStore:
    """The store the server runs on: our private Redis, or a private three-primary Cluster."""

    def __init__(self, fsync: str, cluster: bool) -> None:
        self.cluster = None
        # The server's store, or beside a Cluster the fan-out ceiling's (it speaks no Cluster).
        self.redis = PrivateRedis(fsync)
        if cluster:
            from tests.support.redis_cluster import LocalRedisCluster

            self._dir = tempfile.TemporaryDirectory(prefix="bench-cluster-")
            self.cluster = LocalRedisCluster(Path(self._dir.name), primaries=3)
            self.cluster.start()

    @property
    def url(self) -> str:
        return self.cluster.url if self.cluster is not None else self.redis.url

    @property
    def ceiling_url(self) -> str:
        """Where the fan-out ceiling appends: a plain Redis, the server's unless a Cluster."""
        return self.redis.url

    @property
    def server_args(self) -> list[str]:
        return ["--redis-cluster"] if self.cluster is not None else []

    @property
    def pids(self) -> list[int]:
        pids = [self.redis.process.pid]
        if self.cluster is not None:
            pids += [n.process.pid for n in self.cluster.nodes if n.process is not None]
        return pids

    def flush(self) -> None:
        """A clean slate per scenario (these are our own servers, never the one on 6379)."""
        import redis as redis_py

        if self.cluster is not None:
            for port in self.cluster.ports:
                self.cluster.client(port).flushall()
        redis_py.Redis.from_url(self.redis.url).flushall()

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self._dir.cleanup()
        self.redis.stop()


class Samplers:
    """Several processes sampled as one (a Cluster's nodes): CPU added up."""

    def __init__(self, pids: list[int]) -> None:
        self.each = [ProcessSampler(pid) for pid in pids]

    def mark(self) -> None:
        for sampler in self.each:
            sampler.mark()

    def window(self) -> dict[str, float]:
        windows = [sampler.window() for sampler in self.each]
        return {"cpu_percent": round(sum(w["cpu_percent"] for w in windows), 1)}

    def stop(self) -> None:
        for sampler in self.each:
            sampler.stop()


Histograms = dict[tuple[str, str], list[tuple[float, float]]]
"""A /metrics scrape's histograms: (name, generation label or "") to cumulative (le, count)."""

# The server's histograms bench.load reads (docs/operations.md): its side of an ack, and how
# long it waited on the store and on its garbage collector meanwhile.
SERVER_HISTOGRAMS = ("arena_ack_seconds", "arena_store_append_seconds", "arena_gc_pause_seconds")


def parse_histograms(text: str) -> Histograms:
    """The cumulative buckets of SERVER_HISTOGRAMS in a Prometheus text scrape."""
    from prometheus_client.parser import text_string_to_metric_families

    found: Histograms = {}
    for family in text_string_to_metric_families(text):
        if family.name not in SERVER_HISTOGRAMS:
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                key = (family.name, sample.labels.get("generation", ""))
                found.setdefault(key, []).append((float(sample.labels["le"]), sample.value))
    return found


def bucket_quantile(counts: list[tuple[float, float]], q: float) -> float | None:
    """The upper bound (ms) of the bucket holding the q-quantile of cumulative ``counts``;
    None when they hold nothing. Histograms give no finer answer than their buckets."""
    total = counts[-1][1] if counts else 0.0
    if total <= 0:
        return None
    return next(le * 1000 for le, n in counts if n >= q * total)


def histogram_window(before: Histograms, after: Histograms) -> dict[str, dict[str, float | None]]:
    """Counts and p50/p99/max bucket bounds of each histogram between two scrapes."""
    window: dict[str, dict[str, float | None]] = {}
    for (name, generation), buckets in sorted(after.items()):
        earlier = dict(before.get((name, generation), []))
        counts = [(le, n - earlier.get(le, 0.0)) for le, n in sorted(buckets)]
        label = name.removeprefix("arena_").removesuffix("_seconds") + generation
        window[label] = {
            "n": counts[-1][1] if counts else 0.0,
            "p50_le_ms": bucket_quantile(counts, 0.50),
            "p99_le_ms": bucket_quantile(counts, 0.99),
            "max_le_ms": bucket_quantile(counts, 1.0),
        }
    return window


class ServerMetrics:
    """The server's own histograms over the measured window (GET /metrics at MARK and DONE)."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/metrics"
        self._before: Histograms = {}

    def scrape(self) -> Histograms:
        import urllib.request

        try:
            with urllib.request.urlopen(self.url, timeout=5) as answer:
                return parse_histograms(answer.read().decode())
        except OSError:
            return {}

    def mark(self) -> None:
        self._before = self.scrape()

    def window(self) -> dict[str, dict[str, float | None]]:
        return histogram_window(self._before, self.scrape())


def cpu_per_move_us(result: dict[str, Any]) -> dict[str, float]:
    """CPU microseconds each process spent per accepted move (per echo, for the ceiling)."""
    rate = result["moves_per_s"]
    if not rate:
        return {}
    share = {
        "server": result["server_process"]["cpu_percent"],
        "load": result["load_process"]["cpu_percent"],
        "redis": result.get("redis_cpu_percent", 0.0),
    }
    return {who: round(percent / 100 / rate * 1e6, 1) for who, percent in share.items()}


def server_complaints(log: Path | None, most: int = 20) -> str:
    """The server log's last warnings and errors, to say why a run failed."""
    if log is None or not log.exists():
        return "(no server log)"
    lines = [line for line in log.read_text(errors="replace").splitlines() if '"info"' not in line]
    return "the server's last warnings and errors:\n" + "\n".join(lines[-most:])


def start_ceiling(
    target: str, loop: str, redis_url: str, append: str = "pool"
) -> tuple[subprocess.Popen[bytes], int]:
    """bench/fanout.py (appending to ``redis_url``, ``append`` saying how) or bench/echo.py
    in its own process."""
    port = free_port()
    command = [sys.executable, "-m", f"bench.{target}", "--port", str(port), "--loop", loop]
    if target == "fanout":
        command += ["--redis-url", redis_url, "--append", append]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    if not wait_port(port, 15):
        proc.kill()
        raise SystemExit(f"bench.{target} did not start")
    return proc, port


CEILINGS = ("fanout", "echo")
"""The ceilings a scenario is measured against, after the server: the fan-out ceiling (what
the goals are judged against) and the bare echo (a reference line)."""


def run_scenario(
    scenario: Scenario,
    store: BenchStore,
    log_dir: Path,
    loop: str,
    workers: int = 1,
    parts: int = 1,
    ceilings: tuple[str, ...] = CEILINGS,
    profile: Path | None = None,
    ceiling_append: str = "pool",
) -> dict[str, Any]:
    """The server under ``scenario``, then each of ``ceilings`` under the same clients."""
    from tests.support.server_process import ServerProcess

    store.flush()
    server = ServerProcess(
        redis_url=store.url,
        extra_args=[*SERVER_ARGS, *store.server_args, "--loop", loop, "--workers", str(workers)],
        log_path=log_dir / f"{scenario.name}-w{workers}.log",
    )
    server.start(timeout=30)
    assert server.process is not None
    sampler = ProcessSampler(server.process.pid)
    redis_sampler = Samplers(store.pids)
    # With --workers the port's /metrics is whichever worker answers: one worker's figures.
    metrics = ServerMetrics(server.port) if workers == 1 else None
    profiler = None
    if profile is not None:
        out = profile / f"{scenario.name}-{scenario.racers}-w{workers}.txt"
        profiler = Profiler(server.process.pid, scenario.seconds, out)
    results: dict[str, Any] = {"scenario": asdict(scenario)}
    try:
        results["server"] = drive(
            server.url, scenario, "arena", sampler, redis_sampler, loop, parts, metrics, profiler
        )
    except SystemExit:
        print(server_complaints(server.log_path), file=sys.stderr)
        raise
    finally:
        sampler.stop()
        server.stop()
    try:
        for target in ceilings:
            store.flush()
            ceiling, port = start_ceiling(target, loop, store.ceiling_url, ceiling_append)
            sampler = ProcessSampler(ceiling.pid)
            try:
                url = f"ws://127.0.0.1:{port}"
                results[target] = drive(url, scenario, target, sampler, redis_sampler, loop, parts)
            finally:
                sampler.stop()
                ceiling.terminate()
                ceiling.wait(timeout=10)
            theirs = results[target]["moves_per_s"]
            ratio = results["server"]["moves_per_s"] / theirs if theirs else 0.0
            results[f"moves_vs_{target}"] = round(ratio, 3)
    finally:
        redis_sampler.stop()
    return results


def py_spy() -> str:
    """The py-spy binary ``--profile`` runs (SystemExit saying how to install it if none)."""
    binary = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(binary).exists():
        raise SystemExit(f"--profile needs py-spy: {sys.executable} -m pip install py-spy")
    return binary


class Profiler:
    """py-spy sampling the server (and its workers) over the measured window, its stacks
    collapsed into a text file (``--profile``): what a move costs the server, by function."""

    def __init__(self, pid: int, seconds: float, out: Path) -> None:
        self.pid = pid
        self.seconds = seconds
        self.out = out
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = py_spy()
        self.out.parent.mkdir(parents=True, exist_ok=True)
        command = [binary, "record", "--pid", str(self.pid), "--subprocesses", "--nonblocking",
                   "--format", "raw", "--rate", "100", "--duration", str(round(self.seconds)),
                   "--output", str(self.out)]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def stop(self) -> None:
        if self.process is not None:
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.terminate()
            print(f"profile: {self.out}")


SWEEP = (250, 500, 1000, 2000)
"""The cost curve's paced loads (racers; twice as many spectators, on a tenth as many rooms as
racers: the paced shape of 1,000 racers at every point)."""
QUICK_SWEEP = (8, 16)


def scenarios(args: argparse.Namespace) -> list[tuple[str, Scenario]]:
    """(results key, scenario) of every run asked for, one worker count's worth."""
    quick = args.quick
    seconds = args.seconds or (1.0 if quick else 20.0)
    warmup = 0.3 if quick else 3.0
    if args.sweep is not None:
        points = args.sweep or (QUICK_SWEEP if quick else SWEEP)
        return [
            (
                f"paced-{n}",
                Scenario(
                    "paced",
                    n,
                    args.room_size,
                    2 * n,
                    max(1, n // 10),
                    args.rate,
                    seconds,
                    warmup,
                    args.variant,
                ),
            )
            for n in points
        ]
    racers = args.racers or (16 if quick else 1000)
    spectators = args.spectators if args.spectators is not None else (8 if quick else 2000)
    spectator_rooms = args.spectator_rooms or (2 if quick else 100)
    names = ["paced", "saturated"] if args.scenario == "both" else [args.scenario]
    shape = (racers, args.room_size, spectators, spectator_rooms)
    return [
        (
            name,
            Scenario(
                name, *shape, args.rate if name == "paced" else 0.0, seconds, warmup, args.variant
            ),
        )
        for name in names
    ]


def racer_counts(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.split(",") if n)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["drive"]:
        return drive_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a few clients for a second or so")
    parser.add_argument("--racers", type=int, help="racing bots (default 1000, quick 16)")
    parser.add_argument("--room-size", type=int, default=4, help="players per room")
    parser.add_argument("--spectators", type=int, help="spectators (default 2000, quick 8)")
    parser.add_argument("--spectator-rooms", type=int, help="rooms watched (default 100)")
    parser.add_argument("--rate", type=float, default=1.0, help="moves/s per bot when paced")
    parser.add_argument("--seconds", type=float, help="measured seconds (default 20, quick 1)")
    parser.add_argument("--scenario", choices=["paced", "saturated", "both"], default="both")
    parser.add_argument(
        "--sweep",
        type=racer_counts,
        nargs="?",
        const=(),
        help="the cost curve: paced at each racer count instead of --scenario (default "
        f"{','.join(map(str, SWEEP))}, quick {','.join(map(str, QUICK_SWEEP))})",
    )
    parser.add_argument(
        "--ceilings",
        default=",".join(CEILINGS),
        help="ceilings measured after the server, of fanout,echo (the goals need fanout); "
        "'none' for the server alone",
    )
    parser.add_argument(
        "--ceiling-append",
        choices=["pool", "line"],
        default="pool",
        help="how the fan-out ceiling appends: a pooled redis-py connection a batch (pool, "
        "the goals' ceiling) or the store's pipelined connection, as the server does (line)",
    )
    parser.add_argument("--variant", choices=["swiss", "quadrennial"], default="swiss")
    parser.add_argument("--fsync", choices=["everysec", "always", "no"], default="everysec")
    parser.add_argument("--out", default="load.json", help="report name in bench/results")
    parser.add_argument(
        "--workers",
        default="1",
        help="server worker processes, or a list to compare in one run (e.g. 1,2); the "
        "ceilings run with the first",
    )
    parser.add_argument(
        "--redis-cluster",
        action="store_true",
        help="run the server on a private three-primary Redis Cluster instead of one Redis",
    )
    parser.add_argument(
        "--load-processes",
        type=int,
        default=2,
        help="load generator processes, each driving a share of the rooms (default 2)",
    )
    parser.add_argument(
        "--loop",
        choices=["auto", "uvloop", "asyncio"],
        default="auto",
        help="event loop of the server, the ceilings and the load process alike",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="a directory: py-spy samples the server over each measured window, collapsed "
        "stacks to <scenario>-<racers>-w<workers>.txt",
    )
    args = parser.parse_args(argv)
    if args.profile is not None:
        py_spy()  # before anything starts, not after the server is up
    ceilings = tuple(c for c in args.ceilings.split(",") if c in CEILINGS)
    soft, hard = raise_nofile()
    store = BenchStore(args.fsync, args.redis_cluster)
    results: dict[str, dict[str, Any]] = {}
    failed: dict[str, str] = {}
    try:
        server_versions = versions(store.url)
        with tempfile.TemporaryDirectory(prefix="bench-load-") as logs:
            counts = [int(w) for w in str(args.workers).split(",")]
            for name, scenario in scenarios(args):
                if failed and args.sweep is not None:
                    break  # a larger load would fail too: report the curve up to here
                for count in counts:
                    key = name if count == 1 else f"{name}-w{count}"
                    if count != 1:
                        print(f"--workers {count}:")
                    load_average = os.getloadavg()
                    try:
                        results[key] = run_scenario(
                            scenario,
                            store,
                            Path(logs),
                            args.loop,
                            count,
                            args.load_processes,
                            ceilings if count == counts[0] else (),
                            args.profile,
                            args.ceiling_append,
                        )
                    except SystemExit as exc:
                        if args.sweep is None:
                            raise
                        failed[key] = str(exc)
                        print(f"{key}: failed ({exc}); the sweep stops here", file=sys.stderr)
                        break
                    results[key]["workers"] = count
                    results[key]["ceiling_append"] = args.ceiling_append
                    results[key]["load_average"] = load_average[0]
                    print(f"(load average before: {' '.join(f'{x:.2f}' for x in load_average)})")
                    print_scenario(results[key])
    finally:
        store.stop()
    print_curve(results)
    for note in notes(results):
        print(f"note: {note}")
    checks = targets(results)
    for check in checks:
        verdict = {True: "met ", False: "MISSED", None: "n/a "}[check["met"]]
        print(f"{verdict}  {check['target']}: {check['figure']}")
    report = {
        "benchmark": "load",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick,
        "appendfsync": args.fsync,
        "machine": {**machine(), "load_average": os.getloadavg(), "nofile": [soft, hard]},
        "versions": server_versions,
        "server_args": [*SERVER_ARGS, "--loop", args.loop],
        "load_processes": args.load_processes,
        "store": "cluster (3 primaries)" if args.redis_cluster else "redis",
        "loop": args.loop,
        "scenarios": results,
        "failed": failed,
        "targets": checks,
    }
    print(f"wrote {write_json(args.out, report)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
