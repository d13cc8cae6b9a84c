"""A challenge in Chromium, on a real server process: a terminal player challenges the browser's
account; the home page lists it, its link plays it (a reload keeps the game), the standings
show once the browser's game is over, without the other's game until the terminal has played;
the profile page lists it once over; and the home page's form makes a challenge and gives its
link."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.client.pty_driver import finish, type_line
from tests.support.server_process import ServerProcess
from tests.web.test_home import account_form
from tests.web.test_play import board_at, text_of, wait_text
from tests.web.test_race import terminal, terminals, type_move

__all__ = ["terminals"]  # the fixture, shared


def test_a_challenge_link_played_in_the_browser(
    page: webdriver.Chrome,
    play_arena: ServerProcess,
    tmp_path: Path,
    terminals: list[pexpect.spawn],
) -> None:
    base = f"http://127.0.0.1:{play_arena.port}"
    page.get(f"{base}/")
    account_form(page, "register", name="webchal", password="a challenge secret")
    wait_text(page, "#account-status", "Logged in as webchal.")

    home = tmp_path / "termchal"
    child = terminal(play_arena, home, "termchal", terminals, "register", "termchal",
                     "--password-stdin")  # fmt: skip
    type_line(child, "termchal's long secret")
    child.expect("Registered and logged in as termchal.")
    assert finish(child) == 0
    child = terminal(play_arena, home, "termchal", terminals, "challenge", "create", "--to",
                     "webchal", "--variant", "quadrennial")  # fmt: skip
    child.expect(r"Challenge ([a-z2-9]{10}) \(quadrennial\)")
    code = str(child.match.group(1))
    assert finish(child) == 0

    page.get(f"{base}/")  # the home page lists the challenge open for this account
    wait_text(page, "#challenge ul.challenges", code)
    page.find_element(By.CSS_SELECTOR, f"li[data-code='{code}'] a.play-challenge").click()
    assert board_at(page, 1) == 1
    wait_text(page, "#lead", f"Challenge {code}")
    type_move(page, "d")
    assert board_at(page, 2) == 2
    page.refresh()  # the seat survives a reload, as any
    assert board_at(page, 2) == 2
    type_move(page, "resign")
    type_move(page, "y")
    standings = wait_text(page, "#ratings", "1 of 2 played")
    assert "Standings" in standings
    assert "webchal" in text_of(page, "#ratings table.challenge-standings")
    assert "termchal" not in standings  # has not played: nothing of theirs to show

    child = terminal(play_arena, home, "termchal", terminals, "challenge", "play", code)
    child.expect(f"Challenge {code}: one attempt")
    type_line(child, "resign")
    child.expect("Resign this game")
    type_line(child, "y")
    child.expect("You resigned")
    type_line(child, "quit")
    assert finish(child) == 0

    page.refresh()  # the finished room again: the standings now settled, with both
    settled = wait_text(page, "#ratings", "over: the seed is revealed")
    assert "termchal" in settled
    assert "webchal" in settled
    replays = page.find_elements(By.CSS_SELECTOR, "#ratings table.challenge-standings a")
    assert {a.get_attribute("href").rsplit("/", 1)[1] for a in replays} == {
        "webchal",
        "termchal",
    }

    page.execute_script("sessionStorage.clear()")  # a new tab: no seat to come back to
    page.get(f"{base}/play?challenge={code}")  # over: the link shows the standings instead
    wait_text(page, "#refused", f"challenge {code} has closed")
    assert "termchal" in wait_text(page, "#ratings", "over: the seed is revealed")

    page.get(f"{base}/@/webchal")  # the profile lists the finished challenge, and the place
    row = wait_text(page, f"#challenges tr[data-challenge='{code}']", "of 2")
    assert "termchal" in row
    rated = wait_text(page, f"#races tr[data-challenge='{code}']", "challenge")  # rated, once
    assert "of 2" in rated

    # The form on the home page: a challenge to anyone with its link.
    page.get(f"{base}/")
    page.find_element(By.CSS_SELECTOR, "#more > summary").click()  # the full forms
    form = page.find_element(By.ID, "challenge-create")
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    said = wait_text(page, "#challenge-status", "Share this link:")
    link = re.search(r"http://\S+/play\?challenge=([a-z2-9]{10})", said)
    assert link is not None
    wait_text(page, "#challenge ul.challenges", link.group(1))
    # On the home page, among the challenges waiting for this player, one click from playing it.
    page.get(f"{base}/")
    waiting = wait_text(page, "#home-challenges", f"Play {link.group(1)}")
    assert waiting.startswith(f"Play {link.group(1)} (swiss) by webchal, until ")
    href = page.find_element(By.CSS_SELECTOR, f"#home-challenges li[data-code='{link.group(1)}'] a")
    assert href.get_attribute("href").endswith(f"/play?challenge={link.group(1)}")
