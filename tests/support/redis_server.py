"""A private redis-server process for tests: its own port, its own directory, never 6379."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.support.ports import free_port


class PortTaken(RuntimeError):
    """redis-server could not bind a port picked free a moment before: another socket (an
    outgoing connection's, in the ephemeral range the picked ports come from) took it."""


class RedisServer:
    """Starts, stops and kills a real redis-server; keeps its port and data dir across restarts."""

    def __init__(
        self,
        data_dir: Path,
        *,
        appendonly: bool = True,
        port: int | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.binary = binary
        self.data_dir = data_dir
        self.appendonly = appendonly
        self.port = port or free_port()
        self._repick = port is None  # a port of our own choosing may be chosen again
        self.extra_args = list(extra_args or [])
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        for _ in range(4):
            try:
                self._start(timeout)
                break
            except PortTaken:
                if not self._repick:
                    raise
                self.port = free_port()
        else:
            self._start(timeout)  # a fifth try, whose failure is raised
        self._repick = False  # restarts keep the port clients know

    def _start(self, timeout: float) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "always",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "redis.log"),
            *self.extra_args,
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = (self.data_dir / "redis.log").read_text(errors="replace")[-2000:]
                failure = PortTaken if "Address already in use" in log else RuntimeError
                raise failure(f"redis-server exited at start:\n{log}")
            if self._answers_ping():
                return
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"redis-server on port {self.port} did not answer within {timeout}s")

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): Redis flushes its append-only file first."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def kill(self) -> None:
        """SIGKILL: what a crash looks like."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
