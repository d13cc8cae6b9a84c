"""Servers share nothing but Redis: two processes serve one room, and a killed one is rebuilt."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from shared import apply_move, deal_deck, new_game, public_fold, public_view
from tests.server.causal import violations
from tests.server.wsclient import Client, assert_no_secrets, greedy_moves, winning_seed
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

FAST = ["--rate", "1000", "--burst", "1000"]


def server_on(redis: RedisServer, log: Path, prefix: str, port: int | None = None) -> ServerProcess:
    return ServerProcess(
        redis_url=redis.url,
        port=port,
        log_path=log,
        extra_args=[*FAST, "--redis-prefix", prefix],
    )


async def connected(url: str, name: str) -> Client:
    client = await Client(url, name).open()
    await client.hello()
    return client


async def test_a_player_on_one_process_a_spectator_on_the_other(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    one = server_on(redis_server, tmp_path / "one.log", prefix)
    two = server_on(redis_server, tmp_path / "two.log", prefix)
    start_all([one, two])
    seed = "two-processes"
    deck = deal_deck("quadrennial", seed)
    moves = greedy_moves(new_game("quadrennial", deck=deck))[:30]
    clients: list[Client] = []
    try:
        ann = await connected(one.url, "ann")
        bob = await connected(two.url, "bob")
        far = await connected(two.url, "far")
        near = await connected(one.url, "near")
        clients = [ann, bob, far, near]
        await ann.send(
            {"type": "create_room", "variant": "quadrennial", "seed": seed, "countdown_ms": 0}
        )
        room = (await ann.expect("room"))["room"]["id"]
        await far.send({"type": "list_rooms", "ref": "l"})
        listed = await far.expect("rooms")
        assert room in [r["id"] for r in listed["rooms"]]
        for racer in (ann, bob):
            await racer.send({"type": "join", "room": room})
            await racer.expect("joined")
        for spectator in (far, near):
            await spectator.send({"type": "join", "room": room, "role": "spectator"})
            await spectator.expect("joined")
        await bob.send({"type": "start"})  # on process two; the race starts everywhere
        for client in clients:
            await client.expect("started")
        for version, move in enumerate(moves, start=2):
            assert (await ann.move(move))["version"] == version
        assert (await bob.move(moves[0]))["version"] == 2
        for racer in (ann, bob):
            await racer.send({"type": "resign"})
        finished = [await c.expect("finished") for c in clients]
        assert all(f == finished[0] for f in finished)
        assert finished[0]["ranking"][0]["player"] == ann.session

        state = new_game("quadrennial", deck=deck)
        for move in moves:
            state = apply_move(state, move)
        from shared import resign

        expected = public_view(resign(state))
        for spectator in (far, near):
            # In causal order: the end came after ann's resignation, on either process.
            assert public_fold(spectator.game_events(ann.session)) == expected
        for client in clients:
            assert violations(client.messages) == [], client.name
        assert public_fold(ann.game_events(ann.session)) == expected
        assert_no_secrets(clients, "quadrennial", deck, seed)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        assert one.stop() == 0
        assert two.stop() == 0


async def test_kill_9_mid_race_then_resume_with_tokens(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    seed, win = winning_seed()
    deck = deal_deck("quadrennial", seed)
    server = server_on(fresh_redis, tmp_path / "server.log", "sa:")
    server.start()
    clients: list[Client] = []
    try:
        ann = await connected(server.url, "ann")
        bob = await connected(server.url, "bob")
        solo = await connected(server.url, "solo")
        clients = [ann, bob, solo]
        await ann.send(
            {"type": "create_room", "variant": "quadrennial", "seed": seed, "countdown_ms": 0}
        )
        room = (await ann.expect("room"))["room"]["id"]
        for racer in (ann, bob):
            await racer.send({"type": "join", "room": room})
            await racer.expect("joined")
        await ann.send({"type": "start"})
        # A solo room whose time limit must still end it after the crash: its timer is rebuilt.
        await solo.send(
            {
                "type": "create_room",
                "variant": "swiss",
                "capacity": 1,
                "countdown_ms": 0,
                "time_limit_ms": 4000,
            }
        )
        solo_room = (await solo.expect("room"))["room"]["id"]
        await solo.send({"type": "join", "room": solo_room})
        await solo.expect("joined")
        await solo.send({"type": "start"})
        await solo.expect("started")
        for racer in (ann, bob):
            await racer.expect("started")

        half = len(win) // 2
        for version, move in enumerate(win[:half], start=2):
            assert (await ann.move(move))["version"] == version
        assert (await bob.move(win[0]))["version"] == 2
        # One more move goes out and the server dies at once: acked or not, it is never lost
        # twice or applied twice.
        await ann.send({"type": "move", "id": "last", "move": win[half]})
        server.kill()
        await asyncio.gather(*(c.wait_closed() for c in clients))
        tokens = {c.name: c.token for c in clients}
        sessions = {c.name: c.session for c in clients}

        server.start()
        ann2, bob2, solo2 = (
            Client(server.url, "ann"),
            Client(server.url, "bob"),
            Client(server.url, "solo"),
        )
        clients += [ann2, bob2, solo2]
        for client in (ann2, bob2, solo2):
            await client.open()
            welcome = await client.hello(resume=tokens[client.name])
            assert welcome["resumed"] is True
            assert welcome["session"] == sessions[client.name]
            assert welcome["token"] == tokens[client.name]
        snapshot = await ann2.expect("game", lambda m: m["player"] == sessions["ann"])
        assert snapshot["version"] in (half + 1, half + 2)  # every acked move is there
        room_state = (await ann2.expect("room"))["room"]
        assert room_state["status"] == "racing"

        # Ids are per game, not per connection: an old id is answered with its old version.
        assert (await ann2.move(win[0], 1)) == {"type": "ack", "id": 1, "version": 2}
        ann2.next_id = ann.next_id
        resent = await ann2.move(win[half], "last")
        assert resent == {"type": "ack", "id": "last", "version": half + 2}
        assert (await ann2.move(win[half], "last"))["version"] == half + 2  # not applied twice
        for version, move in enumerate(win[half + 1 :], start=half + 3):
            assert (await ann2.move(move))["version"] == version
        await bob2.send({"type": "resign"})

        finished = await ann2.expect("finished")
        assert finished["reason"] == "all_done"
        assert [r["player"] for r in finished["ranking"]] == [sessions["ann"], sessions["bob"]]
        assert finished["ranking"][0]["status"] == "won"
        assert finished["ranking"][0]["moves"] == len(win)
        assert public_fold(ann2.game_events(sessions["ann"])).won

        solo_finished = await solo2.expect("finished")
        assert solo_finished["reason"] == "time_limit"
        assert solo_finished["room"] == solo_room
        assert_no_secrets([*clients[:3], ann2, bob2], "quadrennial", deck, seed)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()


async def test_a_seat_resumed_on_another_process_is_followed_by_the_first(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A solo race played on A, resumed on B and played on there: a spectator who
    then joins on A sees the game as the stream holds it, not as A last saw it."""
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    one = server_on(redis_server, tmp_path / "one.log", prefix)
    two = server_on(redis_server, tmp_path / "two.log", prefix)
    start_all([one, two])
    seed = "stale-room"
    deck = deal_deck("quadrennial", seed)
    moves = greedy_moves(new_game("quadrennial", deck=deck))[:13]
    clients: list[Client] = []
    try:
        ann = await connected(one.url, "ann")
        clients.append(ann)
        await ann.send(
            {
                "type": "create_room",
                "variant": "quadrennial",
                "seed": seed,
                "capacity": 1,
                "countdown_ms": 0,
            }
        )
        room = (await ann.expect("room"))["room"]["id"]
        await ann.send({"type": "join", "room": room})
        await ann.expect("joined")
        await ann.send({"type": "start"})
        await ann.expect("started")
        for version, move in enumerate(moves[:3], start=2):
            assert (await ann.move(move))["version"] == version
        again = await Client(two.url, "ann").open()
        clients.append(again)
        welcome = await again.hello(resume=ann.token)
        assert welcome["resumed"] is True
        again.next_id = ann.next_id
        for version, move in enumerate(moves[3:], start=5):
            assert (await again.move(move))["version"] == version
        last = 1 + len(moves)
        watcher = await connected(one.url, "watcher")
        clients.append(watcher)
        await watcher.send({"type": "join", "room": room, "role": "spectator"})
        await watcher.expect("joined")
        snapshot = await watcher.expect("game", lambda m: m["player"] == ann.session)
        seen = snapshot["version"]
        if seen < last:  # what is missing must follow at once, not never
            await watcher.expect(
                "game_event",
                lambda m: m["player"] == ann.session and m["version"] == last,
                wait_s=5,
            )
    finally:
        for client in clients:
            await client.close()
        one.stop()
        two.stop()
