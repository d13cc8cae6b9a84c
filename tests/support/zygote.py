"""Server processes forked from one that has already imported the server.

A ``python -m server`` spends most of its start importing some two hundred modules, and the
suite starts hundreds of servers. A zygote imports them once per pytest worker and forks a
child for each server; the child is a real process that runs ``server.__main__.main`` with its
own arguments, environment and log, exactly as the command would after its imports.

The zygote is single-threaded and has no event loop, so forking it is safe. It reaps its
children itself, so a signal it forwards never reaches a reused pid. Requests and answers are
JSON lines over its stdin and stdout.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any


class ForkedProcess:
    """The part of ``subprocess.Popen`` the tests use, for a child of the zygote."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self._zygote = zygote
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.request(op="wait", pid=self.pid, timeout=0)["code"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            answer = self._zygote.request(op="wait", pid=self.pid, timeout=timeout)
            if answer["code"] is None:
                raise subprocess.TimeoutExpired(f"server pid {self.pid}", timeout or 0.0)
            self.returncode = answer["code"]
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self._zygote.request(op="signal", pid=self.pid, sig=int(sig))

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """One per pytest worker, started on first use; it ends when the worker closes its stdin."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def spawn(
        self, argv: Sequence[str], env: Mapping[str, str], log_path: Path | None
    ) -> ForkedProcess:
        answer = self.request(
            op="spawn",
            argv=list(argv),
            env=dict(env),
            log=str(log_path) if log_path else None,
            cwd=os.getcwd(),
        )
        return ForkedProcess(self, answer["pid"])

    def request(self, **fields: Any) -> dict[str, Any]:
        with self._lock:
            process = self._started()
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(json.dumps(fields).encode() + b"\n")
            process.stdin.flush()
            line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the server zygote ended (exit code {process.poll()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the server zygote refused {fields['op']}: {answer['error']}")
        return answer

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.zygote"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                cwd=Path(__file__).resolve().parents[2],
            )
        return self._process

    def close(self) -> None:
        if self._process is not None:
            with contextlib.suppress(OSError):
                assert self._process.stdin is not None
                self._process.stdin.close()
            self._process.wait(timeout=10)
            self._process = None


# The zygote's side.


def _serve(requests: IO[bytes], answers: IO[bytes]) -> dict[str, Any] | None:
    """Answer requests until stdin closes (``None``), or return the spawn request a child runs."""
    codes: dict[int, int] = {}
    live: set[int] = set()

    def reap(pid: int, flags: int) -> None:
        done, status = os.waitpid(pid, flags)
        if done:
            live.discard(done)
            codes[done] = os.waitstatus_to_exitcode(status)

    def answer(**fields: Any) -> None:
        answers.write(json.dumps(fields).encode() + b"\n")
        answers.flush()

    for line in requests:
        request = json.loads(line)
        pid = request.get("pid", 0)
        if request["op"] == "spawn":
            child = os.fork()
            if child == 0:
                return dict(request)
            live.add(child)
            answer(pid=child)
        elif pid not in live and pid not in codes:
            answer(error=f"pid {pid} is not a child of the zygote")
        elif request["op"] == "signal":
            if pid in live:  # not yet reaped, so the pid is still this child's
                os.kill(pid, request["sig"])
            answer(ok=True)
        elif request["op"] == "wait":
            if pid in live:
                _wait_for(pid, request["timeout"])
                reap(pid, os.WNOHANG)
            answer(code=codes.get(pid))
    for pid in live:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return None


def _wait_for(pid: int, timeout: float | None) -> None:
    """Until the child ``pid`` exits, or ``timeout`` seconds (forever if ``None``)."""
    if timeout == 0:
        return
    fd = os.pidfd_open(pid)
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def _run_child(request: dict[str, Any]) -> int:
    """In the forked child: become ``python -m server ARGV`` with the request's environment,
    working directory and log."""
    import server.__main__ as entry

    log = os.open(request["log"] or os.devnull, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(devnull)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["server", *request["argv"]]
    sys.modules["__main__"] = entry  # what a spawned helper process re-imports, as with -m
    return entry.main(request["argv"])


def main() -> None:
    import server.__main__  # noqa: F401  (the imports every child would otherwise repeat)

    # Objects from the imports are never collected in a child, so its pages stay shared.
    gc.freeze()
    request = _serve(sys.stdin.buffer, sys.stdout.buffer)
    if request is None:
        return
    sys.exit(_run_child(request))


if __name__ == "__main__":
    main()
