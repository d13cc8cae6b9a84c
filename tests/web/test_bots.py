"""Bots in Chromium: a race created on the home page with a bot, played to its results; a bot
added from the lobby's button; a quick race that finds nobody and gives a bot; a bot's
profile page. Bots here think fast (a server option), so a race takes seconds."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.server_process import ServerProcess
from tests.web.conftest import FAST, blank_tab, severe_console_messages
from tests.web.test_play import text_of, wait_text
from tests.web.test_race import RESULTS, type_move

pytestmark = pytest.mark.e2e

BOT_ROWS = "return [...document.querySelectorAll('#race table.ranking tr[data-bot]')].length;"


@pytest.fixture(scope="module")
def bot_arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("bots")
    server = ServerProcess(
        log_path=folder / "server.log",
        extra_args=[
            *FAST,
            "--bot-floor-ms",
            "30",
            "--bot-think-scale",
            "0.02",
            "--quick-bot-after-s",
            "1",
        ],
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def bot_page(session_browser: webdriver.Chrome, bot_arena: ServerProcess) -> webdriver.Chrome:
    return blank_tab(session_browser, bot_arena)


def fill(form: object, name: str, value: str) -> None:
    field = form.find_element(By.NAME, name)  # type: ignore[attr-defined]
    if field.tag_name == "select":
        field.find_element(By.CSS_SELECTOR, f"option[value='{value}']").click()
    else:
        field.clear()
        field.send_keys(value)


def resign_and_wait_for_results(page: webdriver.Chrome) -> list[list[str]]:
    type_move(page, "resign")
    wait_text(page, "#said", "Type 'y' to resign")
    type_move(page, "y")
    wait_text(page, "#race", "Results", wait_s=90)
    return list(page.execute_script(RESULTS))


def test_a_race_against_a_bot_created_on_the_home_page(
    bot_page: webdriver.Chrome, bot_arena: ServerProcess
) -> None:
    page = bot_page
    page.get(f"http://127.0.0.1:{bot_arena.port}/")
    page.find_element(By.CSS_SELECTOR, "#more > summary").click()  # the full forms, one click on
    form = page.find_element(By.ID, "create")
    fill(form, "capacity", "2")
    fill(form, "countdown", "0")
    fill(form, "bots", "1")
    fill(form, "bot_level", "2")
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    WebDriverWait(page, 15).until(lambda d: re.search(r"/play/[a-z0-9]+$", d.current_url))
    wait_text(page, "#race table.ranking", "(bot 2)")
    assert page.execute_script(BOT_ROWS) == 1
    type_move(page, "start")
    wait_text(page, "#race .time-left", " left")
    rows = resign_and_wait_for_results(page)
    names = [r[1] for r in rows]
    assert any("(bot 2)" in n for n in names)
    assert any("(you)" in n for n in names)
    assert page.execute_script(BOT_ROWS) == 1
    # No rating changes: a race with a bot is unrated.
    assert page.find_elements(By.CSS_SELECTOR, "#ratings tbody tr") == []
    assert severe_console_messages(page) == []


def test_the_home_page_reaches_a_race_against_a_bot_in_one_click(
    bot_page: webdriver.Chrome, bot_arena: ServerProcess
) -> None:
    page = bot_page
    page.get(f"http://127.0.0.1:{bot_arena.port}/")
    tile = page.find_element(By.CSS_SELECTOR, "a.tile[data-act='bot-swiss']")
    assert tile.accessible_name == "Race a bot Swiss · unrated"  # the card is decoration
    tile.click()  # the one click: no form, no "start"
    WebDriverWait(page, 15).until(lambda d: re.search(r"/play/[a-z0-9]+$", d.current_url))
    wait_text(page, "#race table.ranking", "(bot 2)")
    wait_text(page, "#race .time-left", " left", wait_s=20)
    assert page.execute_script("return window.arenaPage.room.status") == "racing"
    rows = resign_and_wait_for_results(page)
    assert any("(bot 2)" in r[1] for r in rows)
    assert severe_console_messages(page) == []


def test_by_keyboard_the_first_pairing_is_one_tab_and_enter_from_the_name(
    bot_page: webdriver.Chrome, bot_arena: ServerProcess
) -> None:
    page = bot_page
    page.get(f"http://127.0.0.1:{bot_arena.port}/")
    name = page.find_element(By.CSS_SELECTOR, ".lead input[name='name']")
    name.clear()
    name.send_keys("keys", Keys.TAB)
    focused = page.switch_to.active_element
    assert focused.get_attribute("data-act") == "quick-swiss-2"
    assert focused.accessible_name == "Swiss quick race · 2 racers"  # its name, read out
    focused.send_keys(Keys.ENTER)
    WebDriverWait(page, 15).until(lambda d: "/play" in d.current_url)
    # Nobody else queues: a bot within a second, and the race is on.
    WebDriverWait(page, 30).until(lambda d: d.execute_script(BOT_ROWS) == 1)
    wait_text(page, "#race .time-left", " left", wait_s=30)
    assert "keys (you)" in text_of(page, "#race table.ranking")
    resign_and_wait_for_results(page)


def test_the_lobbys_creator_adds_a_bot_with_the_button(
    bot_page: webdriver.Chrome, bot_arena: ServerProcess
) -> None:
    page = bot_page
    page.get(f"http://127.0.0.1:{bot_arena.port}/play?race=1&variant=swiss&capacity=3")
    WebDriverWait(page, 15).until(lambda d: re.search(r"/play/[a-z0-9]+$", d.current_url))
    button = WebDriverWait(page, 15).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "button[data-act='bot']")
    )
    button.click()
    wait_text(page, "#race table.ranking", "(bot 3)")
    type_move(page, "bot 5")
    wait_text(page, "#race table.ranking", "(bot 5)")
    type_move(page, "bot")  # a third would leave no seat for a person
    wait_text(page, "#refused", "at most 2 bot")
    assert page.execute_script(BOT_ROWS) == 2


@pytest.mark.long
def test_a_quick_race_with_nobody_else_gives_a_bot(
    bot_page: webdriver.Chrome, bot_arena: ServerProcess
) -> None:
    page = bot_page
    page.get(f"http://127.0.0.1:{bot_arena.port}/play?quick=quadrennial&players=2")
    WebDriverWait(page, 30).until(lambda d: d.execute_script(BOT_ROWS) == 1)
    assert page.execute_script("return window.arenaPage.matchedBots") == 1  # told so
    wait_text(page, "#race .time-left", " left", wait_s=30)
    rows = resign_and_wait_for_results(page)
    assert any("(bot 3)" in r[1] for r in rows)  # a guest races level 3


def test_a_bots_profile_says_it_is_a_bot(
    bot_page: webdriver.Chrome, bot_arena: ServerProcess, tmp_path: Path
) -> None:
    page = bot_page
    page.get(f"http://127.0.0.1:{bot_arena.port}/@/Ada%20(bot%204)")
    wait_text(page, "main", "is a bot of level 4 of 5")
    assert "unrated" in text_of(page, "main")
