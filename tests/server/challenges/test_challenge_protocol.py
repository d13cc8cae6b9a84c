"""Challenges over the protocol, on a real server (its sockets, in this process) whose clock the
test moves: two accounts play one challenge hours apart and neither sees the other's game, nor
the standings, before finishing; then the challenge settles, its seed checks against the
commitment, and both are rated. Late, second, uninvited and excess attempts are refused with
their codes, and creations per account are limited."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest

from server.app import App
from server.archive.sqlite import SqliteArchive
from server.challenges.domain.challenge import OPEN_INDEX, challenge_stream
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore
from shared import deal_deck
from shared.protocol import commitment_ok
from tests.server.wsclient import Client

# The games these tests finish are not theirs to analyse: the analysis's own tests do.
NO_ANALYSIS = {"swiss": 0, "quadrennial": 0}

HOUR = 3_600_000
DAY = 24 * HOUR


@dataclass
class Served:
    app: App
    clock: FakeClock
    url: str
    clients: list[Client]
    keys: dict[str, str]

    async def ask(self, client: Client, msg: dict[str, Any], answer: str) -> dict[str, Any]:
        """The answer to ``msg`` (or its error), by its ref."""
        ref = uuid.uuid4().hex[:8]
        await client.send({**msg, "ref": ref})
        async with asyncio.timeout(20):
            while True:
                for reply in list(client.unread):
                    if reply.get("ref") == ref and reply["type"] in (answer, "error"):
                        client.unread.remove(reply)
                        return reply
                client.arrived.clear()
                await client.arrived.wait()

    async def connect(self, name: str, key: str | None = None) -> Client:
        client = await Client(self.url, name).open()
        self.clients.append(client)
        hello: dict[str, Any] = {"type": "hello", "protocol": 1, "name": name}
        if key is not None:
            hello["key"] = key
        await client.send(hello)
        await client.expect("welcome")
        return client

    async def account(self, name: str) -> Client:
        """A connection logged in as a new account ``name``."""
        first = await self.connect(name)
        made = await self.ask(
            first, {"type": "register", "name": name, "password": "pw " * 4}, "account"
        )
        assert made["type"] == "account", made
        await first.close()
        self.keys[name] = made["key"]
        return await self.connect(name, made["key"])


@contextlib.asynccontextmanager
async def serving(app: App, clock: FakeClock) -> AsyncIterator[Served]:
    """``app`` listening on a free port; after, the connections the test opened are closed and
    the app stopped."""
    server = await app.start()
    port = next(iter(server.sockets)).getsockname()[1]
    done = Served(app, clock, f"ws://127.0.0.1:{port}/", [], {})
    try:
        yield done
    finally:
        for client in done.clients:
            await client.close()
        await app.stop()


@pytest.fixture(params=["store", "archive"])
async def served(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Served]:
    """A server on the memory store, alone or with an archive (SQLite) that settled
    challenges (and finished rooms) leave the store for."""
    clock = FakeClock()
    config = Config(
        port=0,
        rate=1000,
        burst=1000,
        challenges_per_account=3,
        challenge_sweep_s=60,
        analysis_max_nodes=NO_ANALYSIS,
    )
    archive = SqliteArchive(tmp_path / "archive.sqlite") if request.param == "archive" else None
    async with serving(App(config, MemoryEventStore(), clock, archive), clock) as done:
        yield done


async def play_out(s: Served, client: Client, code: str) -> dict[str, Any]:
    """Play the challenge: a few deals from the stock, then resign; its ``challenge_started``."""
    started = await s.ask(
        client, {"type": "challenge_play", "challenge": code}, "challenge_started"
    )
    assert started["type"] == "challenge_started", started
    await client.expect("started")
    for _ in range(3):
        await client.move("d")
    hint = await s.ask(client, {"type": "hint"}, "suggestion")
    assert hint["code"] == "not_allowed"  # compared and rated: the solver helps nobody
    await client.send({"type": "resign"})
    await client.expect("finished", lambda m: m["room"] == started["room"])
    return started


async def export(s: Served, room: str, player: str) -> tuple[int, str]:
    """GET /export/ROOM/PLAYER: its status and text."""
    url = s.url.replace("ws://", "http://").rstrip("/") + f"/export/{room}/{player}"

    def get() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return int(answer.status), answer.read().decode()
        except urllib.error.HTTPError as refused:
            return int(refused.code), refused.read().decode()

    return await asyncio.to_thread(get)


def card_bytes(deck: list[str]) -> list[bytes]:
    return [msgpack.packb(card) for card in deck]


async def test_two_accounts_hours_apart_see_nothing_of_each_other_before_finishing(
    served: Served,
) -> None:
    s = served
    ann, bob, eve = await s.account("ann"), await s.account("bob"), await s.account("eve")
    made = await s.ask(
        ann,
        {"type": "challenge_create", "variant": "quadrennial", "to": ["Bob"]},
        "challenge",
    )
    assert made["type"] == "challenge", made
    code = made["code"]
    assert made["invited"] == ["bob"]
    assert made["closes_at"] == s.clock.now_ms() + 7 * DAY
    listed = await s.ask(bob, {"type": "challenges"}, "challenge_list")
    assert [c["code"] for c in listed["challenges"]] == [code]
    assert listed["challenges"][0]["may_play"] is True

    anns = await play_out(s, ann, code)
    ann_room = anns["room"]
    assert anns["commitment"] == made["commitment"]
    finished = next(m for m in ann.messages if m["type"] == "finished")
    assert finished["seed"] is None  # not before the challenge is over

    s.clock.advance(5 * HOUR)  # bob plays the same deal hours later
    before = await s.ask(bob, {"type": "challenge_show", "challenge": code}, "challenge")
    assert before["visible"] is False
    assert (before["rows"], before["seed"], before["players"]) == ([], None, 1)
    refused = await s.ask(bob, {"type": "join", "room": ann_room, "role": "spectator"}, "joined")
    assert refused["code"] == "not_allowed", refused
    refused = await s.ask(bob, {"type": "watch", "room": ann_room}, "game")
    assert refused["code"] == "not_allowed"
    taken = await s.ask(bob, {"type": "join", "room": ann_room}, "joined")
    assert taken["code"] == "wrong_status"  # no seat in a finished room (nor in a live one)
    rooms = await s.ask(bob, {"type": "list_rooms"}, "rooms")
    assert ann_room not in {r["id"] for r in rooms["rooms"]}
    status, text = await export(s, ann_room, "ann")
    assert (status, text.split(":")[0]) == (403, "not_allowed")  # names nobody: waits for the end

    bobs = await play_out(s, bob, code)
    assert bobs["commitment"] == made["commitment"]
    bob_done = len(bob.messages)

    # Both invited played: the challenge settles (an attempt's end wakes it), and is shown.
    async with asyncio.timeout(20):
        while True:
            after = await s.ask(eve, {"type": "challenge_show", "challenge": code}, "challenge")
            if after["status"] == "settled":
                break
            await asyncio.sleep(0.01)
    assert after["settled_reason"] == "all_played"
    if s.app.archive is not None:  # archived: the store holds it no more, readers read it
        assert await s.app.store.read(challenge_stream(code)) == []
        assert await s.app.archive.get(code) is not None
    assert commitment_ok(after["seed"], after["salt"], made["commitment"])
    assert {r["room"] for r in after["rows"]} == {ann_room, bobs["room"]}
    joined = await s.ask(eve, {"type": "join", "room": ann_room, "role": "spectator"}, "joined")
    assert joined["type"] == "joined"  # a replay now
    status, text = await export(s, ann_room, "ann")
    assert status == 200
    assert after["seed"] in text  # the record names the deal, public now

    profile = await s.ask(bob, {"type": "profile"}, "player_card")
    assert [r["room"] for r in profile["recent"]] == [code]  # rated against ann
    assert [c["code"] for c in profile["challenges"]] == [code]

    # Nothing of ann's game reached bob before he finished, but his own game of the same deal.
    deck = card_bytes(deal_deck("quadrennial", after["seed"]))
    for msg in bob.messages[:bob_done]:
        assert msg.get("room") != ann_room, f"bob got {msg['type']} of ann's room"
    for msg in eve.messages:
        if msg["type"] == "joined":
            break
        raw = msgpack.packb(msg)
        assert not any(card in raw for card in deck), f"eve got a card in {msg['type']}"


async def test_bad_attempts_get_their_codes(served: Served) -> None:
    s = served
    ann, bob, cy = await s.account("ann"), await s.account("bob"), await s.account("cy")
    guest = await s.connect("guest")
    to_bob = (
        await s.ask(ann, {"type": "challenge_create", "to": ["bob"], "window_days": 1}, "challenge")
    )["code"]
    open_two = (await s.ask(ann, {"type": "challenge_create", "capacity": 2}, "challenge"))["code"]

    async def play(client: Client, code: str) -> dict[str, Any]:
        return await s.ask(
            client, {"type": "challenge_play", "challenge": code}, "challenge_started"
        )

    assert (await play(guest, to_bob))["code"] == "not_logged_in"
    assert (await play(cy, to_bob))["code"] == "not_invited"
    assert (await play(cy, "nosuchcode"))["code"] == "no_such_challenge"
    unknown = await s.ask(cy, {"type": "challenge_show", "challenge": "zzzzzzzzzz"}, "challenge")
    assert unknown["code"] == "no_such_challenge"
    no_one = await s.ask(ann, {"type": "challenge_create", "to": ["nobody"]}, "challenge")
    assert no_one["code"] == "no_such_account"

    await play_out(s, ann, open_two)
    bobs = await play(bob, open_two)  # the second and last place; bob is still playing
    assert bobs["type"] == "challenge_started"
    assert (await play(cy, open_two))["code"] == "challenge_full"
    assert (await s.ask(ann, {"type": "leave"}, "left"))["type"] == "left"
    again = await s.ask(ann, {"type": "challenge_play", "challenge": open_two}, "challenge_started")
    assert again["code"] == "challenge_played"

    s.clock.advance(DAY)  # the one-day window closes before bob tried: too late now
    late = await s.ask(bob, {"type": "challenge_show", "challenge": to_bob}, "challenge")
    assert late["may_play"] is False
    bob_again = await s.connect("bob", s.keys["bob"])  # his other connection is in a room
    assert (await play(bob_again, to_bob))["code"] == "challenge_closed"

    # The sweep settles the closed challenge, unasked (nobody played it: no standings).
    for _ in range(2000):
        if await s.app.store.index_get(OPEN_INDEX, to_bob) is None:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the sweep never settled the closed challenge")
    shown = await s.ask(cy, {"type": "challenge_show", "challenge": to_bob}, "challenge")
    assert (shown["status"], shown["settled_reason"]) == ("settled", "window_closed")
    assert shown["rows"] == []
    assert commitment_ok(shown["seed"], shown["salt"], shown["commitment"])


async def test_creations_are_limited_per_account(served: Served) -> None:
    s = served
    ann = await s.account("ann")
    codes = []
    for _ in range(3):
        made = await s.ask(ann, {"type": "challenge_create"}, "challenge")
        codes.append(made["code"])
    spam = await s.ask(ann, {"type": "challenge_create"}, "challenge")
    assert spam["code"] == "rate_limited"
    mine = await s.ask(ann, {"type": "challenges"}, "challenge_list")
    assert sorted(c["code"] for c in mine["challenges"]) == sorted(codes)
