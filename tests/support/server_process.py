"""A real solitaire-server process for end-to-end tests, started on a free port."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

from tests.support.ports import free_port
from tests.support.zygote import ForkedProcess, Zygote

_zygote: Zygote | None = None


def _forking_zygote() -> Zygote | None:
    """Inside pytest, servers are forked from a zygote that imported the server once (a third
    of a CPU-second saved a start); TEST_SERVER_EXEC=1 runs each as ``python -m server``. A
    benchmark always runs the command: its start, memory and collector are what it measures."""
    global _zygote
    if "pytest" not in sys.modules or os.environ.get("TEST_SERVER_EXEC") == "1":
        return None
    if _zygote is None:
        _zygote = Zygote()
        atexit.register(_zygote.close)
    return _zygote


class ServerProcess:
    """Runs ``python -m server``; keeps its port (and ``data_dir``, the SQLite store's, if
    given; else the in-memory store) across restarts so clients can reconnect."""

    def __init__(
        self,
        *,
        redis_url: str | None = None,
        port: int | None = None,
        extra_args: list[str] | None = None,
        log_path: Path | None = None,
        data_dir: Path | None = None,
    ) -> None:
        self.port = port or free_port()
        self.redis_url = redis_url
        self.data_dir = data_dir
        self.extra_args = list(extra_args or [])
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | ForkedProcess | None = None
        self._launched = 0.0
        # The server's other files (with Redis, the archive of finished rooms) go to a directory
        # of the test's, never the user's, unless the test names one; kept across restarts.
        self._scratch = tempfile.mkdtemp(prefix="arena-data-")
        weakref.finalize(self, shutil.rmtree, self._scratch, ignore_errors=True)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        args = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(self.port)]
        if self.redis_url:
            args += ["--redis-url", self.redis_url]
        elif self.data_dir is not None:
            args += ["--data-dir", str(self.data_dir)]
        elif not {"--store", "--data-dir"} & set(self.extra_args):
            # A test's server forgets everything unless it asks for a data directory: tests
            # share no store and write nothing outside their temporary directories.
            args += ["--store", "memory"]
        return [*args, "--log-format", "json", *self.extra_args]

    def start(self, timeout: float = 15.0) -> None:
        self.launch()
        self.wait_healthy(timeout)

    def launch(self) -> None:
        """Start the process without waiting for it: several start side by side (``start_all``)."""
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env.setdefault("ARENA_DATA_DIR", str(self.data_dir or self._scratch))
        # A test's server analyses no game unless it asks (--analysis-max-nodes): an analysis
        # process in every server would take the CPU the suite's other tests run on.
        env.setdefault("ARENA_ANALYSIS_MAX_NODES", "0")
        zygote = _forking_zygote()
        if zygote is not None:
            self.process = zygote.spawn(self.command()[3:], env, self.log_path)
        else:
            out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
            self.process = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, env=env
            )
        self._launched = time.monotonic()

    def wait_healthy(self, timeout: float = 15.0) -> None:
        """Until /healthz answers, ``timeout`` seconds after the launch at most."""
        assert self.process is not None, "launch() first"
        deadline = self._launched + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"solitaire-server exited with {self.process.returncode}{self._log_tail()}"
                )
            if self._healthy():
                return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(
            f"solitaire-server on port {self.port} not healthy within {timeout}s{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        """The end of the server's log, so a failed start says why."""
        if self.log_path is None or not self.log_path.exists():
            return " (no log: pass log_path)"
        tail = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return ":\n" + "\n".join(tail)

    def _healthy(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return sock.recv(64).startswith(b"HTTP/1.1 200")
        except OSError:
            return False

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM and wait: the graceful shutdown path."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        return code

    def kill(self) -> None:
        """SIGKILL: a crash, with no chance to flush anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


def start_all(servers: list[ServerProcess], timeout: float = 15.0) -> None:
    """Start several servers at once (each imports and warms up on its own), then wait for all."""
    for server in servers:
        server.launch()
    for server in servers:
        server.wait_healthy(timeout)
