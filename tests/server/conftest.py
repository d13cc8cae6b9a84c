"""Fixtures of the in-process server tests: a memory store and a clock moved by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.runtime.clock import FakeClock
from server.store import MemoryEventStore


@pytest.fixture
async def store() -> AsyncIterator[MemoryEventStore]:
    s = MemoryEventStore()
    yield s
    await s.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
