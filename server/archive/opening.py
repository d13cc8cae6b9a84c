"""Which archive a server opens: PostgreSQL for ``--archive-url``, else SQLite in the data
directory."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from server.archive.base import Archive


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/solitaire-arena``, i.e. ``~/.local/share/solitaire-arena``."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "solitaire-arena"


def open_archive(url: str | None, data_dir: Path | None = None) -> Archive:
    """PostgreSQL for a ``postgresql://`` URL, else SQLite's ``archive.sqlite3`` in the data
    directory (the default one when None)."""
    if url:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"--archive-url is a postgresql:// URL, not {url!r}")
        from server.archive.postgres import PostgresArchive  # psycopg loads only when used

        return PostgresArchive(url)
    from server.archive.sqlite import SqliteArchive

    directory = data_dir if data_dir is not None else default_data_dir()
    return SqliteArchive(directory / "archive.sqlite3")
