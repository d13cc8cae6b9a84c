"""The fan-out ceiling: the least any server must do for bench.load's room shape.

    python -m bench.fanout --port PORT --redis-url URL [--append pool|line] [--loop auto]
                           [--host 127.0.0.1]

A move of a real race is appended durably, acked to its sender and forwarded to the room's
other racers and spectators (about 12 frames a move at bench.load's paced shape). The bare echo
sends one frame back, so a ratio to it mixes the server's own cost with the fan-out any server
must do. This server does only that fan-out, on the same library, options, event loop and one
process as the real server: no rules, no fold, no fairness, no ticks.

Its protocol, spoken by ``python -m bench.load drive --target fanout``: a connection's first
frame is ``{"type": "join", "room": str, "role": "player" | "spectator"}``, answered
``{"type": "joined", "session": str}``. Then each ``{"type": "move", "id": int, "move": str}``
of a player is appended to the room's Redis stream (XADD; a loop turn's appends in one
pipelined write, as the server's group commit does), acked ``{"type": "ack", "id", "version"}``
once Redis answered, and forwarded as one encoded ``game_event`` (shaped as the server's) to
every other member of the room. Runs until SIGTERM or SIGINT.

``--append pool`` (the default, the ceiling bench.load's goals are set against) sends each batch
on a connection of redis-py's pool through its public API; ``--append line`` on the store's own
pipelined connection (server.store.redis_pipeline), as the server does on one Redis: the ceiling
with the server's cheaper append, to see how much of the server's gain on the ceiling is that.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
from redis.asyncio import ConnectionPool
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from bench.common import decoded, raise_nofile
from server.runtime.loops import loop_factory
from server.store.redis_pipeline import PipelinedConnection
from server.store.resp import Packer

MAX_BATCH = 256  # appends in one pipelined write, as the server's group commit


class Appender:
    """XADDs asked for in one loop turn go to Redis in one pipelined write; each caller gets
    its own entry id. Batches may be in flight side by side, each on a pooled connection, or
    all on the pipelined one (``line``)."""

    def __init__(self, url: str, *, line: bool = False) -> None:
        self.pool = ConnectionPool.from_url(url)
        self.line = PipelinedConnection(self.pool.make_connection) if line else None
        self.packer = Packer(self.pool.make_connection().encoder.encode)
        self._pending: list[tuple[bytes, bytes, asyncio.Future[bytes]]] = []
        self._draining = False
        self._tasks: set[asyncio.Task[None]] = set()

    def append(self, key: bytes, payload: bytes) -> asyncio.Future[bytes]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        self._pending.append((key, payload, future))
        if not self._draining:
            # Its first step runs in the next loop turn, after all this turn's appends.
            self._draining = True
            self._spawn(self._drain())
        return future

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self) -> None:
        self._draining = False
        pending, self._pending = self._pending, []
        for start in range(MAX_BATCH, len(pending), MAX_BATCH):
            self._spawn(self._commit(pending[start : start + MAX_BATCH]))
        await self._commit(pending[:MAX_BATCH])

    async def _commit(self, batch: list[tuple[bytes, bytes, asyncio.Future[bytes]]]) -> None:
        if self.line is not None:
            await self._commit_on_line(self.line, batch)
            return
        connection = await self.pool.get_connection()
        try:
            commands = [(b"XADD", key, b"*", b"d", payload) for key, payload, _ in batch]
            await connection.send_packed_command(connection.pack_commands(commands))
            for _, _, future in batch:
                reply = await connection.read_response()
                if not future.done():
                    future.set_result(reply)
        except Exception as exc:
            await connection.disconnect()
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc)
        finally:
            await self.pool.release(connection)

    async def _commit_on_line(
        self, line: PipelinedConnection, batch: list[tuple[bytes, bytes, asyncio.Future[bytes]]]
    ) -> None:
        commands = [(b"XADD", key, b"*", b"d", payload) for key, payload, _ in batch]
        try:
            replies = await line.send(self.packer.pack(commands), len(commands))
        except Exception as exc:
            replies = [exc] * len(batch)
        for (_, _, future), reply in zip(batch, replies, strict=True):
            if future.done():
                continue
            if isinstance(reply, BaseException):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def aclose(self) -> None:
        if self.line is not None:
            await self.line.aclose()
        await self.pool.disconnect()


@dataclass(eq=False)
class Room:
    """Who is in a room, and its last version (one per appended move)."""

    id: str
    key: bytes
    members: list[ServerConnection] = field(default_factory=list)
    version: int = 0


class Fanout:
    """The rooms, and one handler per connection."""

    def __init__(self, appender: Appender) -> None:
        self.appender = appender
        self.rooms: dict[str, Room] = {}
        self.sessions = itertools.count(1)

    async def handle(self, ws: ServerConnection) -> None:
        room: Room | None = None
        try:
            join = decoded(await ws.recv())
            name = str(join["room"])
            room = self.rooms.get(name)
            if room is None:
                room = self.rooms[name] = Room(name, f"fanout:{name}".encode())
            room.members.append(ws)
            session = f"s{next(self.sessions)}"
            await ws.send(msgpack.packb({"type": "joined", "session": session}))
            if join.get("role") != "player":
                await ws.wait_closed()
                return
            async for frame in ws:
                await self.move(ws, room, session, decoded(frame))
        except ConnectionClosed:
            pass
        finally:
            if room is not None:
                room.members.remove(ws)

    async def move(self, ws: ServerConnection, room: Room, session: str, msg: Any) -> None:
        if msg.get("type") != "move":
            return
        room.version += 1
        version = room.version
        event = {"type": "moved", "move": msg["move"], "id": msg["id"], "revealed": [],
                 "at": int(time.time() * 1000)}  # fmt: skip
        await self.appender.append(room.key, msgpack.packb(event))
        await ws.send(msgpack.packb({"type": "ack", "id": msg["id"], "version": version}))
        forward = {"type": "game_event", "room": room.id, "player": session,
                   "version": version, "event": event}  # fmt: skip
        broadcast([m for m in room.members if m is not ws], msgpack.packb(forward))


async def run(
    host: str, port: int, redis_url: str, max_frame_bytes: int, append: str = "pool"
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    fanout = Fanout(Appender(redis_url, line=append == "line"))
    async with serve(
        fanout.handle, host, port, max_size=max_frame_bytes, compression=None, close_timeout=1
    ):
        print(f"fanout listening on {host}:{port}", flush=True)
        await stop.wait()
    await fanout.appender.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fanout", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis-url", required=True, help="a private Redis (never port 6379)")
    parser.add_argument("--max-frame-bytes", type=int, default=65536)
    parser.add_argument(
        "--append",
        choices=["pool", "line"],
        default="pool",
        help="each batch on a pooled redis-py connection (the goals' ceiling), or on the "
        "store's pipelined connection, as the server appends",
    )
    parser.add_argument("--loop", choices=["auto", "uvloop", "asyncio"], default="auto")
    args = parser.parse_args(argv)
    raise_nofile()
    with asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
        runner.run(run(args.host, args.port, args.redis_url, args.max_frame_bytes, args.append))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
