"""The SQL of the embedded store: plain functions on a ``sqlite3.Connection``, each run on the
store's one database thread (server/store/sqlite_thread.py) inside its transaction.

Tables: ``streams`` (a name, its version, its expiry time), ``events`` (one row per version,
the msgpack envelope as stored by every backend), ``index_entries`` and ``queue_entries``.
A stream's version is kept beside its events and moved in the same transaction as the rows it
counts, so it cannot drift from them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from server.store.errors import DataDirError
from server.store.indexes import IndexEntry
from server.store.queues import QueueEntry
from server.store.streams import Row
from shared.errors import WrongExpectedVersion

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of the database this code writes; a newer one is refused."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS streams (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    deadline REAL
);
CREATE INDEX IF NOT EXISTS streams_by_deadline ON streams (deadline) WHERE deadline IS NOT NULL;
CREATE TABLE IF NOT EXISTS events (
    stream INTEGER NOT NULL,
    version INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (stream, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_entries (
    name TEXT NOT NULL,
    member TEXT NOT NULL,
    score INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (name, member)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS index_entries_by_score ON index_entries (name, score, member);
CREATE TABLE IF NOT EXISTS queue_entries (
    name TEXT NOT NULL,
    member TEXT NOT NULL,
    score INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (name, member)
) WITHOUT ROWID;
"""

SYNCHRONOUS = ("FULL", "NORMAL")


def connect(path: Path, synchronous: str) -> sqlite3.Connection:
    """Open (or create) the database in WAL mode; ``synchronous`` FULL or NORMAL (see
    SqliteEventStore). Autocommit at the driver: the thread writes its own BEGIN and COMMIT."""
    if synchronous not in SYNCHRONOUS:
        raise ValueError(f"synchronous is one of {SYNCHRONOUS}, not {synchronous!r}")
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        found = db.execute("PRAGMA user_version").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise DataDirError(
                f"{path} was written by a newer release (schema {found}; this one reads up "
                f"to {SCHEMA_VERSION})"
            )
        if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
            raise DataDirError(f"{path}: SQLite cannot keep a write-ahead log there")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
    except sqlite3.Error as error:
        db.close()
        raise DataDirError(f"cannot open {path}: {error}") from error
    except BaseException:
        db.close()
        raise
    return db


def _stream(db: sqlite3.Connection, name: str, now: float) -> tuple[int, int] | None:
    """The live stream's id and version, or None if it is absent or past its deadline."""
    row = db.execute(
        "SELECT id, version FROM streams WHERE name = ? AND (deadline IS NULL OR deadline > ?)",
        (name, now),
    ).fetchone()
    return None if row is None else (row[0], row[1])


def _drop(db: sqlite3.Connection, stream_id: int) -> None:
    db.execute("DELETE FROM events WHERE stream = ?", (stream_id,))
    db.execute("DELETE FROM streams WHERE id = ?", (stream_id,))


def append(
    db: sqlite3.Connection, stream: str, payloads: Sequence[bytes], expected: int, now: float
) -> tuple[int, bool]:
    """Compare and append: (the new version, True), or (the version, False) when these very
    payloads are there already after ``expected`` (a retried append); else WrongExpectedVersion.
    The caller's transaction makes the check and the writes one."""
    found = db.execute("SELECT id, version, deadline FROM streams WHERE name = ?", (stream,))
    row = found.fetchone()
    if row is not None and row[2] is not None and row[2] <= now:
        _drop(db, row[0])  # expired: gone, and its name may start again at version 1
        row = None
    current = 0 if row is None else row[1]
    end = expected + len(payloads)
    if current != expected:
        if row is not None and end <= current:
            stored = db.execute(
                "SELECT payload FROM events WHERE stream = ? AND version > ? AND version <= ?"
                " ORDER BY version",
                (row[0], expected, end),
            ).fetchall()
            if [bytes(p) for (p,) in stored] == list(payloads):
                return end, False
        raise WrongExpectedVersion(stream, expected, current)
    if row is None:
        stream_id = db.execute(
            "INSERT INTO streams (name, version) VALUES (?, ?)", (stream, end)
        ).lastrowid
    else:
        stream_id = row[0]
        db.execute("UPDATE streams SET version = ? WHERE id = ?", (end, stream_id))
    db.executemany(
        "INSERT INTO events (stream, version, payload) VALUES (?, ?, ?)",
        [(stream_id, expected + n, payload) for n, payload in enumerate(payloads, 1)],
    )
    return end, True


def read(
    db: sqlite3.Connection, stream: str, after: int, limit: int | None, now: float
) -> list[Row]:
    """The entries after version ``after`` as (id, envelope) rows, for ``decode_run``."""
    found = _stream(db, stream, now)
    if found is None:
        return []
    rows = db.execute(
        "SELECT version, payload FROM events WHERE stream = ? AND version > ?"
        " ORDER BY version LIMIT ?",
        (found[0], after, -1 if limit is None else limit),
    )
    return [(b"%d-0" % version, bytes(payload)) for version, payload in rows]


def read_many(db: sqlite3.Connection, streams: Sequence[str], now: float) -> dict[str, list[Row]]:
    return {stream: read(db, stream, 0, None, now) for stream in streams}


