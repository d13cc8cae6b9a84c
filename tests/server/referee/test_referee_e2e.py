"""Reports and moderation over the protocol, on a real server (its sockets, in this process) on
the embedded store and on a real Redis: a report and its refusals, the queue, a fair-play mark
that takes an account's races out of everyone's ratings exactly and an unmark that gives them
back, a close that ends the account's logins, and a non-moderator refused everything."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.accounts.domain.ratings import RaceRated
from server.app import App
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import EventStore, MemoryEventStore, RedisEventStore
from tests.server.challenges.test_challenge_protocol import NO_ANALYSIS, Served, serving
from tests.server.wsclient import Client

pytestmark = pytest.mark.e2e  # a real Redis for one of the two stores


@pytest.fixture(params=["embedded", "redis"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    if request.param == "redis":
        url = request.getfixturevalue("redis_server").url
        store: EventStore = RedisEventStore(url, prefix=f"ref{uuid.uuid4().hex[:8]}:")
    else:
        store = MemoryEventStore()
    config = Config(
        port=0,
        rate=1000,
        burst=1000,
        moderators="Mia",
        reports_per_hour=4,
        analysis_max_nodes=NO_ANALYSIS,
    )
    clock = FakeClock()
    app = App(config, store, clock)
    async with serving(app, clock) as done:
        yield done


def codes(*answers: dict[str, Any]) -> list[str]:
    return [a.get("code", a["type"]) for a in answers]


async def test_a_report_its_refusals_and_the_queue(served: Served) -> None:
    s = served
    ann, _, mia = await s.account("ann"), await s.account("bob"), await s.account("Mia")
    guest = await s.connect("guest")
    report = {"type": "report", "name": "bob", "reason": "cheat", "note": "too fast"}
    assert codes(await s.ask(guest, report, "report_filed")) == ["not_logged_in"]
    assert codes(
        await s.ask(ann, {**report, "name": "ann"}, "report_filed"),
        await s.ask(ann, {**report, "name": "nobody"}, "report_filed"),
        await s.ask(ann, {**report, "race": "k2x7m4qa"}, "report_filed"),
        await s.ask(ann, report, "report_filed"),
        await s.ask(ann, {**report, "reason": "name"}, "report_filed"),
        await s.ask(ann, {**report, "reason": "abuse"}, "report_filed"),
    ) == [
        "self_report",
        "no_such_account",
        "report_filed",
        "already_reported",
        "report_filed",
        "rate_limited",  # --reports-per-hour 4: a report refused by its rules counts too
    ]
    for kind in ("mod_queue", "mod_log"):
        assert codes(await s.ask(ann, {"type": kind}, f"{kind}_rows")) == ["not_moderator"]
    queue = await s.ask(mia, {"type": "mod_queue"}, "mod_queue_rows")
    (row,) = queue["rows"]
    assert (row["name"], row["reports"], row["reasons"]) == ("bob", 2, {"cheat": 1, "name": 1})
    assert row["latest"]["race"] is None
    shown = await s.ask(mia, {"type": "mod_show", "name": "BOB"}, "mod_account")
    assert [x["reason"] for x in shown["reports"]] == ["cheat", "name"]
    assert shown["reports"][0]["race"] == "k2x7m4qa"
    assert (shown["marked"], shown["closed"], shown["actions"]) == (False, False, [])


async def rated(app: App, number: int, *order: str) -> None:
    racers = tuple(
        {"account": a, "name": a, "place": p, "won": p == 1, "time_ms": 1000 if p == 1 else None}
        for p, a in enumerate(order, 1)
    )
    await app.ratings.record_rated(RaceRated(number, f"race{number}", "swiss", racers))


async def board(s: Served, client: Client) -> dict[str, int]:
    answer = await s.ask(client, {"type": "leaderboard", "top": 50}, "standings")
    return {row["name"]: row["rating"] for row in answer["rows"]}


async def test_a_mark_takes_the_races_out_of_every_rating_and_unmark_gives_them_back(
    served: Served,
) -> None:
    s = served
    ann, bob, _, mia = [await s.account(n) for n in ("ann", "bob", "cat", "Mia")]
    await rated(s.app, 1, "bob", "ann", "cat")
    await rated(s.app, 2, "ann", "cat")
    await rated(s.app, 3, "bob", "cat")
    before = await board(s, ann)
    assert set(before) == {"ann", "bob", "cat"}
    mark = {"type": "mod_action", "action": "mark", "name": "bob", "reason": "a solver's line"}
    assert codes(await s.ask(bob, mark, "mod_done")) == ["not_moderator"]
    done = await s.ask(mia, mark, "mod_done")
    assert (done["moderator"], done["action"], done["name"]) == ("mia", "mark", "bob")
    assert codes(await s.ask(mia, mark, "mod_done")) == ["wrong_status"]
    marked = await board(s, ann)
    # As if races 1 and 3 had never been rated: race 2 alone, from new ratings.
    alone = App(Config(port=0), MemoryEventStore(), FakeClock())
    await rated(alone, 2, "ann", "cat")
    expected = {c.name: c.after for c in alone.ratings.tables["swiss"].races["race2"]}
    assert marked == expected
    card = await s.ask(ann, {"type": "profile", "name": "bob"}, "player_card")
    assert card["marked"] is True
    assert card["ratings"] == []
    unmark = {**mark, "action": "unmark", "reason": "cleared on appeal"}
    assert (await s.ask(mia, unmark, "mod_done"))["action"] == "unmark"
    assert await board(s, ann) == before
    log = await s.ask(mia, {"type": "mod_log"}, "mod_log_rows")
    assert [(r["action"], r["why"]) for r in log["rows"]] == [
        ("unmark", "cleared on appeal"),
        ("mark", "a solver's line"),
    ]


async def test_a_closed_account_is_logged_out_everywhere_until_reopened(served: Served) -> None:
    s = served
    bob, mia = await s.account("bob"), await s.account("Mia")
    made = await s.ask(
        bob, {"type": "create_room", "variant": "swiss", "capacity": 1, "countdown_ms": 0}, "room"
    )
    room = made["room"]["id"]
    assert (await s.ask(bob, {"type": "join", "room": room}, "joined"))["type"] == "joined"
    await bob.send({"type": "start"})
    await bob.expect("started")
    close = {"type": "mod_action", "action": "close", "name": "bob", "reason": "an insult"}
    assert (await s.ask(mia, close, "mod_done"))["action"] == "close"
    await bob.expect("logged_out")
    finished = await bob.expect("finished")  # the race is given up: the seat is not held
    assert [r["status"] for r in finished["ranking"]] == ["resigned"]
    login = {"type": "login", "name": "bob", "password": "pw " * 4}
    guest = await s.connect("guest")
    assert codes(await s.ask(guest, login, "account")) == ["account_closed"]
    again = await Client(s.url, "bob").open()  # the old key logs in nobody: a guest
    s.clients.append(again)
    await again.send({"type": "hello", "protocol": 1, "name": "bob", "key": s.keys["bob"]})
    assert (await again.expect("welcome"))["account"] is None
    reopen = {**close, "action": "reopen", "reason": "name changed by the player"}
    assert (await s.ask(mia, reopen, "mod_done"))["action"] == "reopen"
    assert (await s.ask(guest, login, "account"))["type"] == "account"


async def keyed_welcome(s: Served, name: str) -> dict[str, Any]:
    client = await Client(s.url, name).open()
    s.clients.append(client)
    await client.send({"type": "hello", "protocol": 1, "name": name, "key": s.keys[name]})
    return await client.expect("welcome")


async def test_a_rename_its_refusals_and_the_notice_told_once_to_the_key(served: Served) -> None:
    s = served
    ann, bob, mia = [await s.account(n) for n in ("ann", "bob", "Mia")]
    await s.ask(ann, {"type": "report", "name": "bob", "reason": "name"}, "report_filed")
    rename = {"type": "mod_action", "action": "rename", "name": "bob", "reason": "a slur"}
    assert codes(
        await s.ask(bob, {**rename, "new_name": "Zed"}, "mod_done"),
        await s.ask(mia, rename, "mod_done"),
        await s.ask(mia, {**rename, "new_name": "Ada (bot 3)"}, "mod_done"),
        await s.ask(mia, {**rename, "new_name": "\x1b[31m"}, "mod_done"),
        await s.ask(mia, {**rename, "new_name": "ANN"}, "mod_done"),
        await s.ask(mia, {**rename, "new_name": "bob"}, "mod_done"),
        await s.ask(mia, {**rename, "name": "nobody", "new_name": "Zed"}, "mod_done"),
    ) == [
        "not_moderator",
        "bad_field",  # no new name
        "bad_field",  # a bot's
        "bad_field",  # nothing printable
        "name_taken",
        "bad_field",  # the name it has
        "no_such_account",
    ]
    unchanged = await s.app.accounts.account("bob")
    assert unchanged is not None
    assert unchanged.name == "bob"  # nothing changed
    assert (await s.ask(mia, {"type": "mod_log"}, "mod_log_rows"))["rows"] == []
    done = await s.ask(mia, {**rename, "new_name": "Zed"}, "mod_done")
    assert (done["account"], done["name"], done["new_name"]) == ("bob", "bob", "Zed")
    assert (await s.ask(mia, {"type": "mod_queue"}, "mod_queue_rows"))["rows"] == []
    shown = await s.ask(mia, {"type": "mod_show", "name": "zed"}, "mod_account")
    assert (shown["account"], shown["name"], len(shown["reports"])) == ("bob", "Zed", 1)
    assert [(a["name"], a["new_name"], a["why"]) for a in shown["actions"]] == [
        ("bob", "Zed", "a slur")
    ]
    welcome = await keyed_welcome(s, "bob")  # bob's key, on a connection of its own
    assert (welcome["account"], welcome["notice"]) == (
        "Zed",
        "a moderator renamed your account from bob to Zed: a slur",
    )
    # Noted as told after the welcome went (a crash between tells it again, never not at all).
    async with asyncio.timeout(10):
        while True:  # the store's fold, read again: nothing to wait on but time
            told = await s.app.accounts.account("bob")
            if told is not None and told.notice is None:
                break
            await asyncio.sleep(0.01)
    once = await keyed_welcome(s, "bob")
    assert once["account"] == "Zed"
    assert "notice" not in once  # told once
    card = await s.ask(ann, {"type": "profile", "name": "bob"}, "player_card")
    assert card["name"] == "Zed"  # the old name finds the account, shown under the new
    filed = await s.ask(ann, {"type": "report", "name": "Zed", "reason": "abuse"}, "report_filed")
    assert filed["name"] == "Zed"
    taken = await s.ask(mia, {**rename, "name": "ann", "new_name": "bob"}, "mod_done")
    assert codes(taken) == ["name_taken"]  # bob's old name stays bob's
    back = await s.ask(mia, {**rename, "name": "Zed", "new_name": "Bob"}, "mod_done")
    assert (back["name"], back["new_name"]) == ("Zed", "Bob")  # a name of its own again
