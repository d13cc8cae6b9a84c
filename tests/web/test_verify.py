"""The finished race page says whether the race was fair, checked in the browser from what the
server published; the page's check (verify.js) gives the verdict `solitaire verify` gives, on
real and tampered races alike."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from shared.deal import deal_deck
from shared.protocol import commitment
from shared.variants import QUADRENNIAL, SWISS
from shared.verification import RaceRecord, verify_race
from tests.client.test_verify_cli import daily_attempt, race
from tests.shared.test_verification import SALT, play
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.web.conftest import severe_console_messages

pytestmark = pytest.mark.e2e  # a real server and a real Chromium

VERDICT = """
const v = window.Verify.verifyRace(arguments[0]);
return v.outcome + (v.reason ? ': ' + v.reason : '');
"""


def tampered_races() -> list[RaceRecord]:
    """A real race of each variant, then each with one thing altered."""
    records = []
    for variant, seed in ((SWISS, "42"), (QUADRENNIAL, "seed with a ü")):
        rng = random.Random(seed)
        games = {f"racer{i}": play(variant, seed, rng, 150) for i in range(2)}
        real = RaceRecord(variant, commitment(seed, SALT), seed, SALT, games)
        first = [dict(e) for e in games["racer0"]]
        start = first[0]
        piles = "tableau" if variant == SWISS else "reserve"
        layout = dict(start["layout"])
        layout[piles] = [layout[piles][1], layout[piles][0], *layout[piles][2:]]
        moved = next(i for i, e in enumerate(first) if len(e.get("revealed", [])) == 1)
        wrong = next(c for c in deal_deck(variant, seed) if c != first[moved]["revealed"][0])
        dealt = [start | {"layout": layout}, *first[1:]]
        turned = [*first[:moved], first[moved] | {"revealed": [wrong]}, *first[moved + 1 :]]
        records += [
            real,
            RaceRecord(variant, real.commitment, seed + "x", SALT, games),
            RaceRecord(variant, real.commitment, seed, "f" * 32, games),
            RaceRecord(variant, real.commitment, seed, SALT, games | {"racer0": dealt}),
            RaceRecord(variant, real.commitment, seed, SALT, games | {"racer0": turned}),
            RaceRecord(variant, real.commitment, None, SALT, games),
        ]
    return records


def as_js(record: RaceRecord) -> dict[str, Any]:
    return {
        "variant": record.variant,
        "commitment": record.commitment,
        "seed": record.seed,
        "salt": record.salt,
        "games": sorted(record.games.items()),
    }


async def test_the_race_page_says_fair_and_checks_as_the_terminal_does(
    arena: ServerProcess, browser: webdriver.Chrome
) -> None:
    room, racers = await race(arena.url)
    for racer in racers:
        await racer.close()
    browser.get(f"http://127.0.0.1:{arena.port}/watch/{room}")
    verdict = WebDriverWait(browser, 20).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "section.verify .verdict")
    )[0]
    assert verdict.text == "fair"
    assert verdict.get_attribute("data-verdict") == "fair"
    checks = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "section.verify li")]
    assert checks[0].startswith("checked: the commitment ")
    assert checks[1:] == [
        "checked: 2 racers dealt the seed's deal (deal version 1)",
        "checked: 4 moves replayed on the seed's deck, every card as shown",
    ]

    for text in ("", "abc", "seed with a ü", "x" * 55, "y" * 64, "z" * 200):
        got = browser.execute_script("return window.Verify.sha256(arguments[0]);", text)
        assert got == hashlib.sha256(text.encode()).hexdigest()
    for variant, seed in ((SWISS, "1"), (QUADRENNIAL, "42"), (SWISS, "€uro")):
        got = browser.execute_script("return window.Verify.dealDeck(...arguments);", variant, seed)
        assert got == deal_deck(variant, seed)
    for record in tampered_races():
        assert browser.execute_script(VERDICT, as_js(record)) == str(verify_race(record))
    assert severe_console_messages(browser) == []


async def test_a_daily_attempt_is_verified_on_its_page_once_its_day_is_over(
    redis_server: RedisServer,
    browser: webdriver.Chrome,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its `finished` reveals no seed; the page asks the day's standings, which do after
    midnight."""
    attempt = daily_attempt(redis_server, tmp_path, monkeypatch, "quadrennial", moves=3)
    async with attempt as (server, room):
        browser.get(f"http://127.0.0.1:{server.port}/watch/{room}")
        verdict = WebDriverWait(browser, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "section.verify .verdict[data-verdict=fair]")
        )[0]
        assert verdict.text == "fair"
        checks = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "section.verify li")]
        assert checks[1:] == [
            "checked: the game dealt the seed's deal (deal version 1)",
            "checked: 3 moves replayed on the seed's deck, every card as shown",
        ]
        assert severe_console_messages(browser) == []
