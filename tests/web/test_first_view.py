"""A page's first view rendered by the server (server/net/first_view.py): a link preview reads
the served HTML of /tournament/ID without running any script and finds what it is (title,
description, an Open Graph card, the standings), every name as text; a browser without scripts
shows it; with scripts the page takes over as before; and no page asks for a missing icon."""

from __future__ import annotations

import asyncio
from html.parser import HTMLParser
from typing import Any

from selenium import webdriver
from selenium.webdriver.common.by import By

from server.net.http import CONTENT_SECURITY_POLICY
from tests.server.accounts.test_accounts_e2e import ask, hello
from tests.support.server_process import ServerProcess
from tests.web.conftest import severe_console_messages
from tests.web.test_http import Scripts, get
from tests.web.test_play import wait_text

NAME = "Preview <b>Cup</b> & co"


class Preview(HTMLParser):
    """What a link preview takes from a page: its title, meta tags, and the text of <main>."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.meta: dict[str, str] = {}
        self.main: list[str] = []
        self.tags: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in.append(tag)
        self.tags.append(tag)
        fields = dict(attrs)
        if tag == "meta" and fields.get("content") is not None:
            key = fields.get("property") or fields.get("name")
            if key:
                self.meta[key] = str(fields["content"])

    def handle_endtag(self, tag: str) -> None:
        # The element closes, and whatever was left open inside it (HTML lets some go unclosed).
        while self._in:
            if self._in.pop() == tag:
                break

    def handle_data(self, data: str) -> None:
        if "title" in self._in:
            self.title += data
        elif "main" in self._in and "noscript" not in self._in and data.strip():
            self.main.append(data.strip())


def a_tournament(arena: ServerProcess, account: str) -> str:
    """A tournament created and joined by a fresh ``account``: its id."""

    async def made() -> str:
        client, _ = await hello(arena.url, account)
        try:
            key = (await ask(client, {"type": "register", "name": account,
                                      "password": "a long secret"}, "account"))["key"]  # fmt: skip
            await client.close()
            client, _ = await hello(arena.url, account, key)
            settings = {"name": NAME, "variant": "quadrennial", "length_ms": 600_000,
                        "time_limit_ms": 180_000, "race_size": 2, "rated": True,
                        "berserk": False, "streaks": True}  # fmt: skip
            created = await ask(client, {"type": "create_tournament", **settings}, "tournament")
            code = str(created["tournament"]["id"])
            await ask(client, {"type": "join_tournament", "tournament": code}, "tournament_joined")
            return code
        finally:
            await client.close()

    return asyncio.run(made())


def preview(arena: ServerProcess, path: str, **headers: str) -> tuple[Preview, Any]:
    status, served, body = get(f"http://127.0.0.1:{arena.port}{path}", headers=headers)
    assert status == 200
    assert served["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    scripts = Scripts()
    scripts.feed(body.decode())
    assert scripts.inline == []  # still no inline script
    page = Preview()
    page.feed(body.decode())
    return page, served


def test_a_link_preview_reads_what_the_tournament_is_without_scripts(
    play_arena: ServerProcess,
) -> None:
    code = a_tournament(play_arena, "previewer<i>")
    page, _ = preview(play_arena, f"/tournament/{code}", Host="arena.example:8443")
    title = f"{NAME} · tournament · Solitaire Arena"
    assert page.title == title
    facts = (
        "Quadrennial · 10 min · races of 2 (3:00 each) · rated · streaks · 1 player"
        " · by previewer<i>"
    )
    assert page.meta == {
        "viewport": "width=device-width, initial-scale=1",
        "description": f"A solitaire tournament: {facts}. 10:00 left.",
        "og:title": title,
        "og:description": f"A solitaire tournament: {facts}. 10:00 left.",
        "og:type": "website",
        "og:url": f"http://arena.example:8443/tournament/{code}",
        "og:site_name": "Solitaire Arena",
    }
    assert page.main[:3] == [NAME, facts, "10:00 left"]
    assert page.main[3:] == ["Standings", "#", "player", "score", "sheet", "rating", "state",
                             "1", "previewer<i>", "0", "1500", "waiting"]  # fmt: skip
    assert {"b", "i"}.isdisjoint(page.tags)  # names are text, never markup
    # A proxy in front says the scheme it was asked in.
    page, _ = preview(play_arena, f"/tournament/{code}", Host="a.example", **{
        "X-Forwarded-Proto": "https"})  # fmt: skip
    assert page.meta["og:url"] == f"https://a.example/tournament/{code}"
    # No such tournament: the plain shell, the script says so.
    page, _ = preview(play_arena, "/tournament/nosuchone")
    assert page.title == "Solitaire Arena"
    assert "og:title" not in page.meta


def test_a_browser_shows_the_first_view_then_the_script_takes_over(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    code = a_tournament(play_arena, "firstviewer")
    url = f"http://127.0.0.1:{play_arena.port}/tournament/{code}"
    page.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        page.get(url)
        assert page.title == f"{NAME} · tournament · Solitaire Arena"
        assert page.find_element(By.TAG_NAME, "h1").text == NAME
        rows = page.find_elements(By.CSS_SELECTOR, "main table.standings tbody tr")
        assert [r.text for r in rows] == ["1 firstviewer 0 1500 waiting"]
        assert "connecting" not in page.find_element(By.TAG_NAME, "body").text  # nor will it
    finally:
        page.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    page.get(url)
    assert wait_text(page, "#tournament-title", "Cup") == NAME
    wait_text(page, "#link", "connected")
    assert len(page.find_elements(By.TAG_NAME, "h1")) == 1  # the first view was replaced
    assert page.find_elements(By.CSS_SELECTOR, ".first-view") == []
    # The page's icon, and the one browsers ask for unasked, are images Chromium draws.
    drawn = page.execute_async_script("""
