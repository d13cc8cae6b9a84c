"""A private PostgreSQL for tests: Debian's binaries, its own directory and port, never 5432.

PostgreSQL refuses to run as root, so as root ``initdb`` and ``postgres`` run as the
``postgres`` user (``runuser``), in a directory that user owns; the socket is in that directory
too, and the server listens on 127.0.0.1 only. Each test gets a database of its own
(``create_database``), so one server serves a whole test session.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

from tests.support.ports import free_port

USER = "postgres"


def postgres_bin() -> Path | None:
    """The directory of Debian's PostgreSQL binaries (the newest installed), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _as_postgres() -> list[str]:
    """The command prefix that runs a program as the postgres user (nothing if we are it)."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", USER, "--"]


class PostgresServer:
    """Starts and stops a real PostgreSQL in ``data_dir``; trust authentication, loopback only."""

    def __init__(self, data_dir: Path, *, port: int | None = None) -> None:
        bindir = postgres_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = bindir
        self.data_dir = data_dir
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def _own(self) -> None:
        """The directory belongs to the postgres user (the test's tmp dir is root's)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            entry = pwd.getpwnam(USER)
            os.chown(self.data_dir, entry.pw_uid, entry.pw_gid)
            # Every parent must be traversable by the postgres user.
            for parent in self.data_dir.parents:
                mode = parent.stat().st_mode
                if not mode & 0o001:
                    parent.chmod(mode | 0o001)

    def start(self, timeout: float = 30.0) -> None:
        self._own()
        if not (self.pgdata / "PG_VERSION").exists():
            done = subprocess.run(
                [*_as_postgres(), str(self.bin / "initdb"), "-D", str(self.pgdata),
                 "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"],
                check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip
            if done.returncode != 0:  # say why: initdb's own words
                raise RuntimeError(f"initdb failed ({done.returncode}):\n{done.stdout.decode()}")
        log = self.data_dir / "postgres.log"
        args = [
            *_as_postgres(), str(self.bin / "postgres"), "-D", str(self.pgdata),
            "-p", str(self.port), "-k", str(self.data_dir),
            "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
            "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            "-c", "max_connections=200", "-c", "shared_buffers=32MB",
        ]  # fmt: skip
        with open(log, "ab") as out:
            self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited at start:\n{log.read_text()[-2000:]}")
            if self._ready():
                return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"postgres on port {self.port} did not start within {timeout}s")

    def _ready(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
        except OSError:
            return False
        done = subprocess.run(
            [str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        return done.returncode == 0

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(
            [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER,
             "-d", database, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        return done.stdout

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; its URL."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def tool(self, name: str) -> str:
        """The path of one of the server's client programs (pg_dump, pg_restore, psql)."""
        path = self.bin / name
        return str(path) if path.exists() else (shutil.which(name) or name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: a smart shutdown
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None
