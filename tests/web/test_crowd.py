"""A crowd at the door: the default room takes a crowd of spectators, and a page refused by a
limit says so plainly, with the number the server gave."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver

from server.runtime.config import Config, parse_config
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.web.conftest import FAST
from tests.web.test_play import wait_text


def test_a_room_takes_a_crowd_of_spectators_by_default() -> None:
    assert Config().max_spectators_per_room == parse_config([]).max_spectators_per_room == 5000


@pytest.fixture
def tight(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    """A server whose rooms take one spectator per process."""
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[*FAST, "--max-spectators-per-room", "1", "--redis-prefix", "webcrowd:"],
    )
    server.start()
    yield server
    server.stop()


def test_a_page_refused_by_the_spectator_limit_says_so(
    session_browser: webdriver.Chrome, tight: ServerProcess
) -> None:
    page = session_browser
    base = f"http://127.0.0.1:{tight.port}"
    page.get(f"{base}/play?race=1&variant=swiss&capacity=2")
    wait_text(page, "#lead", "Share this link to race")
    code = page.current_url.rsplit("/", 1)[1]
    first = page.current_window_handle
    page.switch_to.new_window("tab")
    page.get(f"{base}/watch/{code}")
    wait_text(page, "table.ranking", "player")  # the one spectator the room takes
    page.switch_to.new_window("tab")
    page.get(f"{base}/watch/{code}")
    text = wait_text(page, "#main", "spectators")
    assert f"Room {code} has as many spectators as this server takes (1): try again" in text
    for handle in page.window_handles:
        if handle != first:
            page.switch_to.window(handle)
            page.close()
    page.switch_to.window(first)
