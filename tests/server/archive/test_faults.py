"""A backend that cannot serve says so with one error, ArchiveUnavailable, and never hangs."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.archive import SqliteArchive, open_archive
from server.archive.postgres import PostgresArchive
from shared.errors import ArchiveUnavailable
from tests.server.archive.test_contract import room
from tests.support.ports import free_port


async def test_an_unreachable_postgres_is_unavailable() -> None:
    archive = PostgresArchive(f"postgresql://postgres@127.0.0.1:{free_port()}/x", timeout_s=1)
    try:
        with pytest.raises(ArchiveUnavailable):
            await archive.put(room("r1"), now_ms=0)
        assert not await archive.ping()
    finally:
        await archive.aclose()


async def test_an_unusable_sqlite_file_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "archive.sqlite3").mkdir()  # a directory where the file should be
    archive = SqliteArchive(tmp_path / "archive.sqlite3")
    try:
        with pytest.raises(ArchiveUnavailable):
            await archive.get("r1")
        assert not await archive.ping()
    finally:
        await archive.aclose()


def test_the_url_picks_the_backend(tmp_path: Path) -> None:
    assert isinstance(open_archive("postgresql://u@h/db"), PostgresArchive)
    sqlite = open_archive(None, tmp_path)
    assert isinstance(sqlite, SqliteArchive)
    assert sqlite.path == tmp_path / "archive.sqlite3"
    with pytest.raises(ValueError, match="postgresql://"):
        open_archive("redis://h")
