"""Fixtures of the in-process server tests: a memory store, a clock moved by hand, and an
archive (SQLite) in the test's directory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.archive import SqliteArchive
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


@pytest.fixture
async def archive(tmp_path: Path) -> AsyncIterator[SqliteArchive]:
    made = SqliteArchive(tmp_path / "archive.sqlite3")
    yield made
    await made.aclose()
