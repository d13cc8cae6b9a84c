"""The archive's backends, each test on a fresh one: SQLite in a tmp dir, PostgreSQL in a
database of its own on the session's private server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.archive import Archive, SqliteArchive
from server.archive.postgres import PostgresArchive
from tests.support.postgres_server import PostgresServer


@pytest.fixture(params=["sqlite", "postgres"])
async def archive(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Archive]:
    made: Archive
    if request.param == "sqlite":
        made = SqliteArchive(tmp_path / "data" / "archive.sqlite3")
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        made = PostgresArchive(server.create_database())
    yield made
    await made.aclose()
