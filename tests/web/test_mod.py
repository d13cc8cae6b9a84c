"""The referee in a real headless Chromium: a logged-in player reports another from the
profile page by pointer and keyboard; a moderator's /mod shows the report, the account, and a
fair-play mark that must be confirmed before it is sent, then the log, then a rename (its new
name asked for, confirmed) that the renamed player's browser is told of once; anyone else's /mod
says moderators only, and the marked profile says it is marked, under the new name. An account
the assessor flagged is in the queue with its evidence, and shown with its assessed games."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.select import Select

from server.referee.domain.events import GameAssessed
from server.referee.services.assessor import Assessor
from server.runtime.clock import SystemClock
from server.store import RedisEventStore
from tests.server.accounts.test_accounts_e2e import ask, register
from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.web.conftest import blank_tab, severe_console_messages
from tests.web.test_viewer import driven, until


@pytest.fixture
def prefix() -> str:
    return f"mod{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def refereed(redis_server: RedisServer, prefix: str, tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[
            "--rate",
            "1000",
            "--burst",
            "1000",
            "--moderators",
            "mia",
            "--redis-prefix",
            prefix,
        ],
    )
    server.start()
    yield server
    server.stop()


def logged_in(browser: webdriver.Chrome, server: ServerProcess, name: str, key: str) -> None:
    """The browser holds ``name``'s key, as the home page's login leaves it."""
    blank_tab(browser, server)
    browser.execute_script(
        "localStorage.setItem('arena.key', arguments[0]);"
        "localStorage.setItem('arena.account', arguments[1]);",
        key,
        name,
    )


async def flag(redis_url: str, prefix: str, account: str) -> None:
    """Six games of ``account`` assessed as a script's, written as the server's assessor does."""
    store = RedisEventStore(redis_url, prefix=prefix)
    try:
        assessor = Assessor(store, None, SystemClock(), {})
        for i in range(6):
            await assessor.write(GameAssessed(
                at=i, room=f"r{i}", player="p", account=account, name=account,
                variant="quadrennial", kind="race", moves=90, think_mean_ms=1800,
                think_spread=0.5, even_streak=2, timed_moves=150, time_difficulty=0.0,
                deal="unknown", known="unknown", won=True, kept=0, judged=0, focus_lost=0,
            ))  # fmt: skip
    finally:
        await store.aclose()


STATUS = "return document.querySelector('.report-status')?.textContent ?? ''"
ROWS = "return [...document.querySelectorAll('{}')].map((r) => r.textContent)"
QUEUE = ROWS.format("#queue tbody tr[data-account]")
LOG = ROWS.format("#log tbody tr[data-action]")
PAGE = "return document.querySelector('main').textContent"


NOTICE = "return document.querySelector('#notice')?.textContent ?? ''"


async def renamed_in_the_browser(
    browser: webdriver.Chrome, server: ServerProcess, mia: Client, bob_key: str
) -> None:
    """mia renames bob at /mod, the new name asked for and the rename confirmed; bob's browser
    is told once, above the page, and keeps the new name."""
    rename = browser.find_element(By.CSS_SELECTOR, "#account button[data-action=rename]")
    why = browser.find_element(By.CSS_SELECTOR, "#account input")
    await driven(browser, why.send_keys, "a rude name")
    await driven(browser, rename.click)  # no new name yet: refused on the page
    await until(browser, PAGE, lambda s: "Name the new name first" in s)
    new_name = browser.find_element(By.CSS_SELECTOR, "#account input.new-name")
    await driven(browser, new_name.send_keys, "Zed")
    await driven(browser, rename.click)
    confirm = await until(
        browser, "return document.querySelector('#account button.confirm')?.textContent", bool
    )
    assert confirm == "Confirm: rename bob to Zed"
    assert len((await ask(mia, {"type": "mod_log"}, "mod_log_rows"))["rows"]) == 1  # the mark
    await driven(browser, browser.find_element(By.CSS_SELECTOR, "#account button.confirm").click)
    await until(browser, PAGE, lambda s: "Done: mia rename bob to Zed." in s)
    heading = "return document.querySelector('#account h2')?.textContent"
    assert (await until(browser, heading, lambda s: s.startswith("Zed"))).startswith("Zed: marked")
    logged = await until(browser, LOG, lambda rows: len(rows) == 2)
    assert "bob → Zed" in logged[0]
    assert "a rude name" in logged[0]

    await driven(browser, logged_in, browser, server, "bob", bob_key)
    await driven(browser, browser.get, f"http://127.0.0.1:{server.port}/")
    told = await until(browser, NOTICE, bool)
    assert "a moderator renamed your account from bob to Zed: a rude name" in told
    kept = "return localStorage.getItem('arena.account')"
    assert await until(browser, kept, lambda name: name == "Zed") == "Zed"
    await driven(browser, browser.get, f"http://127.0.0.1:{server.port}/")
    await until(browser, PAGE, lambda s: "Logged in as Zed" in s)
    assert await until(browser, NOTICE, lambda s: s == "") == ""  # told once


async def test_report_from_a_profile_then_a_moderator_marks_with_a_confirmation(
    refereed: ServerProcess,
    session_browser: webdriver.Chrome,
    redis_server: RedisServer,
    prefix: str,
) -> None:
    browser = session_browser
    web = f"http://127.0.0.1:{refereed.port}"
    clients = []
    try:
        ann, ann_key = await register(refereed.url, "ann")
        bob, bob_key = await register(refereed.url, "bob")
        mia, mia_key = await register(refereed.url, "mia")
        clients = [ann, bob, mia]

        # ann reports bob from his profile: the button, the reason by keyboard, a note.
        await driven(browser, logged_in, browser, refereed, "ann", ann_key)
        await driven(browser, browser.get, f"{web}/@/bob")
        await until(browser, "return !!document.querySelector('button.report')", bool)
        await driven(browser, browser.find_element(By.CSS_SELECTOR, "button.report").click)
        chooser = browser.find_element(By.CSS_SELECTOR, ".report-form select")
        await driven(browser, Select(chooser).select_by_value, "name")
        note = browser.find_element(By.CSS_SELECTOR, ".report-form input")
        await driven(browser, note.send_keys, "an insult for a name")
        send = browser.find_element(By.CSS_SELECTOR, "button.send-report")
        await driven(browser, send.send_keys, Keys.ENTER)
        said = await until(browser, STATUS, lambda s: s.startswith("Reported"))
        assert said == "Reported bob: a moderator will look."

        # ann is no moderator: /mod says so, and shows nothing.
        await driven(browser, browser.get, f"{web}/mod")
        text = await until(browser, PAGE, lambda s: "Moderators only" in s)
        assert "an insult" not in text

        # ann's last games were a script's: the assessor flagged her (planted here).
        await flag(redis_server.url, prefix, "ann")

        # mia's /mod: the queue, bob shown, a mark that waits for its confirmation.
        await driven(browser, logged_in, browser, refereed, "mia", mia_key)
        await driven(browser, browser.get, f"{web}/mod")
        flagged, row = await until(browser, QUEUE, lambda rows: len(rows) == 2)
        assert "likely assisted (6 games): think time ignores the position" in flagged
        assert "1 name" in row
        assert "an insult for a name" in row
        show = browser.find_elements(By.CSS_SELECTOR, "#queue button.show")
        await driven(browser, show[0].click)
        games = ROWS.format("#account table.assessed tbody tr")
        assert len(await until(browser, games, lambda rows: len(rows) == 6)) == 6
        await driven(browser, show[1].click)
        await until(
            browser,
            "return document.querySelector('#account h2')?.textContent",
            lambda t: t.startswith("bob"),
        )
        await until(browser, "return !!document.querySelector('#account h2')", bool)
        fairplay = "return document.querySelector('#account .fairplay')?.textContent"
        assert await until(browser, fairplay, bool) == "Fair play: no rated game assessed yet."
        mark = browser.find_element(By.CSS_SELECTOR, "#account button[data-action=mark]")
        await driven(browser, mark.click)  # no reason yet: refused on the page, nothing sent
        await until(browser, PAGE, lambda s: "Say why first" in s)
        why = browser.find_element(By.CSS_SELECTOR, "#account input")
        await driven(browser, why.send_keys, "names an insult")
        await driven(browser, mark.click)
        confirm = await until(
            browser, "return document.querySelector('#account button.confirm')?.textContent", bool
        )
        assert confirm == "Confirm: fair-play mark of bob"
        log = await ask(mia, {"type": "mod_log"}, "mod_log_rows")
        assert log["rows"] == []  # the first click sent nothing
        await driven(
            browser, browser.find_element(By.CSS_SELECTOR, "#account button.confirm").click
        )
        await until(browser, PAGE, lambda s: "Done: mia mark bob." in s)
        logged = await until(browser, LOG, bool)
        assert "names an insult" in logged[0]
        assert len(await until(browser, QUEUE, lambda rows: len(rows) == 1)) == 1  # ann's flag
        await renamed_in_the_browser(browser, refereed, mia, bob_key)

        card = await ask(ann, {"type": "profile", "name": "bob"}, "player_card")
        assert (card["name"], card["marked"]) == ("Zed", True)
        await driven(browser, browser.get, f"{web}/@/bob")  # the old name finds the account
        await until(browser, PAGE, lambda s: "fair-play mark" in s and "Zed" in s)
        assert severe_console_messages(browser) == []
    finally:
        for client in clients:
            await client.close()
