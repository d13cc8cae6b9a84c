"""What every benchmark shares: machine and version facts, percentiles, tables, JSON results,
a private redis-server, process sampling and the open-files limit.

Benchmarks are programs, not tests: nothing here asserts a time.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import msgpack

RESULTS = Path(__file__).resolve().parent / "results"
PACKAGES = ("websockets", "redis", "hiredis", "msgpack", "structlog", "psutil")


def machine() -> dict[str, Any]:
    """The facts a figure depends on: cores, platform, Python."""
    return {
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
    }


def versions(redis_url: str | None = None) -> dict[str, str]:
    """Installed versions of the packages on the measured path (and redis-server, if given)."""
    found: dict[str, str] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    if redis_url is not None:
        found["redis-server"] = redis_server_version(redis_url)
    return found


def redis_server_version(url: str) -> str:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return str(client.info("server")["redis_version"])
    finally:
        client.close()


def percentile(sorted_ns: Sequence[int], q: float) -> float:
    """The q-quantile (nearest rank) of sorted nanoseconds, in milliseconds; 0.0 when empty."""
    if not sorted_ns:
        return 0.0
    return sorted_ns[round(q * (len(sorted_ns) - 1))] / 1e6


def quantiles_ms(values_ns: Sequence[int]) -> dict[str, float]:
    """p50/p95/p99/max of nanosecond samples, in milliseconds rounded to microseconds."""
    ordered = sorted(values_ns)
    return {
        "n": len(ordered),
        "p50_ms": round(percentile(ordered, 0.50), 3),
        "p95_ms": round(percentile(ordered, 0.95), 3),
        "p99_ms": round(percentile(ordered, 0.99), 3),
        "max_ms": round(ordered[-1] / 1e6, 3) if ordered else 0.0,
    }


def table(rows: Sequence[tuple[str, str]], title: str = "") -> str:
    """A two-column table (what, figure) for a benchmark's summary."""
    width = max((len(k) for k, _ in rows), default=0)
    lines = [title, "-" * len(title)] if title else []
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    return "\n".join(lines)


def results_dir() -> Path:
    """bench/results, or $BENCH_RESULTS_DIR (the smoke test must not overwrite real figures)."""
    return Path(os.environ.get("BENCH_RESULTS_DIR") or RESULTS)


def write_json(name: str, report: dict[str, Any]) -> Path:
    """<results dir>/<name>, indented, with a trailing newline; returns the path."""
    directory = results_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(report, indent=2) + "\n")
    return path


def raise_nofile() -> tuple[int, int]:
    """Raise the soft open-files limit to the hard limit; the (soft, hard) now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.02)
    return False


class PrivateRedis:
    """A throwaway redis-server on a free port, AOF on with the fsync policy under test."""

    def __init__(self, fsync: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bench-redis-"))
        self.port = free_port()
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--save", "", "--appendonly", "yes", "--appendfsync", fsync,
                "--maxclients", "20000", "--logfile", str(self.dir / "redis.log")]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise SystemExit("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class ProcessSampler:
    """Samples one process's CPU time and RSS from a thread, so the event loop is not involved.

    ``mark()`` starts the measured window; ``cpu_percent`` is CPU seconds over wall seconds
    since the mark (100 = one core busy), ``peak_rss`` the largest RSS seen (and the kernel's
    high-water mark, VmHWM, when readable)."""

    pid: int
    interval: float = 0.2
    peak_rss: int = 0
    samples: list[tuple[float, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        import psutil

        self.process = psutil.Process(self.pid)
        self._stop = threading.Event()
        self._cpu0 = self._cpu()
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _cpu(self) -> float:
        """CPU seconds of the process and its children (a server's --workers)."""
        total = 0.0
        try:
            processes = [self.process, *self.process.children(recursive=True)]
        except Exception:
            return 0.0
        for process in processes:
            try:
                times = process.cpu_times()
            except Exception:
                continue
            total += float(times.user + times.system)
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                rss = int(self.process.memory_info().rss)
                for child in self.process.children(recursive=True):
                    rss += int(child.memory_info().rss)
            except Exception:
                return
            self.peak_rss = max(self.peak_rss, rss)
            self.samples.append((time.monotonic(), rss))
            self._stop.wait(self.interval)

    def mark(self) -> None:
        self._cpu0 = self._cpu()
        self._t0 = time.monotonic()

    def window(self) -> dict[str, float]:
        """CPU use since the mark, and memory now; call before stopping the process."""
        cpu = self._cpu() - self._cpu0
        wall = time.monotonic() - self._t0
        try:
            rss = int(self.process.memory_info().rss)
        except Exception:
            rss = 0
        self.peak_rss = max(self.peak_rss, rss)
        return {
            "cpu_seconds": round(cpu, 3),
            "wall_seconds": round(wall, 3),
            "cpu_percent": round(100 * cpu / wall, 1) if wall > 0 else 0.0,
            "rss_mib": round(rss / 2**20, 1),
            "peak_rss_mib": round(max(self.peak_rss, self.hwm()) / 2**20, 1),
        }

    def hwm(self) -> int:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


def decoded(frame: bytes | str) -> Any:
    """One frame's message: msgpack in a binary frame, as the protocol has it both ways.
    Benchmarks trust the other side: no per-field checks (shared.protocol.decode_frame's)."""
    if not isinstance(frame, bytes):
        raise TypeError(f"the protocol's frames are binary, not {type(frame).__name__}")
    return msgpack.unpackb(frame, raw=False)


def unpack(frame: bytes | str) -> list[dict[str, Any]]:
    """The messages of one server frame (a ``batch`` holds several)."""
    msg = decoded(frame)
    return msg["messages"] if msg["type"] == "batch" else [msg]


class Inbox:
    """A connection's messages one at a time: a frame may be a ``batch`` of several (a
    tick's updates, and what the server sent on its own after them), and every client of
    protocol 1 must read them in order as if each had come alone (docs/protocol.md)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self._messages: collections.deque[dict[str, Any]] = collections.deque()

    async def next(self) -> dict[str, Any]:
        while not self._messages:
            self._messages.extend(unpack(await self.ws.recv()))
        return self._messages.popleft()
