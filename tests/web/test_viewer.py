"""The web viewer end to end: bots race through a real server process on a real Redis while a
headless Chromium watches; what the page shows is read back from its DOM and compared with what
a protocol spectator received (docs/architecture.md, "Web viewer")."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from shared import apply_move_revealing, deal_deck, legal_moves, new_game, public_fold
from tests.server.wsclient import Client
from tests.support.server_process import ServerProcess
from tests.web.conftest import severe_console_messages
from tests.web.test_board_fold import READ_BOARD, drawn

# Every board on the page, the ranking rows and the room's status, from the DOM alone.
SCAN = (
    READ_BOARD
    + """
const boards = {};
for (const s of document.querySelectorAll('section.board[data-player]')) {
  boards[s.dataset.player] = {...read(s), status: s.querySelector('h2 .status').textContent};
}
const rows = [...document.querySelectorAll('table.ranking tbody tr')].map((r) => ({
  player: r.dataset.player, place: Number(r.dataset.place),
  cells: [...r.cells].map((c) => c.textContent),
}));
const status = document.querySelector('.room-status');
const caption = document.querySelector('table.ranking caption');
return {boards, rows, status: status && status.dataset.status,
        caption: caption && caption.textContent};
"""
)

LAYOUT = """
const tops = [...document.querySelectorAll('section.board')].map((s) => s.offsetTop);
return {width: innerWidth, rows: new Set(tops).size,
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};
"""


class Bot:
    """A racer: foundation moves first, else a random legal move. What it has turned is noted
    before the move is sent, so ``seen`` always holds what the server counts it as having seen."""

    def __init__(self, client: Client, variant: str, deck: list[str], pause: float) -> None:
        self.client = client
        self.state = new_game(variant, deck=deck)
        self.pause = pause
        layout = self.state
        self.seen = {c for p in layout.tableau for c in p} | {c for c in layout.reserve if c}
        self.done_at: float | None = None  # from when it no longer holds anyone back
        self.sent: list[float] = []  # when each move was sent

    @property
    def done(self) -> bool:
        return self.done_at is not None and time.monotonic() >= self.done_at

    async def play(self, moves: int, seed: int, *, then: str = "resign") -> None:
        rng = random.Random(seed)
        for _ in range(moves):
            legal = sorted(legal_moves(self.state))
            if not legal:
                self.done_at = time.monotonic()
                return
            ups = [m for m in legal if m.endswith("f")]
            move = ups[0] if ups else rng.choice(legal)
            after, revealed = apply_move_revealing(self.state, move)
            self.seen |= set(revealed)
            if after.won or not legal_moves(after):
                self.done_at = time.monotonic()
            self.sent.append(time.monotonic())
            assert (await self.client.move(move))["type"] == "ack"
            self.state = after
            if self.done_at is not None:
                return
            await asyncio.sleep(self.pause)
        if then == "resign":
            self.done_at = time.monotonic()
            await self.client.send({"type": "resign"})
        else:
            # Gone: away, then resigned once the grace (2 s) is past, not sooner.
            self.done_at = time.monotonic() + 1.5
            await self.client.close()


_TURNS: weakref.WeakKeyDictionary[webdriver.Chrome, asyncio.Lock] = weakref.WeakKeyDictionary()


async def driven(browser: webdriver.Chrome, command: Callable[..., Any], *args: Any) -> Any:
    """One WebDriver command in a thread, so the bots' event loop goes on meanwhile, and one at
    a time: the scanner and the test's own reads share the browser."""
    async with _TURNS.setdefault(browser, asyncio.Lock()):
        return await asyncio.to_thread(command, *args)


async def dom(browser: webdriver.Chrome, script: str, *args: Any) -> Any:
    """Run a script in the page."""
    return await driven(browser, browser.execute_script, script, *args)


