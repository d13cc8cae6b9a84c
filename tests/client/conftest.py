"""Every client test keeps its seat files (resume tokens) in a state directory of its own; a
pty test that needs a server gets a real one on the session's Redis (a module may bring its own
``server`` instead)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$XDG_STATE_HOME for this test: clients it starts inherit it (never the user's own)."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    """A real server process on the session's Redis, under a key prefix of its own."""
    process = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=["--redis-prefix", f"t{uuid.uuid4().hex[:8]}:"],
    )
    process.start()
    yield process
    process.stop()
