"""The ways in on the home page: accounts (the terminal's), a quick race against a terminal
racer and the daily challenge, from a real Chromium on a real server process."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.client.pty_driver import finish, type_line
from tests.support.server_process import ServerProcess
from tests.web.test_first_view import NAME, a_tournament
from tests.web.test_play import board_at, wait_text
from tests.web.test_race import terminal, terminals, type_move

__all__ = ["terminals"]  # the fixture, shared


def account_form(page: webdriver.Chrome, form_id: str, **fields: str) -> None:
    form = page.find_element(By.ID, form_id)
    for name, value in fields.items():
        form.find_element(By.NAME, name).send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()


def test_accounts_then_a_quick_race_against_the_terminal(
    page: webdriver.Chrome,
    play_arena: ServerProcess,
    tmp_path: Path,
    terminals: list[pexpect.spawn],
) -> None:
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    account_form(page, "register", name="webcy", password="cy's first secret")
    wait_text(page, "#account-status", "Logged in as webcy.")
    account_form(page, "change", password="cy's first secret", new_password="cy's next secret")
    wait_text(page, "#account-status", "Password changed; 0 other logins ended.")
    account_form(page, "logout")
    wait_text(page, "#account-status", "Logged out.")
    assert page.execute_script("return localStorage.getItem('arena.key')") is None
    account_form(page, "login", name="webcy", password="cy's first secret")
    wait_text(page, "#account-status", "Wrong name or password.")
    account_form(page, "login", name="WEBCY", password="cy's next secret")
    wait_text(page, "#account-status", "Logged in as webcy.")
    key = page.execute_script("return localStorage.getItem('arena.key')")
    assert key
    assert key not in page.current_url

    home = tmp_path / "dee"
    child = terminal(play_arena, home, "termdee", terminals, "register", "termdee",
                     "--password-stdin")  # fmt: skip
    type_line(child, "dee's long secret")
    child.expect("Registered and logged in as termdee.")
    assert finish(child) == 0
    page.find_element(By.CSS_SELECTOR, "a.tile[data-act='quick-swiss-2']").click()  # one click
    wait_text(page, "#lead", "Searching for a Swiss race of 2")
    dee = terminal(play_arena, home, "termdee", terminals, "race", "quick")
    dee.expect("Go! The race has started", timeout=30)
    assert board_at(page, 1) == 1
    assert "/play/" in page.current_url
    wait_text(page, "#race table.ranking", "termdee")
    type_move(page, "resign")
    type_move(page, "y")
    type_line(dee, "quit")
    type_line(dee, "y")
    wait_text(page, "#race table.ranking caption", "Results")


def test_the_daily_challenge_from_the_home_page(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    page.find_element(By.CSS_SELECTOR, "a.tile[data-act='daily-swiss']").click()
    wait_text(page, "#refused", "The daily challenge is for accounts: log in")  # not a guest
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    account_form(page, "register", name="webdaily", password="a daily secret")
    wait_text(page, "#account-status", "Logged in as webdaily.")
    page.find_element(By.CSS_SELECTOR, "a.tile[data-act='daily-quadrennial']").click()
    assert board_at(page, 1) == 1
    wait_text(page, "#lead", "daily challenge")
    type_move(page, "d")
    assert board_at(page, 2) == 2
    page.refresh()
    assert board_at(page, 2) == 2
    type_move(page, "d")
    assert board_at(page, 3) == 3
    page.find_element(By.CSS_SELECTOR, "input[aria-label='Move']").send_keys("rematch", Keys.ENTER)
    WebDriverWait(page, 10).until(lambda d: "rematch" in d.find_element(By.ID, "refused").text)


CHECKBOXES = """
return [...document.querySelectorAll('label.check')].map((label) => {
  const box = label.querySelector('input[type=checkbox]').getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(label);
  range.setStartAfter(label.querySelector('input'));
  const words = range.getBoundingClientRect();
  return [label.textContent.trim(), box.top + box.height / 2 - (words.top + words.height / 2),
          words.left - box.right];
});
"""


def test_each_checkbox_has_its_words_beside_it(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    page.find_element(By.CSS_SELECTOR, "#more > summary").click()
    WebDriverWait(page, 10).until(lambda d: d.execute_script(CHECKBOXES))
    boxes = page.execute_script(CHECKBOXES)
    assert [words for words, _, _ in boxes] == ["a winnable deal only", "rated"]
    for words, below, gap in boxes:
        assert abs(below) < 4, words  # on the words' line, not above or below it
        assert 0 < gap < 20, words  # just before them


def test_the_home_page_counts_down_to_the_live_tournaments(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    code = a_tournament(play_arena, "homecounter")
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    row = f"#home-tournaments li[data-tournament='{code}']"
    first = wait_text(page, row, " left")
    assert re.fullmatch(rf"{re.escape(NAME)} Quadrennial · 1 player · \d+:\d\d left", first)
    WebDriverWait(page, 5).until(lambda d: d.find_element(By.CSS_SELECTOR, row).text != first)
    page.find_element(By.CSS_SELECTOR, f"{row} a").click()
    assert wait_text(page, "#tournament-title", "Cup") == NAME
