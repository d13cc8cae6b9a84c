"""Bots on real server processes: a person and three bots race to the end on both variants,
no bot moves faster than the floor (read from the events' timestamps), and a bot's game goes on
after the process running it is killed (another process on the same Redis takes it over, or the
embedded server after its restart)."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from pathlib import Path
from typing import Any

import msgpack
import pytest

from shared import public_fold
from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

pytestmark = pytest.mark.e2e

FLOOR_MS = 40
BOTS = ["--bot-floor-ms", str(FLOOR_MS), "--bot-think-scale", "0.01", "--rate", "1000"]
SLOW_BOT = ["--bot-floor-ms", "150"]  # a bot whose game lasts long enough to be killed mid-way
RACE_S = 120.0  # the longest a bot race may take here (bots at this pace take seconds)


async def connected(url: str, name: str) -> Client:
    client = await Client(url, name).open()
    await client.hello()
    return client


def bots_of(room: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in room["players"] if p["bot"]]


async def bot_games(client: Client, room: str, players: list[str]) -> dict[str, list[dict]]:
    """Each bot's game events, as a spectator of the finished race is sent them."""
    await client.send({"type": "watch", "room": room})
    games = {}
    for player in players:
        games[player] = (await client.expect("game", lambda m, p=player: m["player"] == p))[
            "events"
        ]
    return games


def assert_floor(events: list[dict[str, Any]]) -> None:
    times = [e["at"] for e in events]
    assert len(times) > 3
    assert min(b - a for a, b in itertools.pairwise(times)) >= FLOOR_MS


@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
@pytest.mark.long
async def test_a_person_and_three_bots_race_to_the_end(variant: str, tmp_path: Path) -> None:
    server = ServerProcess(log_path=tmp_path / "server.log", extra_args=BOTS)
    server.start()
    clients: list[Client] = []
    try:
        ann = await connected(server.url, "ann")
        clients.append(ann)
        await ann.send(
            {
                "type": "create_room",
                "variant": variant,
                "capacity": 4,
                "countdown_ms": 0,
                "bots": 3,
                "bot_level": 4,
            }
        )
        created = (await ann.expect("room"))["room"]
        assert [p["bot"] for p in created["players"]] == [4, 4, 4]
        assert not created["rated"]
        await ann.send({"type": "join", "room": created["id"]})
        await ann.expect("joined")
        await ann.send({"type": "start"})
        await ann.expect("started")
        await ann.expect("game_event", lambda m: m["player"] == ann.session)
        await ann.send({"type": "resign"})
        finished = await ann.expect("finished", wait_s=RACE_S)
        ranking = finished["ranking"]
        assert sorted(r["bot"] or 0 for r in ranking) == [0, 4, 4, 4]
        assert all(r["status"] in ("won", "over", "resigned") for r in ranking)
        bots = [r["player"] for r in ranking if r["bot"]]
        games = await bot_games(ann, created["id"], bots)
        for events in games.values():
            assert_floor(events)
        await ann.send({"type": "list_rooms"})
        (listed,) = [r for r in (await ann.expect("rooms"))["rooms"] if r["id"] == created["id"]]
        assert sorted(b or 0 for b in listed["bots"]) == [0, 4, 4, 4]
        assert not listed["rated"]
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()


async def test_bad_bot_requests_get_their_codes(tmp_path: Path) -> None:
    server = ServerProcess(log_path=tmp_path / "server.log", extra_args=BOTS)
    server.start()
    clients: list[Client] = []
    try:
        ann = await connected(server.url, "ann")
        bob = await connected(server.url, "bob")
        clients += [ann, bob]
        for bad, code in (
            ({"bots": 2, "capacity": 2}, "too_many_bots"),
            ({"bots": 1, "bot_level": 6}, "bad_field"),
            ({"bots": -1}, "bad_field"),
        ):
            raw = {"type": "create_room", "variant": "swiss", **bad, "ref": code}
            await ann.send_raw(msgpack.packb(raw))
            assert (await ann.expect("error", lambda m, c=code: m["ref"] == c))["code"] == code
        await ann.send({"type": "create_room", "variant": "swiss", "capacity": 2})
        room = (await ann.expect("room"))["room"]["id"]
        await ann.send({"type": "add_bot", "ref": "unseated"})
        assert (await ann.expect("error"))["code"] == "not_a_player"
        await ann.send({"type": "join", "room": room})
        await ann.expect("joined")
        await bob.send({"type": "join", "room": room})
        await bob.expect("joined")
        await bob.send({"type": "add_bot", "ref": "b"})
        assert (await bob.expect("error"))["code"] == "not_allowed"  # not the creator
        await bob.send({"type": "leave"})
        await bob.expect("left")
        await ann.send_raw(msgpack.packb({"type": "add_bot", "level": 0, "ref": "zero"}))
        assert (await ann.expect("error"))["code"] == "bad_field"
        await ann.send({"type": "add_bot", "level": 2, "ref": "ok"})
        state = (await ann.expect("room", lambda m: m.get("ref") == "ok"))["room"]
        assert [p["bot"] for p in state["players"]] == [None, 2]
        await ann.send({"type": "add_bot", "ref": "more"})
        assert (await ann.expect("error"))["code"] in ("room_full", "too_many_bots")
        await ann.send({"type": "profile", "name": bots_of(state)[0]["name"], "ref": "p"})
        card = await ann.expect("player_card")
        assert card["bot"] == 2
        assert card["ratings"] == []
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()


