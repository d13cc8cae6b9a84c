"""A server forked by the zygote behaves as ``python -m server`` does to the tests that use it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.zygote import ForkedProcess, Zygote

pytestmark = pytest.mark.e2e


@pytest.fixture
def zygote() -> Iterator[Zygote]:
    zygote = Zygote()
    yield zygote
    zygote.close()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
            return bool(json.loads(answer.read())["status"] == "ok")
    except OSError:
        return False


def _start(zygote: Zygote, tmp_path: Path) -> tuple[int, ForkedProcess, Path]:
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    env = {**os.environ, "ARENA_DATA_DIR": str(tmp_path), "ARENA_ANALYSIS_MAX_NODES": "0"}
    argv = ["--host", "127.0.0.1", "--port", str(port), "--store", "memory"]
    process = zygote.spawn([*argv, "--log-format", "json"], env, log)
    for _ in range(300):
        if _healthy(port):
            break
        assert process.poll() is None, log.read_text()
        time.sleep(0.05)
    return port, process, log


def test_a_forked_server_serves_logs_to_its_file_and_stops_gracefully(
    zygote: Zygote, tmp_path: Path
) -> None:
    port, process, log = _start(zygote, tmp_path)
    assert _healthy(port)
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert {"shutting_down"} <= {line.get("event") for line in lines}
    assert not _healthy(port)


def test_a_killed_server_reports_the_signal_and_is_never_signalled_again(
    zygote: Zygote, tmp_path: Path
) -> None:
    _, process, _ = _start(zygote, tmp_path)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)
    process.kill()
    assert process.wait(timeout=10) == -signal.SIGKILL
    process.terminate()  # after the end: nothing is sent, no error
    assert process.poll() == -signal.SIGKILL


def test_the_zygote_refuses_a_pid_that_is_not_its_child(zygote: Zygote) -> None:
    with pytest.raises(RuntimeError, match="not a child"):
        zygote.request(op="signal", pid=os.getpid(), sig=int(signal.SIGTERM))


def test_servers_still_running_when_the_zygote_ends_are_killed(
    zygote: Zygote, tmp_path: Path
) -> None:
    port, _, _ = _start(zygote, tmp_path)
    zygote.close()
    for _ in range(100):
        if not _healthy(port):
            break
        time.sleep(0.05)
    assert not _healthy(port)
