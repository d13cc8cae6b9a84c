"""The embedded store's data directory, owned by one process at a time.

The owner holds an exclusive ``flock`` on ``DIR/lock`` for as long as its store is open. The
kernel drops the lock when the process ends, however it ends, so a directory whose server was
killed with SIGKILL is free again at once; no stale pid file to remove by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from server.store.errors import DataDirError, DataDirInUse

LOCK_FILE = "lock"
DATABASE_FILE = "events.sqlite3"


class DataDir:
    """A data directory this process holds the lock of; ``release`` (or exit) lets it go."""

    def __init__(self, path: Path, lock_fd: int) -> None:
        self.path = path
        self._lock_fd: int | None = lock_fd

    @property
    def database(self) -> Path:
        """The SQLite database of the events, indexes and queues."""
        return self.path / DATABASE_FILE

    @classmethod
    def take(cls, path: str | os.PathLike[str]) -> DataDir:
        """Make the directory if need be (readable by its owner only) and lock it; raises
        DataDirInUse if another process holds it, DataDirError if it cannot be made."""
        where = Path(path).expanduser().absolute()
        try:
            where.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(where / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as error:
            raise DataDirError(
                f"cannot use the data directory {where}: {error.strerror}"
            ) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            by = f" (pid {holder})" if holder else ""
            raise DataDirInUse(
                f"the data directory {where} is in use by another server{by}: stop it, or give "
                "this one another --data-dir"
            ) from None
        except OSError as error:
            os.close(fd)
            raise DataDirError(
                f"cannot lock the data directory {where}: {error.strerror}"
            ) from error
        # The holder's pid, for the message a second server prints (only a hint: the lock is
        # the flock, which the kernel releases, not this number).
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(where, fd)

    def release(self) -> None:
        """Let the directory go; idempotent."""
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _read_pid(fd: int) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(os.pread(fd, 32, 0).split()[0])
    return None
