"""Time as a dependency: the server reads the clock only through a Clock passed in."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Protocol


class Clock(Protocol):
    """Wall-clock milliseconds since the Unix epoch, and a way to wait until one."""

    def now_ms(self) -> int: ...

    async def sleep_until(self, at_ms: int) -> None: ...


class SystemClock:
    """The real clock."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep_until(self, at_ms: int) -> None:
        # asyncio.sleep can wake a hair early against the wall clock: sleep again for the rest.
        for _ in range(100):
            left = at_ms - self.now_ms()
            if left <= 0:
                return
            await asyncio.sleep(left / 1000)


class OffsetClock(SystemClock):
    """The real clock moved by ``offset_ms``: for tests of a server process that must reach
    a given time (the end of a UTC day), set by ``ARENA_TEST_CLOCK_OFFSET_MS`` (server/__main__.py);
    never an option an operator sees."""

    def __init__(self, offset_ms: int) -> None:
        self.offset_ms = offset_ms

    def now_ms(self) -> int:
        return super().now_ms() + self.offset_ms


def clock_from_env(env: Mapping[str, str]) -> SystemClock:
    """The server's clock: the real one, unless a test moved it (``ARENA_TEST_CLOCK_OFFSET_MS``)."""
    offset = env.get("ARENA_TEST_CLOCK_OFFSET_MS")
    return OffsetClock(int(offset)) if offset else SystemClock()


class FakeClock:
    """A clock tests move by hand; sleepers wake when ``advance`` passes their time."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms
        self._changed = asyncio.Event()

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> None:
        self._now += ms
        self._changed.set()
        self._changed = asyncio.Event()

    async def sleep_until(self, at_ms: int) -> None:
        while self._now < at_ms:
            await self._changed.wait()
