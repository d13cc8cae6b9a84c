"""What the client sent and the server has not answered yet, matched to the answers.

Requests wait by ``ref`` (and by the answer's type, for an answer that came back without its
ref), moves by their id (sent again, same id, after a reconnect: docs/protocol.md, "Moves"),
pings by ref (for the server's clock). Pure bookkeeping: the connection sends and awaits.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

from shared.errors import ArenaError

Answer = asyncio.Future[dict[str, Any]]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class InFlight:
    """Unanswered requests, moves and pings of one logical session (across reconnects)."""

    def __init__(self, clock_ms: Callable[[], int] = _now_ms) -> None:
        self._clock_ms = clock_ms
        self._refs = itertools.count(1)
        # Unique across runs too: a seat taken back by a new process must not reuse an id the
        # server already answered (a reused id is `id_reused`). Microseconds stay below 2**53.
        self._move_ids = itertools.count(time.time_ns() // 1000)
        self._requests: dict[int, Answer] = {}
        self._moves: dict[int | str, tuple[dict[str, Any], Answer]] = {}
        self._pings: dict[int, int] = {}
        self._expecting: dict[str, list[int]] = {}

    def ping(self) -> dict[str, Any]:
        """A `ping` whose `pong` will tell the server's clock."""
        ref = next(self._refs)
        self._pings[ref] = self._clock_ms()
        return {"type": "ping", "ref": ref}

    def request(self, expect: str | None) -> tuple[int, Answer]:
        """A fresh ref and the future its answer resolves (``expect``: the answer's type)."""
        ref = next(self._refs)
        future: Answer = asyncio.get_running_loop().create_future()
        self._requests[ref] = future
        if expect is not None:
            self._expecting.setdefault(expect, []).append(ref)
        return ref, future

    def request_done(self, ref: int, expect: str | None) -> None:
        """Forget a request (answered, timed out or cancelled)."""
        self._requests.pop(ref, None)
        if expect is not None and ref in self._expecting.get(expect, []):
            self._expecting[expect].remove(ref)

    def move_id(self) -> int:
        return next(self._move_ids)

    def move(self, msg: dict[str, Any]) -> Answer:
        """The future a move's `ack` or `reject` resolves; until then it is sent again after
        each reconnect."""
        future: Answer = asyncio.get_running_loop().create_future()
        self._moves[msg["id"]] = (msg, future)
        return future

    def unanswered_moves(self) -> list[dict[str, Any]]:
        return [message for message, _ in self._moves.values()]

    def clock_offset(self, msg: dict[str, Any]) -> int | None:
        """For the `pong` of one of our pings: the server's clock minus ours (None otherwise)."""
        if msg["type"] != "pong" or msg.get("ref") not in self._pings:
            return None
        sent = self._pings.pop(msg["ref"])
        now = self._clock_ms()
        return int(msg["at"] - (sent + now) // 2)

    def answer(self, msg: dict[str, Any]) -> None:
        """Resolve what ``msg`` answers, if anything: a move, or a request."""
        kind = msg["type"]
        if kind in ("ack", "reject"):
            pending = self._moves.pop(msg["id"], None)
            if pending is not None and not pending[1].done():
                pending[1].set_result(msg)
            return
        ref = msg.get("ref")
        if ref is None and kind != "error" and self._expecting.get(kind):
            # An answer that came back without its ref: the oldest request expecting it.
            ref = self._expecting[kind].pop(0)
        if isinstance(ref, int) and ref in self._requests:
            future = self._requests.pop(ref)
            if not future.done():
                future.set_result(msg)

    def fail_requests(self, error: ArenaError) -> None:
        for future in self._requests.values():
            if not future.done():
                future.set_exception(error)
        self._requests.clear()

    def fail_moves(self, error: ArenaError) -> None:
        for _, future in self._moves.values():
            if not future.done():
                future.set_exception(error)
        self._moves.clear()