const done = arguments[arguments.length - 1];
const size = (src) => new Promise((ok) => {
  const i = new Image(); i.onload = () => ok(i.naturalWidth); i.onerror = () => ok(0); i.src = src;
});
Promise.all([size(document.querySelector('link[rel=icon]').href), size('/favicon.ico')]).then(done);
""")
    assert drawn[0] > 0
    assert drawn[1] > 0
    assert severe_console_messages(page) == []


def test_a_link_preview_of_a_race_names_it_and_shows_nothing_of_the_game(
    play_arena: ServerProcess,
) -> None:
    async def rooms() -> tuple[str, str]:
        ann, _ = await hello(play_arena.url, "Ann<b>")
        bob, _ = await hello(play_arena.url, "bob")
        solver, _ = await hello(play_arena.url, "solver")
        try:
            made = await ask(ann, {"type": "create_room", "variant": "swiss", "capacity": 2,
                                   "countdown_ms": 0}, "room")  # fmt: skip
            room = str(made["room"]["id"])
            for racer in (ann, bob):
                await ask(racer, {"type": "join", "room": room}, "joined")
            await ann.send({"type": "start"})
            await bob.expect("started")
            await bob.send({"type": "move", "move": "d", "id": "m1"})
            await bob.expect("ack")
            # A challenge's attempt: kept out of the room list, so out of previews too.
            key = (await ask(solver, {"type": "register", "name": "solverpv",
                                      "password": "a long secret"}, "account"))["key"]  # fmt: skip
            await solver.close()
            solver, _ = await hello(play_arena.url, "solverpv", key)
            code = (await ask(solver, {"type": "challenge_create"}, "challenge"))["code"]
            started = await ask(solver, {"type": "challenge_play", "challenge": code},
                                "challenge_started")  # fmt: skip
            return room, str(started["room"])
        finally:
            for client in (ann, bob, solver):
                await client.close()

    room, attempt = asyncio.run(rooms())
    page, _ = preview(play_arena, f"/watch/{room}", Host="arena.example")
    facts = "A Swiss race of 2 racers, racing now. Rated, a secret seed."
    assert page.title == f"Room {room}: a Swiss race · Solitaire Arena"
    assert (
        page.meta["description"] == f"{facts} Racers: Ann<b>, bob. Watch every racer's board live."
    )
    assert page.meta["og:url"] == f"http://arena.example/watch/{room}"
    # Who races and how it stands, as the room list says: no card, no move, no place.
    assert page.main == [f"Room {room}", facts, "Ann<b>", "bob"]
    assert "b" not in page.tags
    page, _ = preview(play_arena, f"/watch/{attempt}")
    assert (page.title, page.main) == ("Solitaire Arena", [])
    page, _ = preview(play_arena, "/watch/nosuchroom")
    assert (page.title, page.main) == ("Solitaire Arena", [])


def test_a_link_preview_of_a_profile(play_arena: ServerProcess) -> None:
    a_tournament(play_arena, "Profiled")
    page, _ = preview(play_arena, "/@/profiled")
    assert page.title == "Profiled · Solitaire Arena"
    assert page.meta["description"] == "Profiled, a solitaire racer: no rated race yet."
    assert page.meta["og:type"] == "profile"
    assert page.main == ["Profiled", "No rated race yet."]
    page, _ = preview(play_arena, "/@/Ada%20(bot%204)")
    assert page.main == [
        "Ada (bot 4)",
        "Ada (bot 4) is a bot of level 4 of 5: a racer the server plays, never rated.",
    ]
    page, _ = preview(play_arena, "/@/nobody")
    assert (page.title, page.main) == ("Solitaire Arena", [])
