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
from tests.web.test_play import board_at, text_of, wait_text
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
    assert wait_text(page, "#home-challenges", "Log in") == (
        "Log in to see the challenges waiting for you."
    )
    account_form(page, "register", name="webcy", password="cy's first secret")
    wait_text(page, "#account-status", "Logged in as webcy.")
    # Logged in on this page: what waits for this account is asked for at once.
    WebDriverWait(page, 10).until(lambda d: text_of(d, "#home-challenges") == "none")
    account_form(page, "change", password="cy's first secret", new_password="cy's next secret")
    wait_text(page, "#account-status", "Password changed; 0 other logins ended.")
    account_form(page, "logout")
    wait_text(page, "#account-status", "Logged out.")
    wait_text(page, "#home-challenges", "Log in to see the challenges waiting for you.")
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


PHONE = """
const tiles = [...document.querySelectorAll('a.tile')].map((a) => {
  const r = a.getBoundingClientRect();
  const card = a.querySelector('svg.drawn-card').getBoundingClientRect();
  return {act: a.dataset.act, top: Math.round(r.top), left: r.left, right: r.right,
          height: r.height, card: [card.width, card.height]};
});
return {overflow: document.documentElement.scrollWidth - window.innerWidth,
        width: window.innerWidth, tiles};
"""
TOP_CARD = """
const b = document.querySelector('.col:nth-of-type(1) button.spot.card:last-child');
const r = b.getBoundingClientRect(), pip = b.querySelector('.pip');
return {label: b.getAttribute('aria-label'), index: b.querySelector('.index').textContent,
        ratio: r.height / r.width, pip: parseFloat(getComputedStyle(pip).fontSize),
        shown: getComputedStyle(pip).display,
        overflow: document.documentElement.scrollWidth - window.innerWidth};
"""


def test_at_phone_width_the_pairings_and_the_cards_fit_and_read(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    metrics = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
    page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        page.get(f"http://127.0.0.1:{play_arena.port}/")
        seen = page.execute_script(PHONE)
        assert seen["width"] == 390
        assert seen["overflow"] == 0  # nothing to scroll sideways
        tiles = seen["tiles"]
        assert len(tiles) == 8
        assert tiles[0]["act"] == "quick-swiss-2"
        assert tiles[0]["top"] == tiles[1]["top"]  # two a row
        for tile in tiles:
            assert tile["height"] >= 44, tile  # a finger's target
            assert 0 <= tile["left"] < tile["right"] <= 390, tile
            width, height = tile["card"]
            assert width >= 24, tile
            assert 1.3 < height / width < 1.5, tile  # a playing card's shape
        page.find_element(By.CSS_SELECTOR, "a.tile[data-act='bot-quadrennial']").click()
        wait_text(page, "#race .time-left", " left")
        page.get(f"http://127.0.0.1:{play_arena.port}/play?variant=swiss&seed=19")
        board_at(page, 1)
        card = page.execute_script(TOP_CARD)
        assert card["overflow"] == 0
        assert card["label"].endswith(", top of t1")  # its name, as before
        assert card["label"].split(" of ")[0] in ("ace", "two", "three", "four", "five", "six",
            "seven", "eight", "nine", "ten", "jack", "queen", "king")  # fmt: skip
        assert 1.3 < card["ratio"] < 1.5  # whole, as a card
        assert card["shown"] == "flex"
        assert card["pip"] >= 16  # its suit large
        assert len(card["index"]) in (2, 3)  # rank and suit in the corner: "7♠", "10♥"
        code = a_tournament(play_arena, "phoneracer")  # and a tournament's standings
        page.get(f"http://127.0.0.1:{play_arena.port}/tournament/{code}")
        wait_text(page, "table.standings tbody", "phoneracer")
        width = "return document.documentElement.scrollWidth - window.innerWidth"
        assert page.execute_script(width) == 0
    finally:
        page.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