async def until(
    browser: webdriver.Chrome, script: str, ok: Callable[[Any], bool], wait_s: float = 20.0
) -> Any:
    deadline = time.monotonic() + wait_s
    while True:
        value = await dom(browser, script)
        if ok(value):
            return value
        assert time.monotonic() < deadline, f"the page never showed it; last: {value!r}"
        await asyncio.sleep(0.1)


async def room_with(
    creator: Client, players: list[Client], variant: str, seed: str, **options: Any
) -> str:
    await creator.send(
        {"type": "create_room", "variant": variant, "seed": seed, "ref": seed, **options}
    )
    room: str = (await creator.expect("room", lambda m: m.get("ref") == seed))["room"]["id"]
    for player in players:
        await player.send({"type": "join", "room": room})
        await player.expect("joined")
    return room


def spectator_events(spectator: Client) -> dict[str, list[dict[str, Any]]]:
    players = {m["player"] for m in spectator.messages if m["type"] in ("game", "game_event")}
    return {player: spectator.game_events(player) for player in players}


@pytest.mark.long
async def test_watch_shows_the_live_race_fairly_and_follows_it_to_the_results(
    arena: ServerProcess, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    web = f"http://127.0.0.1:{arena.port}"
    variant, seed = "swiss", "web-watch-1"
    deck = deal_deck(variant, seed)
    clients = [await Client(arena.url, n).open() for n in ("ann", "bob", "cat", "eye")]
    try:
        for client in clients:
            await client.hello()
        ann, bob, cat, eye = clients
        room = await room_with(ann, [ann, bob, cat], variant, seed, countdown_ms=3000)
        await eye.send({"type": "join", "room": room, "role": "spectator"})
        await eye.expect("joined")

        await driven(browser, browser.get, f"{web}/watch/nosuchroom")
        assert (
            await until(browser, "return document.querySelector('.error')?.textContent", bool)
            == "There is no room nosuchroom."
        )

        # The rooms page lists the lobby with its racers.
        await driven(browser, browser.get, f"{web}/")
        row = f"#live tr[data-room='{room}']"
        names = await until(
            browser,
            f'const r = document.querySelector("{row}"); return r && [r.dataset.status, '
            "r.querySelector('.names').textContent]",
            bool,
        )
        assert names == ["lobby", "ann, bob, cat"]

        await driven(browser, browser.get, f"{web}/watch/{room.upper()}")
        await until(
            browser,
            "return document.querySelector('.room-status')?.dataset.status",
            lambda s: s == "lobby",
        )
        await ann.send({"type": "start"})
        await until(
            browser,
            "return document.querySelector('.room-status')?.dataset.status",
            lambda s: s in ("countdown", "racing"),
        )
        for racer in (ann, bob, cat):
            await racer.expect("started", wait_s=10)

        bots = [Bot(c, variant, deck, pause) for c, pause in ((ann, 0.02), (bob, 0.06), (cat, 0.1))]
        layout = set(bots[0].seen)
        scans: list[dict[str, Any]] = []
        checked = 0
        shot = tmp_path / "viewer.png"
        racing = True

        async def scan() -> None:
            nonlocal checked
            while racing:
                snap = await dom(browser, SCAN)
                scans.append(snap)
                # Fair spectating: every turned card on the page, every racer still playing
                # has turned it too (their records only grow, so read after the page).
                for board in snap["boards"].values():
                    shown = {c for p in board["tableau"] for c in p}
                    shown |= {board["waste"][1]} | {f[1] for f in board["foundations"]}
                    for card in shown - layout - {None}:
                        checked += 1
                        for bot in bots:
                            assert card in bot.seen or bot.done, f"{card} shown before its turn"
                boards = snap["boards"].values()
                if not shot.exists() and len(boards) == 3 and min(b["moves"] for b in boards) > 8:
                    await driven(browser, browser.save_screenshot, str(shot))
                await asyncio.sleep(0.05)

        scanner = asyncio.create_task(scan())
        cat_gone = asyncio.create_task(bots[2].play(12, 3, then="disconnect"))
        await asyncio.gather(bots[0].play(60, 1), bots[1].play(60, 2), cat_gone)

        # cat's connection is gone: the panel says so, until the grace resigns cat.
        away = await until(
            browser,
            f"return document.querySelector('tr[data-player=\"{cat.session}\"] td:last-child')"
            "?.textContent",
            lambda t: t is not None and t.startswith("away"),
        )
        assert away.startswith("away")
        finished = await eye.expect("finished", wait_s=30)
        final = await until(browser, SCAN, lambda s: s["caption"] == "Results")
        if not shot.exists():  # the page was never read mid-race with every board under way
            await driven(browser, browser.save_screenshot, str(shot))
        racing = False
        await scanner

        # The results are the protocol spectator's ranking.
        assert final["status"] == "finished"
        assert [(r["place"], r["player"]) for r in final["rows"]] == [
            (r["place"], r["player"]) for r in finished["ranking"]
        ]
        assert [r["cells"][3] for r in final["rows"]] == [
            f"{r['foundation']}/52" for r in finished["ranking"]
        ]
        # Every board the page ever showed is one the spectator's events led to, and at the end
        # it shows each game whole.
        events = spectator_events(eye)
        assert set(events) == {ann.session, bob.session, cat.session}
        views = {
            p: [drawn(public_fold(e[:k])) for k in range(1, len(e) + 1)] for p, e in events.items()
        }
        for snap in [*scans, final]:
            for player, board in snap["boards"].items():
                assert {k: v for k, v in board.items() if k != "status"} in views[player]
        for player, board in final["boards"].items():
            assert {k: v for k, v in board.items() if k != "status"} == views[player][-1]
        assert final["boards"][cat.session]["status"] == "abandoned"
        assert checked > 0
        assert len(scans) > 10
        assert shot.exists()
        if os.environ.get("VIEWER_SCREENSHOT"):  # how docs/viewer.png is made
            await asyncio.to_thread(shutil.copyfile, shot, os.environ["VIEWER_SCREENSHOT"])

        # At a phone's width the boards stack and nothing runs off the side; at 1920 px the
        # three stand side by side.
        for width, rows in ((360, 3), (1920, 1)):
            await driven(browser, browser.execute_cdp_cmd, "Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": 900, "deviceScaleFactor": 1,
                                     "mobile": width < 800})  # fmt: skip
            layout_at = await until(browser, LAYOUT, lambda v, w=width: v["width"] == w)
            assert layout_at["overflow"] <= 0
            assert layout_at["rows"] == rows
        await driven(browser, browser.execute_cdp_cmd, "Emulation.clearDeviceMetricsOverride", {})

        # The rooms page has it under the recent rooms.
        await driven(browser, browser.get, f"{web}/")
        await until(
            browser,
            f"return document.querySelector(\"#recent tr[data-room='{room}']\")?.dataset.status",
            lambda s: s == "finished",
        )
        # and follows the directory live: a new lobby shows up without a reload.
        await ann.send({"type": "create_room", "variant": "quadrennial", "ref": "new"})
        lobby = (await ann.expect("room", lambda m: m.get("ref") == "new"))["room"]["id"]
        await until(
            browser,
            f"return document.querySelector(\"#live tr[data-room='{lobby}']\")?.dataset.status",
            lambda s: s == "lobby",
        )
        # A room opened after its end shows its results, with the replays a click away.
        await driven(browser, browser.get, f"{web}/watch/{room}")
        # Each game's snapshot is its own message: wait for every board, not the first one.
        late = await until(
            browser,
            SCAN,
            lambda s: s["caption"] == "Results" and len(s["boards"]) == len(final["boards"]),
        )
        assert [r["player"] for r in late["rows"]] == [r["player"] for r in finished["ranking"]]
        assert late["boards"] == final["boards"]

        # The replay steps through one game, from the keyboard.
        bob_events = events[bob.session]
        await driven(browser, browser.get, f"{web}/replay/{room}/bob")
        board_at = (
            READ_BOARD + "const b = document.querySelector('section.board.replay');"
            "return b.dataset.pos ? [Number(b.dataset.pos), read(b)] : null;"
        )
        assert await until(browser, board_at, bool) == [1, drawn(public_fold(bob_events[:1]))]
        body = browser.find_element(By.TAG_NAME, "body")
        steps: list[tuple[str, int]] = [
            (Keys.END, len(bob_events)),
            (Keys.HOME, 1),
            (Keys.ARROW_RIGHT, 2),
            (Keys.ARROW_RIGHT, 3),
            (Keys.ARROW_RIGHT, 4),
            (Keys.ARROW_LEFT, 3),
            (Keys.END, len(bob_events)),
            (Keys.ARROW_RIGHT, len(bob_events)),
        ]
        for key, pos in steps:
            await driven(browser, body.send_keys, key)
            shown = await until(browser, board_at, lambda v, pos=pos: v and v[0] == pos)
            assert shown[1] == drawn(public_fold(bob_events[:pos]))
        # Space plays from where it is, and pauses.
        await driven(browser, body.send_keys, Keys.HOME)
        await driven(browser, body.send_keys, Keys.SPACE)
        await until(browser, board_at, lambda v: v and v[0] >= 3)
        await driven(browser, body.send_keys, Keys.SPACE)
        paused = await dom(browser, board_at)
        await asyncio.sleep(1.0)
        assert await dom(browser, board_at) == paused
        assert paused[1] == drawn(public_fold(bob_events[: paused[0]]))
        assert severe_console_messages(browser) == []
    finally:
        racing = False
        await asyncio.gather(*(c.close() for c in clients))


