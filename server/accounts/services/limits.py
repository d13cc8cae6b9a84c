"""Attempt limits shared by every server process: a counter is a stream, its version the count.

Each attempt appends one event to the stream of its (kind, key, window) at the version read, so
two processes counting at once cannot both take the same count (a conflict reads again). The
stream expires with its window. Fixed windows: at most twice the limit can pass across one
window's edge, which the documented numbers allow for.
"""

from __future__ import annotations

import hashlib

from server.kernel.errors import RateLimited
from server.runtime.clock import Clock
from server.store import EventStore
from shared.errors import WrongExpectedVersion


class AttemptLimiter:
    """``limit`` attempts per key per ``window_s`` seconds, on all processes together."""

    def __init__(self, store: EventStore, clock: Clock, kind: str, limit: int, window_s: float):
        self.store = store
        self.clock = clock
        self.kind = kind
        self.limit = limit
        self.window_ms = max(1, int(window_s * 1000))

    def stream(self, key: str, now: int) -> str:
        # Hashed: an address or a name, whatever its characters, is one short key of one slot.
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]
        return f"{{limit:{self.kind}:{digest}:{now // self.window_ms}}}:attempts"

    async def attempt(self, key: str) -> None:
        """Count one attempt; rate_limited (counted all the same) once over the limit."""
        now = self.clock.now_ms()
        stream = self.stream(key, now)
        for _ in range(20):
            last = await self.store.last_version(stream)
            if last >= self.limit:
                break  # already over: no need to count further
            try:
                count = await self.store.append(stream, [{"at": now}], expected_version=last)
            except WrongExpectedVersion:
                continue
            if count == 1:
                await self.store.expire(stream, (self.window_ms * 2) / 1000)
            return
        raise RateLimited(f"too many attempts: try again in {self.window_ms // 1000} s or so")
