"""A tournament in the page, against a `solitaire tournament join` racer in a real
pseudo-terminal, on one real server process: the browser joins, its race opens by itself and is
played in the page, the standings update with both sheets, the page comes back to them, a
withdrawal, the podium at the end, the tournament on the lists and on the profile; the
tournament's name is only ever text."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.client.pty_driver import finish, type_line, words
from tests.client.tournament.test_pty import place_in_a_gone_room
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.web.conftest import FAST, severe_console_messages
from tests.web.test_play import board_at, wait_text
from tests.web.test_race import terminal

pytestmark = pytest.mark.e2e

NAME = "Web <b>Cup</b>"
STANDINGS = """
return [...document.querySelectorAll('table.standings tbody tr[data-account]')].map((r) =>
  [r.dataset.account, r.querySelector('.score').textContent,
   [...r.querySelectorAll('.sheet .result')].map((s) => s.textContent).join(''),
   r.querySelector('.state').textContent]);
"""
RATINGS = """
return Object.fromEntries([...document.querySelectorAll('table.standings tbody tr[data-account]')]
  .map((r) => [r.dataset.account, Number(r.querySelector('.rating').textContent)]));
"""
TV_ROWS = """
return [...document.querySelectorAll('#tournament-tv:not([hidden]) table.ranking tbody tr')]
  .map((r) => [r.cells[1].textContent, r.cells[4].textContent]);
"""


def prefix_of(tmp_path: Path) -> str:
    """The arena's key prefix in its Redis."""
    return f"webt{tmp_path.name[-10:]}:"


@pytest.fixture
def arena(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[
            *FAST,
            "--redis-prefix",
            prefix_of(tmp_path),
            "--tournament-min-length-s",
            "10",
        ],
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def terminals() -> Iterator[list[pexpect.spawn]]:
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        child.close(force=True)


def type_move(page: webdriver.Chrome, text: str) -> None:
    page.find_element(By.CSS_SELECTOR, "#my-race input[aria-label='Move']").send_keys(
        text, Keys.ENTER
    )


def click(page: webdriver.Chrome, act: str) -> None:
    WebDriverWait(page, 20).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f"button[data-act='{act}']")
    )
    page.find_element(By.CSS_SELECTOR, f"button[data-act='{act}']").click()


def press(page: webdriver.Chrome, act: str, key: str = Keys.ENTER) -> None:
    """A toolbar button reached and pressed by keyboard."""
    WebDriverWait(page, 20).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f"button[data-act='{act}']")
    )
    button = page.find_element(By.CSS_SELECTOR, f"button[data-act='{act}']")
    page.execute_script("arguments[0].focus()", button)
    assert page.switch_to.active_element == button
    page.switch_to.active_element.send_keys(key)


def two_players(
    page: webdriver.Chrome,
    arena: ServerProcess,
    tmp_path: Path,
    terminals: list,
    web: tuple[str, str],
    term: tuple[str, str],
) -> Path:
    """An account registered on the home page and another from a terminal (each a name and
    whose secret it is); the terminal player's home."""
    page.get(f"http://127.0.0.1:{arena.port}/")
    register = page.find_element(By.ID, "register")
    register.find_element(By.NAME, "name").send_keys(web[0])
    register.find_element(By.NAME, "password").send_keys(f"{web[1]}'s long secret", Keys.ENTER)
    wait_text(page, "#account-status", f"Logged in as {web[0]}.")
    home = tmp_path / term[1]
    child = terminal(arena, home, term[0], terminals, "register", term[0], "--password-stdin")
    type_line(child, f"{term[1]}'s long secret")
    child.expect(f"Registered and logged in as {term[0]}.")
    assert finish(child) == 0
    return home