async def race_with_a_slow_bot(url: str) -> tuple[Client, str, str, int]:
    """A person's race against one bot that takes long enough to be killed mid-game."""
    ann = await connected(url, "ann")
    await ann.send(
        {
            "type": "create_room",
            "variant": "quadrennial",
            "capacity": 2,
            "countdown_ms": 0,
            "bots": 1,
            "bot_level": 1,
        }
    )
    room = (await ann.expect("room"))["room"]
    await ann.send({"type": "join", "room": room["id"]})
    await ann.expect("joined")
    await ann.send({"type": "start"})
    await ann.expect("started")
    (bot,) = bots_of(room)
    # A few of the bot's moves first: its game is under way when its process dies.
    seen = await ann.expect("progress", lambda m: m["player"] == bot["player"] and m["moves"] >= 3)
    return ann, room["id"], bot["player"], seen["moves"]


async def finish_and_check(url: str, room: str, bot: str, token: str, moved: int) -> None:
    """The person comes back and resigns; the bot plays on to the end, its game one line of
    events (legal, never played twice), its moves after the kill at the floor's pace too."""
    back = await Client(url, "ann").open()
    try:
        await back.hello(resume=token)
        await back.send({"type": "resign"})
        finished = await back.expect("finished", wait_s=RACE_S)
        (ranked,) = [r for r in finished["ranking"] if r["player"] == bot]
        assert ranked["status"] in ("won", "over", "resigned")
        games = await bot_games(back, room, [bot])
        events = games[bot]
        assert len(events) > 1 + moved + 1  # its start, its moves seen before, then more
        assert_floor(events)
        assert not any(e.get("reason") == "abandoned" for e in events)
        view = public_fold(events)  # every move legal, in one line
        assert view.moves_made == sum(1 for e in events if e["type"] == "moved")
    finally:
        await back.close()


@pytest.mark.long
async def test_a_bot_goes_on_on_another_process_after_a_kill(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    args = [*BOTS, "--redis-prefix", prefix, "--heartbeat-s", "1"]
    # The bot is slow where it starts, so that it is killed mid-game; the process that takes it
    # over plays it out at the suite's floor, which every move is checked against.
    one = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "one.log",
        extra_args=[*args, *SLOW_BOT],
    )
    two = ServerProcess(redis_url=redis_server.url, log_path=tmp_path / "two.log", extra_args=args)
    start_all([one, two])
    try:
        ann, room, bot, moved = await race_with_a_slow_bot(one.url)
        token = ann.token
        one.kill()
        await ann.close()
        # Process two sees one silent, takes the bot over, and the game goes on there.
        watcher = await connected(two.url, "watcher")
        try:
            await watcher.send({"type": "join", "room": room, "role": "spectator"})
            state = (await watcher.expect("room"))["room"]
            (seat,) = bots_of(state)
            # Progress, not the game's events: fair spectating holds those back until the
            # person (away, still playing) has turned the same cards.
            await watcher.expect(
                "progress",
                lambda m: m["player"] == bot and m["moves"] > seat["moves"] + 2,
                wait_s=30,
            )
        finally:
            await watcher.close()
        await finish_and_check(two.url, room, bot, token, moved)
    finally:
        one.stop()
        two.stop()
    # Process two took the bot over (a claim wins at the room's version: never two players).
    assert '"bot_claimed"' in (tmp_path / "two.log").read_text()


@pytest.mark.long
async def test_a_bot_goes_on_after_the_embedded_server_restarts(tmp_path: Path) -> None:
    args = [*BOTS, "--heartbeat-s", "1"]
    server = ServerProcess(
        data_dir=tmp_path / "data",
        log_path=tmp_path / "server.log",
        extra_args=[*args, *SLOW_BOT],
    )
    server.start()
    try:
        ann, room, bot, moved = await race_with_a_slow_bot(server.url)
        token = ann.token
        server.kill()
        await ann.close()
        server.extra_args = args  # restarted, it plays the bot out at the suite's floor
        server.start()
        await finish_and_check(server.url, room, bot, token, moved)
    finally:
        server.stop()
