"""The viewer's ratings pages in a real headless Chromium: after a rated race between registered
accounts on a real server, ``/leaderboard`` and ``/@/NAME`` show what a guest's protocol
``leaderboard`` and ``profile`` answer; ``/`` says which rooms are rated; ``/tv`` prefers the
race of the highest-rated racers to a more watched one of guests."""

from __future__ import annotations

import math

from selenium import webdriver
from selenium.webdriver.common.by import By

from shared import deal_deck
from tests.server.accounts.test_accounts_e2e import ask, hello, race, register
from tests.server.wsclient import Client
from tests.support.server_process import ServerProcess
from tests.web.conftest import severe_console_messages
from tests.web.test_viewer import Bot, driven, until

BOARD = """
const out = {};
for (const t of document.querySelectorAll('table.leaderboard')) {
  out[t.dataset.variant] = {
    caption: t.querySelector('caption').textContent,
    rows: [...t.querySelectorAll('tbody tr[data-account]')].map((r) => ({
      account: r.dataset.account, provisional: r.dataset.provisional,
      href: r.querySelector('a').getAttribute('href'),
      cells: [...r.cells].map((c) => c.textContent)})),
    empty: t.querySelector('tbody td[colspan]')?.textContent ?? null,
  };
}
return out;
"""

PROFILE = """
const rows = (sel) => [...document.querySelectorAll(sel)].map((r) => ({
  key: r.dataset.variant || r.dataset.room,
  href: r.querySelector('a')?.getAttribute('href') ?? null,
  cells: [...r.cells].map((c) => c.textContent)}));
return {title: document.querySelector('h1').textContent,
        ratings: rows('#ratings tbody tr[data-variant]'), races: rows('#races tbody tr'),
        challenges: [...document.querySelectorAll('#challenges tbody tr')]
          .map((r) => r.textContent),
        links: [...document.querySelectorAll('#races tbody a')].map((a) => [a.textContent,
          a.getAttribute('href')])};
"""
NONE = "\u2013"  # the page's dash for nothing


def shown(rating: int, provisional: bool) -> str:
    return f"{rating}?" if provisional else str(rating)