async def test_tv_follows_the_most_watched_race_and_moves_on_when_it_ends(
    arena: ServerProcess, browser: webdriver.Chrome
) -> None:
    """Two races of guests at once: TV picks the one with more spectators (its rule: racing
    first, then the highest-rated, here neither, then the most watched, then the most racers,
    then the newest), and the other once it ends."""
    variant = "quadrennial"
    clients = [await Client(arena.url, n).open() for n in ("a1", "a2", "b1", "b2", "e1", "e2")]
    try:
        for client in clients:
            await client.hello()
        a1, a2, b1, b2, e1, e2 = clients
        watched = await room_with(a1, [a1, a2], variant, "tv-a", countdown_ms=0)
        quiet = await room_with(b1, [b1, b2], variant, "tv-b", countdown_ms=0)
        for eye in (e1, e2):
            await eye.send({"type": "join", "room": watched, "role": "spectator"})
            await eye.expect("joined")
        for racer in (b1, a1):
            await racer.send({"type": "start"})
        for racer in (a1, a2, b1, b2):
            await racer.expect("started")

        await driven(browser, browser.get, f"http://127.0.0.1:{arena.port}/tv?linger=1500")
        followed = "return document.querySelector('.tv')?.dataset.room"
        assert await until(browser, followed, bool) == watched
        await until(
            browser,
            "return document.querySelector('.room-status')?.dataset.status",
            lambda s: s == "racing",
        )
        deck_a, deck_b = deal_deck(variant, "tv-a"), deal_deck(variant, "tv-b")
        quick = [Bot(c, variant, deck_a, 0.02).play(15, n) for n, c in enumerate((a1, a2))]
        await asyncio.gather(*quick)
        results = await until(browser, SCAN, lambda s: s["caption"] == "Results")
        assert {r["player"] for r in results["rows"]} == {a1.session, a2.session}
        # Then the other race (its racers wait for TV to come: no test here hangs on timing).
        assert await until(browser, followed, lambda room: room == quiet) == quiet
        slow = [Bot(c, variant, deck_b, 0.05).play(40, n) for n, c in enumerate((b1, b2))]
        race_b = asyncio.gather(*slow)
        live = await until(browser, SCAN, lambda s: len(s["boards"]) == 2)
        assert set(live["boards"]) == {b1.session, b2.session}
        await race_b
        await until(browser, SCAN, lambda s: s["caption"] == "Results")
        await until(
            browser,
            "return document.querySelector('.tv-note').textContent",
            lambda t: t.startswith("No live race"),
        )
        assert severe_console_messages(browser) == []
    finally:
        await asyncio.gather(*(c.close() for c in clients))


