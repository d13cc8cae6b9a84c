"""A race in the page against the terminal client: a browser racer and a `solitaire` racer in a
real pseudo-terminal, on one real server process; both see the same results and rating changes,
a reload keeps the browser's seat, and a racer's name is only ever text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.client.pty_driver import finish, spawn, type_line, words
from tests.support.server_process import ServerProcess
from tests.web.conftest import severe_console_messages
from tests.web.test_play import board_at, text_of, wait_text

SIZE = {"columns": 100, "rows": 30}
RESULTS = """
return [...document.querySelectorAll('#race table.ranking tbody tr')].map((r) =>
  [...r.cells].map((c) => c.textContent));
"""
RATINGS = """
return [...document.querySelectorAll('#ratings tbody tr')].map((r) =>
  [...r.cells].map((c) => c.textContent));
"""


@pytest.fixture
def terminals() -> Iterator[list[pexpect.spawn]]:
    """The terminal racers a test starts, closed whatever happens."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        child.close(force=True)


def terminal(
    arena: ServerProcess, home: Path, name: str, children: list[pexpect.spawn], *args: str
) -> pexpect.spawn:
    home.mkdir(exist_ok=True)
    env = {"XDG_STATE_HOME": str(home), "SOLITAIRE_NAME": name}
    child = spawn(*args, "--server", arena.url, "--no-color", env_extra=env, **SIZE)
    children.append(child)
    return child


def type_move(page: webdriver.Chrome, text: str) -> None:
    page.find_element(By.CSS_SELECTOR, "input[aria-label='Move']").send_keys(text, Keys.ENTER)


def create_race(page: webdriver.Chrome, arena: ServerProcess, *, countdown: int = 1) -> str:
    """The home page's 'Create a race' form, for two; the lobby's room code."""
    page.get(f"http://127.0.0.1:{arena.port}/")
    page.find_element(By.CSS_SELECTOR, "#more > summary").click()  # the full forms
    form = page.find_element(By.ID, "create")
    seats = form.find_element(By.NAME, "capacity")
    seats.clear()
    seats.send_keys("2")
    wait = form.find_element(By.NAME, "countdown")
    wait.clear()
    wait.send_keys(str(countdown))
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    WebDriverWait(page, 15).until(lambda d: re.search(r"/play/[a-z0-9]+$", d.current_url))
    wait_text(page, "#lead", "Share this link to race")
    return page.current_url.rsplit("/", 1)[1]


def test_a_browser_racer_and_a_terminal_racer_race_to_the_same_results(
    page: webdriver.Chrome, play_arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    # The browser registers on the home page; the terminal racer from a script.
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    register = page.find_element(By.ID, "register")
    register.find_element(By.NAME, "name").send_keys("webann")
    register.find_element(By.NAME, "password").send_keys("ann's long secret", Keys.ENTER)
    wait_text(page, "#account-status", "Logged in as webann.")
    assert "secret" not in page.current_url
    bob_home = tmp_path / "bob"
    child = terminal(play_arena, bob_home, "termbob", terminals, "register", "termbob",
                     "--password-stdin")  # fmt: skip
    type_line(child, "bob's long secret")
    child.expect("Registered and logged in as termbob.")
    assert finish(child) == 0

    code = create_race(page, play_arena, countdown=2)
    bob = terminal(play_arena, bob_home, "termbob", terminals, "race", "join", code)
    bob.expect("waiting for the race to start")
    wait_text(page, "#race table.ranking", "termbob")
    type_move(page, "start")
    assert re.fullmatch(r"starts in 0:0[12]", wait_text(page, "#race .time-left", "starts in"))
    bob.expect("Go! The race has started")
    assert board_at(page, 1) == 1
    assert re.fullmatch(r"(20:00|19:5\d) left", wait_text(page, "#race .time-left", " left"))
    type_move(page, "d")
    type_move(page, "deal")
    assert board_at(page, 3) == 3
    # The panel as the terminal's: place, foundation, moves, connection; never a rival's cards.
    wait_text(page, "#race table.ranking", "webann (you)")
    rows = page.execute_script(RESULTS)
    assert [r[1] for r in rows] == ["webann (you)", "termbob"]
    assert rows[1][3:] == ["0/52", "0", "connected"]
    type_line(bob, "d")
    WebDriverWait(page, 15).until(lambda d: d.execute_script(RESULTS)[1][4] == "1")
    assert page.find_elements(By.CSS_SELECTOR, "#race section.board") == []
    assert len(page.find_elements(By.CSS_SELECTOR, ".playboard")) == 1  # the page's own only

    type_move(page, "resign")
    wait_text(page, "#said", "Type 'y' to resign")
    type_move(page, "y")
    # Her game done, the other racer's board, as a spectator sees it, while he races on.
    board = '#race section.board[aria-label="termbob\'s board"]'
    WebDriverWait(page, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, board))
    assert page.execute_script(RESULTS)[1][2] == "playing"
    type_line(bob, "resign")
    type_line(bob, "y")
    wait_text(page, "#race table.ranking caption", "Results")
    assert [r[:2] for r in page.execute_script(RESULTS)] == [
        ["1", "webann (you)"],
        ["2", "termbob"],
    ]
    bob.expect("Race over: every game is done")
    bob.expect(words("Results: 1. webann (0), 2. termbob (0)"))
    bob.expect(words("Ratings: webann 1500 →") + r"\s+(\d+) \(\+(\d+)\)")
    gain = int(bob.match.group(2))
    bob.expect(r"termbob 1500 → (\d+) \(-(\d+)\)")
    loss = int(bob.match.group(2))
    WebDriverWait(page, 15).until(lambda d: len(d.execute_script(RATINGS)) == 2)
    assert page.execute_script(RATINGS) == [
        ["1", "webann", "1500", str(1500 + gain), f"+{gain}"],
        ["2", "termbob", "1500", str(1500 - loss), f"-{loss}"],
    ]
    # A rematch from the page: the terminal is told where it is.
    type_move(page, "rematch")
    WebDriverWait(page, 15).until(lambda d: not d.current_url.endswith(code))
    rematch = page.current_url.rsplit("/", 1)[1]
    bob.expect(words(f"A rematch is on in room {rematch}"))
    assert severe_console_messages(page) == []
    type_line(bob, "quit")
    assert finish(bob) == 0