def last_versions(db: sqlite3.Connection, streams: Sequence[str], now: float) -> dict[str, int]:
    versions = {}
    for stream in streams:
        found = _stream(db, stream, now)
        versions[stream] = 0 if found is None else found[1]
    return versions


def names(db: sqlite3.Connection, prefix: str, now: float) -> list[str]:
    """Live streams starting with ``prefix``, sorted: a range scan of the name's index from
    ``prefix``, stopped at the first name past it (SQLite's BINARY order is code point order,
    as Python's)."""
    rows: Iterator[tuple[str, float | None]] = db.execute(
        "SELECT name, deadline FROM streams WHERE name >= ? ORDER BY name", (prefix,)
    )
    found = []
    for name, deadline in rows:
        if not name.startswith(prefix):
            break
        if deadline is None or deadline > now:
            found.append(name)
    return found


def expire(db: sqlite3.Connection, stream: str, seconds: float, now: float) -> None:
    found = _stream(db, stream, now)
    if found is None:
        return
    if seconds <= 0:
        _drop(db, found[0])
    else:
        db.execute("UPDATE streams SET deadline = ? WHERE id = ?", (now + seconds, found[0]))


def delete_at(db: sqlite3.Connection, versions: Mapping[str, int], now: float) -> bool:
    """Drop every stream of ``versions`` if each is at its version (0: absent), else none; the
    caller's transaction makes the check and the drops one."""
    found = {stream: _stream(db, stream, now) for stream in versions}
    if any((row[1] if row else 0) != versions[s] for s, row in found.items()):
        return False
    for row in found.values():
        if row is not None:
            _drop(db, row[0])
    return True


def purge(db: sqlite3.Connection, now: float, most: int = 100) -> int:
    """Delete up to ``most`` streams past their deadline (reads already skip them): the disk
    space of finished rooms comes back a few at a time, never holding a batch of moves long."""
    gone = db.execute(
        "SELECT id FROM streams WHERE deadline IS NOT NULL AND deadline <= ? LIMIT ?",
        (now, most),
    ).fetchall()
    for (stream_id,) in gone:
        _drop(db, stream_id)
    return len(gone)


def index_put(db: sqlite3.Connection, name: str, member: str, score: int, value: bytes) -> None:
    db.execute(
        "INSERT OR REPLACE INTO index_entries (name, member, score, value) VALUES (?, ?, ?, ?)",
        (name, member, score, value),
    )


def index_claim(
    db: sqlite3.Connection, name: str, member: str, score: int, value: bytes, expired_at: int
) -> bool:
    """``index_put`` unless the member is there with a score above ``expired_at``; the
    caller's transaction makes the check and the put one."""
    held = index_get(db, name, member)
    if held is not None and held.score > expired_at:
        return False
    index_put(db, name, member, score, value)
    return True


def index_remove(db: sqlite3.Connection, name: str, member: str) -> None:
    db.execute("DELETE FROM index_entries WHERE name = ? AND member = ?", (name, member))


def index_get(db: sqlite3.Connection, name: str, member: str) -> IndexEntry | None:
    row = db.execute(
        "SELECT score, value FROM index_entries WHERE name = ? AND member = ?", (name, member)
    ).fetchone()
    return None if row is None else IndexEntry(member, row[0], bytes(row[1]))


def index_range(db: sqlite3.Connection, name: str, max_score: int | None) -> list[IndexEntry]:
    if max_score is None:
        rows = db.execute(
            "SELECT member, score, value FROM index_entries WHERE name = ? ORDER BY score, member",
            (name,),
        )
    else:
        rows = db.execute(
            "SELECT member, score, value FROM index_entries WHERE name = ? AND score <= ?"
            " ORDER BY score, member",
            (name, max_score),
        )
    return [IndexEntry(member, score, bytes(value)) for member, score, value in rows]


def index_count(db: sqlite3.Connection, name: str) -> int:
    row = db.execute("SELECT count(*) FROM index_entries WHERE name = ?", (name,)).fetchone()
    return int(row[0])


def queue_join(db: sqlite3.Connection, name: str, member: str, score: int, value: bytes) -> bool:
    done = db.execute(
        "INSERT OR IGNORE INTO queue_entries (name, member, score, value) VALUES (?, ?, ?, ?)",
        (name, member, score, value),
    )
    return done.rowcount == 1


def queue_take(db: sqlite3.Connection, name: str, members: Sequence[str]) -> bool:
    """All of ``members`` or none (the caller's transaction makes the check and the delete
    one)."""
    marks = ", ".join("?" * len(members))
    row = db.execute(
        f"SELECT count(*) FROM queue_entries WHERE name = ? AND member IN ({marks})",
        (name, *members),
    ).fetchone()
    if row[0] != len(members):
        return False
    db.execute(
        f"DELETE FROM queue_entries WHERE name = ? AND member IN ({marks})", (name, *members)
    )
    return True


def queue_entries(db: sqlite3.Connection, name: str) -> list[QueueEntry]:
    rows = db.execute(
        "SELECT member, score, value FROM queue_entries WHERE name = ? ORDER BY score, member",
        (name,),
    )
    return [QueueEntry(member, score, bytes(value)) for member, score, value in rows]