async def test_leaderboard_profile_rated_rooms_and_tv_by_rating(
    arena: ServerProcess, browser: webdriver.Chrome
) -> None:
    web = f"http://127.0.0.1:{arena.port}"
    clients: list[Client] = []
    try:
        ann, _ = await register(arena.url, "Ann")
        bob, _ = await register(arena.url, "bob")
        cy, _ = await register(arena.url, "cy")
        guest, _ = await hello(arena.url)
        clients = [ann, bob, cy, guest]
        room = await race(ann, [ann, bob, cy])
        for racer in (ann, bob, cy):
            await ask(racer, {"type": "race_ratings", "room": room}, "rating_changes")
            await ask(racer, {"type": "leave"}, "left")

        # A guest may ask both: what the pages must show.
        standings = await ask(guest, {"type": "leaderboard", "top": 100}, "standings")
        assert [r["name"] for r in standings["rows"]] == ["Ann", "bob", "cy"]
        assert standings["me"] is None
        card = await ask(guest, {"type": "profile", "name": "ann"}, "player_card")
        assert card["name"] == "Ann"
        assert card["recent"][0]["room"] == room

        await driven(browser, browser.get, f"{web}/leaderboard")
        board = await until(
            browser,
            BOARD,
            lambda b: len(b["swiss"]["rows"]) == 3 and b["quadrennial"]["empty"] is not None,
        )
        assert board["swiss"]["caption"] == "Swiss (3 rated players)"
        assert [r["cells"] for r in board["swiss"]["rows"]] == [
            [str(r["rank"]), r["name"], shown(r["rating"], r["provisional"]), str(r["games"]),
             str(r["wins"])]
            for r in standings["rows"]
        ]  # fmt: skip
        assert all(r["provisional"] == "true" for r in board["swiss"]["rows"])
        assert [r["href"] for r in board["swiss"]["rows"]] == ["/@/Ann", "/@/bob", "/@/cy"]
        assert board["quadrennial"]["empty"] == "No rated player yet."

        await driven(browser, browser.get, f"{web}/@/Ann")
        page = await until(browser, PROFILE, lambda p: bool(p["ratings"]))
        assert page["title"] == "Ann"
        (rating,) = card["ratings"]
        assert page["ratings"] == [
            {
                "key": "swiss",
                "href": None,
                "cells": [
                    "Swiss",
                    shown(rating["rating"], rating["provisional"]),
                    f"{rating['rank']} of {rating['players']}",
                    str(rating["games"]),
                    str(rating["wins"]),
                    NONE,  # no win: no best time
                ],
            }
        ]
        (recent,) = card["recent"]
        (row,) = page["races"]
        assert row["key"] == room
        assert row["href"] == f"/replay/{room}/Ann"
        assert row["cells"][1:] == [
            "Swiss",
            room,
            "replay · watch",
            f"{recent['place']} of {recent['of']}",
            NONE,
            str(recent["rating"]),
            f"+{recent['delta']}" if recent["delta"] > 0 else str(recent["delta"]),
        ]
        # Each link says what it opens; an empty table says so.
        assert page["links"] == [["replay", f"/replay/{room}/Ann"], ["watch", f"/watch/{room}"]]
        assert page["challenges"] == ["none"]
        # The replay link opens that game's replay.
        await driven(browser, browser.find_element(By.LINK_TEXT, "replay").click)
        title = await until(
            browser,
            "const b = document.querySelector('section.board.replay');"
            "return b && b.dataset.pos ? document.querySelector('h1').textContent : null",
            bool,
        )
        assert title == f"Replay of Ann in room {room}"
        await driven(browser, browser.get, f"{web}/@/nobody")
        assert (
            await until(browser, "return document.querySelector('.error')?.textContent", bool)
            == "There is no player nobody."
        )

        # The rooms page says which rooms are rated.
        unrated = await ask(
            guest, {"type": "create_room", "variant": "swiss", "rated": False}, "room"
        )
        rated = await ask(guest, {"type": "create_room", "variant": "swiss"}, "room")
        await driven(browser, browser.get, f"{web}/")
        cell = (
            'const r = document.querySelector("{}");'
            "return r && r.querySelector('.rated').textContent"
        )
        for where, expected in (
            (f"#recent tr[data-room='{room}']", "rated"),
            (f"#live tr[data-room='{unrated['room']['id']}']", "unrated"),
            (f"#live tr[data-room='{rated['room']['id']}']", "rated"),
        ):
            assert await until(browser, cell.format(where), bool) == expected

        # Two races: one of rated accounts, one of guests (an open seed, for the bot) watched
        # by two spectators.
        g1, g2, e1, e2 = [await Client(arena.url, n).open() for n in ("g1", "g2", "e1", "e2")]
        clients += [g1, g2, e1, e2]
        for client in (g1, g2, e1, e2):
            await client.hello()
        opts = {"type": "create_room", "variant": "swiss", "countdown_ms": 0}
        top = (await ask(ann, opts, "room"))["room"]["id"]
        crowd = (await ask(g1, {**opts, "seed": "crowd"}, "room"))["room"]["id"]
        for racer, where in ((ann, top), (bob, top), (g1, crowd), (g2, crowd)):
            await ask(racer, {"type": "join", "room": where}, "joined")
        for eye in (e1, e2):
            await ask(eye, {"type": "join", "room": crowd, "role": "spectator"}, "joined")
        for starter in (ann, g1):
            await starter.send({"type": "start"})
        for racer in (ann, bob, g1, g2):
            await racer.expect("started")
        # Which racers are logged in, for TV: the accounts, in join order, nil for a guest.
        listed = {r["id"]: r for r in (await ask(guest, {"type": "list_rooms"}, "rooms"))["rooms"]}
        assert listed[top]["accounts"] == ["Ann", "bob"]
        assert listed[crowd]["accounts"] == [None, None]
        assert listed[room]["accounts"] == ["Ann", "bob", "cy"]
        # The rooms page shows each racing room's progress as a spectator sees it.
        await driven(browser, browser.get, f"{web}/")
        progress = (
            "return document.querySelector(\"#live tr[data-room='{}'] .progress\")?.textContent"
        )
        assert (
            await until(browser, progress.format(top), lambda t: t and t != NONE)
            == "Ann 0/52 (0 moves), bob 0/52 (0 moves)"
        )
        await until(browser, progress.format(crowd), lambda t: t and t != NONE)
        # The home page's TV: the most watched race on, one click from watching it.
        tv = "return document.querySelector('#home-tv-race').textContent"
        assert await until(browser, tv, lambda t: t.startswith("Watch")) == (
            f"Watch room {crowd}: g1, g2 racing at swiss (2 watching)."
        )
        await Bot(g1, "swiss", deal_deck("swiss", "crowd"), 0.05).play(8, 1)
        await e1.expect("progress", lambda m: m["status"] == "resigned")
        seen = {m["player"]: m for m in e1.messages if m["type"] == "progress"}
        assert seen[g1.session]["moves"] > 0
        expected = ", ".join(
            f"{name} {seen[c.session]['foundation']}/52 ({seen[c.session]['moves']} moves"
            + (", resigned)" if seen[c.session]["status"] == "resigned" else ")")
            for name, c in (("g1", g1), ("g2", g2))
        )
        assert await until(browser, progress.format(crowd), lambda t: t == expected) == expected

        # TV: the race of rated accounts beats the more watched race of guests.
        await driven(browser, browser.get, f"{web}/tv?linger=500")
        followed = "return document.querySelector('.tv')?.dataset.room"
        assert await until(browser, followed, bool) == top
        note = await until(browser, "return document.querySelector('.tv-note').textContent", bool)
        mean = (standings["rows"][0]["rating"] + standings["rows"][1]["rating"]) / 2
        assert note == f"Following room {top}: Ann, bob (rated {math.floor(mean + 0.5)} on average)"
        for racer in (ann, bob):
            await racer.send({"type": "resign"})
        assert await until(browser, followed, lambda r: r == crowd) == crowd
        await g2.send({"type": "resign"})
        await until(
            browser,
            "return document.querySelector('.tv-note').textContent",
            lambda t: t.startswith("No live race"),
        )
        assert severe_console_messages(browser) == []
    finally:
        for client in clients:
            await client.close()