def test_a_reload_mid_race_keeps_the_seat_and_every_acked_move(
    page: webdriver.Chrome, play_arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    code = create_race(page, play_arena, countdown=0)
    bob = terminal(play_arena, tmp_path / "bob", "bob", terminals, "race", "join", code)
    bob.expect("waiting for the race to start")
    wait_text(page, "#race table.ranking", "bob")
    type_move(page, "start")
    assert board_at(page, 1) == 1
    for text in ("d", "d", "d"):
        type_move(page, text)
    assert board_at(page, 4) == 4
    cards = page.execute_script("return document.querySelector('.playboard').innerText")
    token = page.execute_script("return JSON.parse(sessionStorage.getItem('arena.seat')).token")
    page.refresh()
    assert board_at(page, 4) == 4
    assert page.current_url.endswith(f"/play/{code}")
    assert token not in page.current_url
    assert page.execute_script("return document.querySelector('.playboard').innerText") == cards
    wait_text(page, "#said", "Back in your seat.")
    # A lost network: the page reconnects, resumes, and the game goes on.
    page.execute_script("window.arenaPage.arena.drop()")
    wait_text(page, "#said", "Reconnected: back in your seat.")
    type_move(page, "d")
    assert board_at(page, 5) == 5
    mine = ["player (you)", "playing", "0/52", "4", "connected"]  # its progress comes apart
    WebDriverWait(page, 15).until(lambda d: d.execute_script(RESULTS)[0][1:] == mine)
    # The seat taken back from another tab (its storage copied): this one lets it go.
    seat = page.execute_script("return sessionStorage.getItem('arena.seat')")
    first = page.current_window_handle
    page.switch_to.new_window("tab")
    page.get(f"http://127.0.0.1:{play_arena.port}/static/LICENSE")
    page.execute_script("sessionStorage.setItem('arena.seat', arguments[0])", seat)
    page.get(f"http://127.0.0.1:{play_arena.port}/play/{code}")
    assert board_at(page, 5) == 5
    wait_text(page, "#said", "Back in your seat.")
    page.close()
    page.switch_to.window(first)
    wait_text(page, "#refused", "Disconnected: your seat was taken back on another tab or device")
    type_line(bob, "quit")
    type_line(bob, "y")


def test_a_racer_named_like_html_is_only_text(
    page: webdriver.Chrome, play_arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    name = "<img src=x onerror=alert(1)>"
    page.get(f"http://127.0.0.1:{play_arena.port}/")
    page.execute_script("localStorage.setItem('arena.name', arguments[0])", name)
    code = create_race(page, play_arena, countdown=0)
    bob = terminal(play_arena, tmp_path / "img", name, terminals, "race", "join", code)
    bob.expect("waiting for the race to start")
    shown = name[:12]  # cut to 20 columns by the server, with a suffix when it is taken
    WebDriverWait(page, 15).until(
        lambda d: len([r for r in d.execute_script(RESULTS) if r[1].startswith(shown)]) == 2
    )
    type_move(page, "start")
    assert board_at(page, 1) == 1
    # Someone else with the link, once the race is on: a spectator.
    first = page.current_window_handle
    page.switch_to.new_window("tab")
    page.get(f"http://127.0.0.1:{play_arena.port}/play/{code}")
    wait_text(page, "#lead", "The race has started: you are watching it.")
    WebDriverWait(page, 15).until(lambda d: len(d.execute_script(RESULTS)) == 2)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
    page.close()
    page.switch_to.window(first)
    type_line(bob, "resign")
    type_line(bob, "y")
    type_move(page, "resign")
    type_move(page, "y")
    wait_text(page, "#race table.ranking caption", "Results")
    WebDriverWait(page, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#race section.board"))
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
    assert shown in text_of(page, "#race")
    with pytest.raises(NoAlertPresentException):
        page.switch_to.alert.text  # noqa: B018
    type_line(bob, "quit")
