"""The archive: finished rooms, kept for good once they leave the live store.

A finished room's record (its room stream's events, each game stream's events, its summary) is
written once under its room id and read back by every reader of a finished room. Two backends:
SQLite in the data directory (the default) and PostgreSQL (``--archive-url``); see
docs/storage.md, "Tiers".
"""

from __future__ import annotations

from server.archive.base import Archive
from server.archive.opening import default_data_dir, open_archive
from server.archive.record import ArchivedRoom
from server.archive.sqlite import SqliteArchive

__all__ = ["Archive", "ArchivedRoom", "SqliteArchive", "default_data_dir", "open_archive"]