async def test_the_page_waits_out_the_rooms_spectator_delay(
    arena: ServerProcess, browser: webdriver.Chrome
) -> None:
    """A move shows on the page no sooner than the room's delay after it was sent."""
    variant, seed, delay = "quadrennial", "web-delay", 1.5
    clients = [await Client(arena.url, n).open() for n in ("dan", "eve")]
    try:
        for client in clients:
            await client.hello()
        dan = clients[0]
        room = await room_with(
            dan, clients, variant, seed, countdown_ms=0, spectator_delay_ms=int(delay * 1000)
        )
        await driven(browser, browser.get, f"http://127.0.0.1:{arena.port}/watch/{room}")
        await until(
            browser,
            "return document.querySelector('.room-status')?.dataset.status",
            lambda s: s == "lobby",
        )
        await dan.send({"type": "start"})
        for racer in clients:
            await racer.expect("started")
        deck = deal_deck(variant, seed)
        bots = {c.session: Bot(c, variant, deck, 0.05) for c in clients}
        play = asyncio.gather(*(bot.play(30, n) for n, bot in enumerate(bots.values())))
        shown = 0
        deadline = time.monotonic() + 60
        while not play.done() or shown < sum(len(bot.sent) for bot in bots.values()):
            assert time.monotonic() < deadline, "the page never caught up with the race"
            snap = await dom(browser, SCAN)
            read_at = time.monotonic()
            shown = 0
            for player, board in snap["boards"].items():
                moves = board["moves"]
                shown += moves
                if moves:  # the move that made this board was sent at least `delay` ago
                    assert bots[player].sent[moves - 1] + delay <= read_at + 0.05
            await asyncio.sleep(0.05)
        await play
    finally:
        await asyncio.gather(*(c.close() for c in clients))


