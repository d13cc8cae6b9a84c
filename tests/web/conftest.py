"""A real headless Chromium from Debian's packages, driven by Selenium through Debian's
chromedriver: nothing is downloaded, and the tests do not skip (scripts/test installs both)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.chrome.service import Service

from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FAST = ["--rate", "1000", "--burst", "1000"]


def chromium(width: int = 1280, height: int = 900) -> webdriver.Chrome:
    """A fresh browser with its own profile; certificate errors accepted for the TLS test's
    self-signed certificate."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="viewer-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    options.accept_insecure_certs = True
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    driver.profile_dir = profile  # type: ignore[attr-defined]
    return driver


def quit_browser(driver: webdriver.Chrome) -> None:
    driver.quit()
    shutil.rmtree(driver.profile_dir, ignore_errors=True)  # type: ignore[attr-defined]


@pytest.fixture
def browser(session_browser: webdriver.Chrome) -> Iterator[webdriver.Chrome]:
    """The worker's Chromium as a fresh one would be: one blank tab at the usual size, its
    console read; after the test, what its page's origin stored is cleared (each test's server
    has a port, so an origin, of its own). Starting a Chromium a test costs a second or more."""
    driver = session_browser
    fresh_tab(driver)
    yield driver
    with contextlib.suppress(WebDriverException):
        dismiss_dialog(driver)
        origin = driver.execute_script("return location.origin")
        if isinstance(origin, str) and origin.startswith("http"):
            driver.execute_cdp_cmd(
                "Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"}
            )
        driver.get("about:blank")


def dismiss_dialog(driver: webdriver.Chrome) -> None:
    """A confirm() a test left open would block every later command."""
    with contextlib.suppress(NoAlertPresentException):
        driver.switch_to.alert.dismiss()


def fresh_tab(driver: webdriver.Chrome) -> None:
    """``driver`` down to one blank tab of the usual size, its console read."""
    dismiss_dialog(driver)
    first, *others = driver.window_handles
    for handle in others:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(first)
    driver.get("about:blank")
    driver.set_window_size(1280, 900)
    driver.get_log("browser")


@pytest.fixture
def arena(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    """A real server process on the session's real Redis."""
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[
            *FAST,
            "--abandon-grace-s",
            "2",
            "--redis-prefix",
            f"web{tmp_path.name[-12:]}:",
        ],
    )
    server.start()
    yield server
    server.stop()


def severe_console_messages(driver: webdriver.Chrome) -> list[str]:
    """The page's errors (a failed script, a refused socket, a CSP violation)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


@pytest.fixture(scope="session")
def session_browser() -> Iterator[webdriver.Chrome]:
    """One Chromium for the tests that play in the page: each starts from a blank tab of the
    same origin with nothing kept (see ``page``)."""
    driver = chromium()
    yield driver
    quit_browser(driver)


@pytest.fixture(scope="session")
def play_arena(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One real server process for the tests that play in the page, on the session's Redis."""
    folder = tmp_path_factory.mktemp("play")
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=folder / "server.log",
        extra_args=[*FAST, "--abandon-grace-s", "30", "--redis-prefix", "webplay:"],
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def page(session_browser: webdriver.Chrome, play_arena: ServerProcess) -> webdriver.Chrome:
    """The session's browser on the arena's origin with its storage cleared and one tab."""
    return blank_tab(session_browser, play_arena)


def blank_tab(driver: webdriver.Chrome, server: ServerProcess) -> webdriver.Chrome:
    """``driver`` on ``server``'s origin, its storage cleared, its console read."""
    driver.set_window_size(1280, 900)
    driver.get(f"http://127.0.0.1:{server.port}/static/LICENSE")
    driver.execute_script("sessionStorage.clear(); localStorage.clear();")
    driver.get_log("browser")  # what earlier tests left
    return driver