@pytest.mark.long
def test_join_play_a_race_see_the_standings_move_and_the_podium(
    browser: webdriver.Chrome, arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    page = browser
    base = f"http://127.0.0.1:{arena.port}"
    home = two_players(page, arena, tmp_path, terminals, ("webtia", "tia"), ("termtom", "tom"))
    # A short tournament (the server allows one for tests): races of 15 s, paired until the
    # last 15 s (the one race here is paired within seconds), then the races on are played out
    # and the podium is final. 45 s in all: on a loaded machine the race, the standings and the
    # withdrawal took up to 20 s, and the last stretch must not come before the withdrawal.
    child = terminal(arena, home, "termtom", terminals, "tournament", "create", NAME,
                     "--minutes", "0.75", "--race-time", "15")  # fmt: skip
    child.expect(r"Tournament (\w+): ")
    code = child.match.group(1)
    assert finish(child) == 0

    page.get(f"{base}/tournaments")
    live = f"#live tr[data-tournament='{code}']"
    WebDriverWait(page, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, live))
    link = page.find_element(By.CSS_SELECTOR, f"{live} a")
    assert link.text == NAME  # text, never markup
    link.click()
    assert wait_text(page, "#tournament-title", "Cup") == NAME
    assert page.find_elements(By.CSS_SELECTOR, "#tournament-title b") == []
    assert re.fullmatch(r"0:[0-4]\d left", wait_text(page, "#tournament-clock", "left"))
    press(page, "join")  # by keyboard: the button focused, then Enter
    wait_text(page, "#tournament-lead", "You are in")
    WebDriverWait(page, 20).until(
        lambda d: [r[0] for r in d.execute_script(STANDINGS)] == ["webtia"]
    )
    tom = terminal(arena, home, "termtom", terminals, "tournament", "join", code)
    tom.expect("Waiting to be paired")

    # The race opens by itself in the page; the page plays it.
    WebDriverWait(page, 30).until(lambda d: d.find_element(By.ID, "my-race").is_displayed())
    wait_text(page, "#race-note", "Race 1: against termtom")
    click(page, "berserk")  # before the start (the countdown waits for both racers, then 3 s)
    wait_text(page, "#race-note", "Berserk: your clock is halved")
    tom.expect(words("webtia went berserk: their clock is halved."), timeout=20)
    assert board_at(page, 1) == 1
    assert page.find_elements(By.CSS_SELECTOR, "button[data-act='berserk']") == []
    # Her own clock: half the race's 15 s.
    assert re.fullmatch(r"0:0[0-8] left", wait_text(page, "#my-race .time-left", " left"))
    tom.expect(words("Go! The race has started"), timeout=20)
    type_move(page, "d")
    assert board_at(page, 2) == 2
    type_move(page, "resign")
    wait_text(page, "#said", "Type 'y' to resign")
    type_move(page, "y")
    type_line(tom, "resign")
    tom.expect("Resign this game")
    type_line(tom, "y")

    # The standings update: both sheets hold the race; then the page comes back to them.
    def both_raced(d: webdriver.Chrome) -> bool:
        rows = d.execute_script(STANDINGS)
        return sorted(r[0] for r in rows) == ["termtom", "webtia"] and all(
            len(r[2]) == 1 for r in rows
        )

    WebDriverWait(page, 30).until(both_raced)
    sheets = {r[0]: r[2] for r in page.execute_script(STANDINGS)}
    assert sorted(sheets.values()) == ["0", "2"]  # a race of two: 2 points to its winner
    WebDriverWait(page, 20).until(lambda d: not d.find_element(By.ID, "my-race").is_displayed())
    assert page.find_element(By.ID, "my-sheet").text.startswith("Your sheet: ")
    # The ratings shown are the live ones: the rated race moved them apart from where they
    # joined (both new, the same).
    WebDriverWait(page, 20).until(lambda d: len(set(d.execute_script(RATINGS).values())) == 2)
    ratings = page.execute_script(RATINGS)
    assert ratings[max(sheets, key=lambda a: sheets[a])] > ratings[min(sheets, key=sheets.get)]

    # Both stop: the browser withdraws, the terminal pauses with Ctrl-C.
    press(page, "withdraw", Keys.SPACE)
    wait_text(page, "#tournament-lead", "Paused")
    tom.sendintr()
    tom.expect(words(f"Paused in tournament {code}"), timeout=20)
    assert finish(tom) == 130
    # Paused, unless the last stretch came first (the race took its 15 s): then done.
    WebDriverWait(page, 20).until(
        lambda d: {r[3] for r in d.execute_script(STANDINGS)} in ({"paused"}, {"done"})
    )

    # The last stretch is said: no race is paired any more, nobody waits, nothing to join.
    wait_text(page, "#tournament-clock", "left · no more races: the last stretch", 30)
    wait_text(page, "#tournament-lead", "No more races: the last stretch.")
    assert {r[3] for r in page.execute_script(STANDINGS)} == {"done"}
    assert page.find_elements(By.CSS_SELECTOR, "#main .controls button, #main .controls p") == []

    # The end: the podium, the standings final.
    WebDriverWait(page, 90).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#podium:not([hidden]) li.step")
    )
    steps = {
        li.get_attribute("data-account"): li.text
        for li in page.find_elements(By.CSS_SELECTOR, "#podium li")
    }
    top = next(name for name, sheet in sheets.items() if sheet == "2")
    other = next(name for name, sheet in sheets.items() if sheet == "0")
    assert steps[top] == f"1st {top} 2 points · 1 race · 1 first place"
    assert steps[other] == f"2nd {other} 0 points · 1 race · 0 first places"
    assert {r[3] for r in page.execute_script(STANDINGS)} == {"done"}  # nobody waits
    assert page.find_element(By.ID, "tournament-lead").text == (
        "The tournament is over: the standings are final."
    )
    assert "Log in" not in page.find_element(By.ID, "main").text
    # A sheet of 2 then 0 reads as two races, never as 20.
    cell = "return window.tournamentPage.sheetCell(arguments[0]).textContent"
    results = [{"points": p, "place": 2 - p // 2, "of": 2} for p in (2, 0)]
    assert page.execute_script(cell, results) == "2 0"
    # A race lost to the clock says so in the sheet, as the terminal's does.
    clocked = [{"points": 0, "place": 2, "of": 2, "timed_out": True}]
    assert page.execute_script(cell, clocked) == "0⏱"
    label = "return window.tournamentPage.sheetCell(arguments[0]).querySelector('span').title"
    assert page.execute_script(label, clocked) == "2 of 2, out of time"
    sheet = page.find_element(By.CSS_SELECTOR, f"tr[data-account='{top}'] td.sheet")
    assert sheet.text == "2"
    podium = [
        li.get_attribute("data-account") for li in page.find_elements(By.CSS_SELECTOR, "#podium li")
    ]
    winner = next(name for name, sheet in sheets.items() if sheet == "2")
    assert podium[0] == winner
    assert sorted(podium) == ["termtom", "webtia"]
    WebDriverWait(page, 20).until(
        lambda d: (
            d.find_element(By.CSS_SELECTOR, "table.standings").get_attribute("data-final") == "true"
        )
    )
    assert wait_text(page, "#tournament-clock", "finished") == "finished"

    page.get(f"{base}/tournaments")
    done = f"#finished tr[data-tournament='{code}']"
    WebDriverWait(page, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, done))
    assert page.find_element(By.CSS_SELECTOR, f"{done} .winner").text == winner
    page.get(f"{base}/@/{winner}")
    wait_text(page, "#tournaments .played", "1 tournament played, 1 on the podium.")
    first = page.find_element(By.CSS_SELECTOR, f"#tournaments li[data-tournament='{code}']")
    assert first.text.startswith(f"1st in {NAME}")
    assert severe_console_messages(page) == []


def test_a_visitor_watches_the_leaders_race_live(
    browser: webdriver.Chrome, arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    page = browser
    homes = {name: tmp_path / name for name in ("ann", "bob")}
    for name, home in homes.items():
        child = terminal(arena, home, name, terminals, "register", name, "--password-stdin")
        type_line(child, f"{name}'s long secret")
        child.expect(f"Registered and logged in as {name}.")
        assert finish(child) == 0
    child = terminal(arena, homes["ann"], "ann", terminals, "tournament", "create", "TV Cup",
                     "--minutes", "3", "--race-time", "30")  # fmt: skip
    child.expect(r"Tournament (\w+): ")
    code = child.match.group(1)
    assert finish(child) == 0
    # A guest follows the tournament: no joining, the leaders' race on its TV.
    page.get(f"http://127.0.0.1:{arena.port}/tournament/{code}")
    wait_text(page, "#tournament-title", "TV Cup")
    assert (
        page.find_element(By.CSS_SELECTOR, ".controls p").text == "Log in on the home page to join."
    )
    racers = [
        terminal(arena, home, name, terminals, "tournament", "join", code)
        for name, home in homes.items()
    ]
    for racer in racers:
        racer.expect(words("Go! The race has started"), timeout=30)
    WebDriverWait(page, 30).until(
        lambda d: sorted(r[0] for r in d.execute_script(TV_ROWS)) == ["ann", "bob"]
    )
    room = page.find_element(By.ID, "tournament-tv").get_attribute("data-room")
    assert any(r[3] == "racing" for r in page.execute_script(STANDINGS))
    assert (
        page.find_element(By.CSS_SELECTOR, f"table.standings a[href='/watch/{room}']").text
        == "racing"
    )
    type_line(racers[0], "d")  # ann's move shows on the TV
    WebDriverWait(page, 20).until(lambda d: ["ann", "1"] in d.execute_script(TV_ROWS))
    for racer in racers:
        racer.sendintr()
        racer.expect(words(f"Paused in tournament {code}"), timeout=20)
    assert severe_console_messages(page) == []


@pytest.mark.long
def test_a_reload_mid_race_takes_the_seat_back_in_the_tournament_page(
    browser: webdriver.Chrome, arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    page = browser
    base = f"http://127.0.0.1:{arena.port}"
    home = two_players(page, arena, tmp_path, terminals, ("webuma", "uma"), ("vic", "vic"))
    # Created from the list page's form, which opens the new tournament's page.
    page.get(f"{base}/tournaments")
    form = page.find_element(By.ID, "create-tournament")
    form.find_element(By.NAME, "title").send_keys("Reload Cup")
    # Races of half a minute: the pairing waits 2 s (a race's limit / 15, at least 2 s).
    for name, value in (("minutes", "3"), ("race", "0.5")):
        form.find_element(By.NAME, name).clear()
        form.find_element(By.NAME, name).send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    WebDriverWait(page, 20).until(lambda d: re.search(r"/tournament/\w+$", d.current_url))
    code = page.current_url.rsplit("/", 1)[1]
    assert wait_text(page, "#tournament-title", "Reload Cup") == "Reload Cup"
    assert wait_text(page, "#tournament-facts", "by webuma").startswith(
        "Swiss · 3 min · races of 2"
    )
    click(page, "join")
    vic = terminal(arena, home, "vic", terminals, "tournament", "join", code)
    WebDriverWait(page, 30).until(lambda d: d.find_element(By.ID, "my-race").is_displayed())
    assert board_at(page, 1) == 1
    type_move(page, "d")
    assert board_at(page, 2) == 2
    cards = page.execute_script("return document.querySelector('.playboard').innerText")
    page.refresh()
    # Back in the race, its move kept, the standings below it.
    wait_text(page, "#race-note", "Back in your race")
    assert board_at(page, 2) == 2
    assert page.execute_script("return document.querySelector('.playboard').innerText") == cards
    assert page.current_url == f"{base}/tournament/{code}"
    type_move(page, "resign")
    wait_text(page, "#said", "Type 'y' to resign")
    type_move(page, "y")
    type_line(vic, "d")
    type_line(vic, "resign")
    vic.expect("Resign this game")
    type_line(vic, "y")
    WebDriverWait(page, 30).until(
        lambda d: sorted(len(r[2]) for r in d.execute_script(STANDINGS)) == [1, 1]
    )
    assert severe_console_messages(page) == []


def test_a_race_whose_seat_never_comes_closes_and_the_page_waits_again(
    browser: webdriver.Chrome,
    arena: ServerProcess,
    redis_server: RedisServer,
    tmp_path: Path,
    terminals: list,
) -> None:
    """Paired, then seated too late (the race went on or closed): the race panel closes and
    the page says it waits for the next pairing, still in the tournament."""
    page = browser
    two_players(page, arena, tmp_path, terminals, ("webwes", "wes"), ("xan", "xan"))
    page.get(f"http://127.0.0.1:{arena.port}/tournaments")
    form = page.find_element(By.ID, "create-tournament")
    form.find_element(By.NAME, "title").send_keys("Late Cup")
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    WebDriverWait(page, 20).until(lambda d: re.search(r"/tournament/\w+$", d.current_url))
    code = page.current_url.rsplit("/", 1)[1]
    click(page, "join")
    wait_text(page, "#tournament-lead", "You are in")
    asyncio.run(place_in_a_gone_room(redis_server, prefix_of(tmp_path), code, "webwes"))
    lead = wait_text(page, "#tournament-lead", "Not seated in race room gone1234")
    assert lead.endswith("waiting to be paired again.")
    assert not page.find_element(By.ID, "my-race").is_displayed()
    assert page.find_elements(By.CSS_SELECTOR, "button[data-act='withdraw']")  # still in
    assert severe_console_messages(page) == []


@pytest.mark.long
def test_a_berserk_clock_that_runs_out_reads_as_a_timeout_in_the_page(
    browser: webdriver.Chrome, arena: ServerProcess, tmp_path: Path, terminals: list
) -> None:
    """The page's racer goes berserk (6 s of a 12 s race) and lets the clock run out: a
    timeout in the page's lines and panel, and for the rival, never a resignation."""
    page = browser
    home = two_players(page, arena, tmp_path, terminals, ("webwes", "wes"), ("xan", "xan"))
    child = terminal(arena, home, "xan", terminals, "tournament", "create", "Clock Cup",
                     "--minutes", "1", "--race-time", "12")  # fmt: skip
    child.expect(r"Tournament (\w+): ")
    code = child.match.group(1)
    assert finish(child) == 0
    page.get(f"http://127.0.0.1:{arena.port}/tournament/{code}")
    click(page, "join")
    xan = terminal(arena, home, "xan", terminals, "tournament", "join", code)
    WebDriverWait(page, 30).until(lambda d: d.find_element(By.ID, "my-race").is_displayed())
    click(page, "berserk")
    wait_text(page, "#race-note", "Berserk: your clock is halved")
    xan.expect(words("Go! The race has started"), timeout=20)
    type_move(page, "d")  # one move: a racer who never moves is taken as absent
    assert board_at(page, 2) == 2
    lead = wait_text(page, "#my-race #lead", "You ran out of time with 0 cards", wait_s=20)
    assert "resigned" not in lead
    xan.expect(words("webwes ran out of time with 0 cards on the foundations."), timeout=20)

    def statuses(d: webdriver.Chrome) -> list[str]:
        return d.execute_script(
            "return [...document.querySelectorAll('#my-race td.status')].map((c) => c.textContent)"
        )

    # The panel's rows follow the lead line on the page's next render.
    WebDriverWait(page, 20).until(lambda d: "ran out of time" in statuses(d))
    cells = statuses(page)
    assert "resigned" not in cells
    type_line(xan, "resign")
    xan.expect("Resign this game")
    type_line(xan, "y")
    xan.sendintr()