async def test_a_finished_race_links_to_its_rematch(
    arena: ServerProcess, browser: webdriver.Chrome
) -> None:
    """Someone watching a race from a link follows its racers to their rematch in one click."""
    clients = [await Client(arena.url, n).open() for n in ("fay", "gus")]
    try:
        for client in clients:
            await client.hello()
        fay, gus = clients
        room = await room_with(fay, clients, "swiss", "web-rematch", countdown_ms=0)
        await fay.send({"type": "start"})
        for racer in clients:
            await racer.expect("started")
            await racer.send({"type": "resign"})
        await fay.expect("finished")
        await driven(browser, browser.get, f"http://127.0.0.1:{arena.port}/watch/{room}")
        await until(browser, "return document.querySelector('caption')?.textContent", bool)
        assert await dom(browser, "return document.querySelector('p.rematch')") is None

        await gus.send({"type": "rematch", "ref": "again"})
        rematch = (await gus.expect("joined", lambda m: m.get("ref") == "again"))["room"]
        link = await until(
            browser, "return document.querySelector('p.rematch a')?.getAttribute('href')", bool
        )
        assert link == f"/watch/{rematch}"
        await driven(browser, browser.find_element(By.CSS_SELECTOR, "p.rematch a").click)
        title = "return document.querySelector('h1')?.firstChild?.textContent"
        assert (await until(browser, title, lambda t: t and rematch in t)).strip() == (
            f"Room {rematch}"
        )
        players = "return [...document.querySelectorAll('table.ranking tbody tr')].length"
        assert await until(browser, players, lambda n: n == 1) == 1  # gus, in its lobby
        assert severe_console_messages(browser) == []
    finally:
        await asyncio.gather(*(c.close() for c in clients))
