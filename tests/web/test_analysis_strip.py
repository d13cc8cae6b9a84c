"""The replay page's analysis strip in Debian's headless Chromium: a game lost from a won deal
shows a verdict per position (the deal, then after each move), the move that lost it marked and
named, and "Show the winning line" from a won position gives a line that wins there; all of it
from the keyboard."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from shared import apply_move, new_game
from tests.server.daily.test_daily_e2e import ask, connect
from tests.support.server_process import ServerProcess
from tests.web.conftest import FAST, severe_console_messages

pytestmark = pytest.mark.e2e

SEED = 47
PLAYED = ["r4f", "r4f", "r7f"]  # the third move loses a won deal (tests/client/test_analysis_pty)


@pytest.fixture
def analysing(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        log_path=tmp_path / "server.log",
        extra_args=[*FAST, "--analysis-max-nodes", "swiss=4000,quadrennial=40000"],
    )
    server.start()
    yield server
    server.stop()


async def solo_game(url: str) -> str:
    client = await connect(url, "ann")
    try:
        made = await ask(
            client,
            {"type": "create_room", "variant": "quadrennial", "seed": SEED, "capacity": 1,
             "countdown_ms": 0},
            "room",
        )  # fmt: skip
        room = str(made["room"]["id"])
        await ask(client, {"type": "join", "room": room}, "joined")
        await client.send({"type": "start"})
        await client.expect("started")
        for move in PLAYED:
            await client.move(move)
        await client.send({"type": "resign"})
        await client.expect("finished")
        return room
    finally:
        await client.close()


STRIP = """
const buttons = [...document.querySelectorAll('.analysis-strip button')];
const board = document.querySelector('section.board.replay');
return {
  verdicts: buttons.map((b) => b.dataset.verdict),
  losing: buttons.map((b) => b.classList.contains('losing')),
  labels: buttons.map((b) => b.getAttribute('aria-label')),
  current: buttons.findIndex((b) => b.getAttribute('aria-current') === 'step'),
  summary: document.querySelector('.analysis-summary')?.textContent,
  line: document.querySelector('.analysis-line')?.textContent,
  showDisabled: document.querySelector('.show-line')?.disabled,
  pos: board ? Number(board.dataset.pos) : null,
};
"""


def strip(browser: webdriver.Chrome) -> dict[str, Any]:
    shown: dict[str, Any] = browser.execute_script(STRIP)
    return shown


def tab_to(browser: webdriver.Chrome, wanted: Callable[[WebElement], bool]) -> WebElement:
    """Tab from the focused element until ``wanted`` has the focus, as a keyboard user would."""
    for _ in range(40):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        focused = browser.switch_to.active_element
        if wanted(focused):
            return focused
    raise AssertionError("Tab never got there")


def test_the_strip_marks_the_losing_move_and_shows_the_line(
    analysing: ServerProcess, browser: webdriver.Chrome
) -> None:
    room = asyncio.run(solo_game(analysing.url))
    web = analysing.url.replace("ws://", "http://")
    browser.get(f"{web}/replay/{room}/ann")
    wait = WebDriverWait(browser, 60, poll_frequency=0.1)
    wait.until(lambda b: len(strip(b)["verdicts"]) == len(PLAYED) + 1)
    shown = strip(browser)
    assert shown["verdicts"] == ["won", "won", "won", "lost"]
    assert shown["losing"] == [False, False, False, True]
    assert shown["labels"][3] == "move 3, r7f: lost, lost a won game"
    assert shown["summary"] == "Analysis: this deal could be won; move 3: r7f lost a won game."
    assert shown["current"] == 0  # the replay opens at the deal

    # From the keyboard: Tab to the strip's position after two moves, Enter goes there.
    browser.find_element(By.TAG_NAME, "h1").click()
    focused = tab_to(browser, lambda el: el.get_attribute("data-position") == "2")
    focused.send_keys(Keys.ENTER)
    wait.until(lambda b: strip(b)["current"] == 2)
    assert strip(browser)["pos"] == 3  # the deal's event, then two moves
    assert strip(browser)["showDisabled"] is False
    tab_to(browser, lambda el: "show-line" in (el.get_attribute("class") or ""))
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait.until(lambda b: (strip(b)["line"] or "").startswith("A winning line from here: "))
    line = strip(browser)["line"].removeprefix("A winning line from here: ").split()
    state = new_game("quadrennial", seed=SEED)
    for move in [*PLAYED[:2], *line]:
        state = apply_move(state, move)
    assert state.won
    # The arrow keys step the replay; the strip follows, and a lost position has no line.
    browser.find_element(By.TAG_NAME, "h1").click()
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    wait.until(lambda b: strip(b)["current"] == 3)
    assert strip(browser)["showDisabled"] is True
    assert severe_console_messages(browser) == []
