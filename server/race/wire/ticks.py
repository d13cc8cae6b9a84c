"""Ticks: frames to a room's viewers go at most once a tick per connection, as one batch.

A quiet room's first frames go at the end of this loop turn (all that one move released,
together) and open a tick: what comes during it waits for its end, and a tick that ends with
nothing waiting closes. So no viewer gets more than a frame a tick, yet a move in a quiet room
is not held back a whole tick. Each room keeps its own tick, so flushes spread over time
instead of landing on the loop (and on the clients) in one burst.

A tick is the time its flush was made plus ``tick_ms`` (``Audience.tick_ends``); a timer is
armed only for frames that arrive within it. A timer to close every tick cost each move a
timer and four objects the collector promoted, when most ticks end with nothing waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from server.race.wire.audience import Audience, Cancellable, Peer
from shared import protocol as p
from shared.protocol import batch_frame

SendMany = Callable[[Iterable[Peer], dict[str, Any] | bytes], None]
"""Send one message (or an encoded frame) to many peers."""

Soon = Callable[[Callable[[Audience], None], Audience], Cancellable]
"""Run a room's tick at the end of this loop turn (``loop.call_soon``, or the outbox's hook
that runs it just before the turn's writes)."""


class Ticker:
    """Sends now or with the room's tick; counts the frames handed to connections."""

    def __init__(self, send_many: SendMany, tick_ms: int, soon: Soon | None = None) -> None:
        self.send_many = send_many
        self.tick_ms = tick_ms
        self._soon = soon
        self.frames = 0

    def send(self, audience: Audience, peers: list[Peer], msg: dict[str, Any] | bytes) -> None:
        """Send now. A peer with frames waiting for the tick gets them first, in one batch
        with this message (order is kept); the tick goes on for everyone else."""
        if not peers:  # encoding a frame for nobody is work for nothing
            return
        waiting = audience.waiting
        if waiting and any(peer in waiting for peer in peers):
            frame = msg if isinstance(msg, bytes) else p.encode_unchecked(msg)
            now = []
            for peer in peers:
                frames = waiting.pop(peer, None)
                if frames is None:
                    now.append(peer)
                else:
                    self.frames += 1
                    self.send_many([peer], batch_frame([*frames, frame]))
            peers, msg = now, frame
            if not peers:
                return
        self.frames += len(peers)
        self.send_many(peers, msg)

    def queue(self, audience: Audience, peers: list[Peer], frame: bytes) -> None:
        """Send with the room's tick, in one ``batch`` frame per connection."""
        if not peers:
            return
        if self.tick_ms <= 0:
            self.send(audience, peers, frame)
            return
        waiting = audience.waiting
        for peer in peers:
            frames = waiting.get(peer)
            if frames is None:
                waiting[peer] = [frame]
            else:
                frames.append(frame)
        if audience.tick is None:
            loop = asyncio.get_running_loop()
            if loop.time() < audience.tick_ends:  # within the tick: wait for its end
                audience.tick = loop.call_at(audience.tick_ends, self._tick, audience)
            else:  # a quiet room: at the end of this loop turn, and a tick opens
                soon = self._soon or loop.call_soon
                audience.tick = soon(self._tick, audience)

    def _tick(self, audience: Audience) -> None:
        audience.tick = None
        if not audience.waiting:
            return  # nothing waits (a ``send`` took it along): the tick stays as it was
        self.flush(audience)
        audience.tick_ends = asyncio.get_running_loop().time() + self.tick_ms / 1000

    def flush(self, audience: Audience) -> None:
        """Send a room's connections what waited for the tick: connections that wait for the
        same frames (the room's spectators, mostly) share one encoded batch."""
        waiting, audience.waiting = audience.waiting, {}
        groups: dict[tuple[int, ...], tuple[list[bytes], list[Peer]]] = {}
        for peer, frames in waiting.items():
            key = tuple(map(id, frames))  # the same frame objects: the same batch
            group = groups.get(key)
            if group is None:
                groups[key] = (frames, [peer])
            else:
                group[1].append(peer)
        for frames, peers in groups.values():
            self.frames += len(peers)
            self.send_many(peers, frames[0] if len(frames) == 1 else batch_frame(frames))

    def stop(self, audience: Audience) -> None:
        if audience.tick is not None:
            audience.tick.cancel()
            audience.tick = None
