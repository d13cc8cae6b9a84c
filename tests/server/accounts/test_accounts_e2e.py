"""Accounts and ratings through real server processes on a real Redis Cluster."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
from redis.asyncio.cluster import RedisCluster

from server.accounts.domain.ratings import ratings_stream
from server.accounts.services.ratings import PENDING_INDEX, leaderboard_index
from server.race.domain.events import encode
from server.race.domain.model import room_stream
from server.store import RedisEventStore
from tests.server.accounts.rooms import room_events
from tests.server.wsclient import Client
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.server_process import ServerProcess, start_all

FAST = ["--rate", "1000", "--burst", "1000"]


def server(cluster: LocalRedisCluster, log: Path, prefix: str, *extra: str) -> ServerProcess:
    return ServerProcess(
        redis_url=cluster.all_url,
        log_path=log,
        extra_args=[*FAST, "--redis-cluster", "--redis-prefix", prefix, *extra],
    )


@contextlib.asynccontextmanager
async def processes(
    cluster: LocalRedisCluster, tmp_path: Path, prefix: str, count: int, *extra: str
) -> AsyncIterator[tuple[list[ServerProcess], list[Client]]]:
    """``count`` server processes on one key prefix, and a list for the test's clients: all
    closed and stopped at the end, however the test ends."""
    started = [server(cluster, tmp_path / f"{i}.log", prefix, *extra) for i in range(count)]
    clients: list[Client] = []
    try:
        start_all(started)
        yield started, clients
    finally:
        for client in clients:
            await client.close()
        for process in started:
            process.stop()


async def hello(url: str, name: str = "guest", key: str | None = None) -> tuple[Client, Any]:
    client = await Client(url, name).open()
    msg: dict[str, Any] = {"type": "hello", "protocol": 1, "name": name}
    if key is not None:
        msg["key"] = key
    await client.send(msg)
    return client, await client.expect("welcome")


async def ask(client: Client, msg: dict[str, Any], answer: str) -> dict[str, Any]:
    ref = uuid.uuid4().hex[:8]
    await client.send({**msg, "ref": ref})
    return await client.expect(answer, lambda m: m.get("ref") == ref)


async def error_of(client: Client, msg: dict[str, Any]) -> dict[str, Any]:
    return await ask(client, msg, "error")


async def scan(cluster: LocalRedisCluster, prefix: str) -> bytes:
    """Everything the store holds under ``prefix``, as raw bytes."""
    raw = RedisCluster.from_url(cluster.url, protocol=2)
    seen: list[bytes] = []
    try:
        async for key in raw.scan_iter(match=f"{prefix}*", target_nodes=RedisCluster.PRIMARIES):
            kind = (await raw.type(key)).decode()
            seen.append(key)
            if kind == "stream":
                for _, fields in await raw.xrange(key):
                    seen.extend(k + v for k, v in fields.items())
            elif kind == "zset":
                seen.extend(m for m, _ in await raw.zrange(key, 0, -1, withscores=True))
            elif kind == "hash":
                seen.extend(k + v for k, v in (await raw.hgetall(key)).items())
            elif kind == "string":
                seen.append(await raw.get(key) or b"")
            elif kind == "set":
                seen.extend(await raw.smembers(key))
    finally:
        await raw.aclose()
    return b"\n".join(seen)


async def test_register_login_logout_across_processes_and_no_secret_stored(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    password = "correct horse battery"
    limit = ("--auth-attempts-per-name", "4")
    async with processes(redis_cluster, tmp_path, prefix, 2, *limit) as ((one, two), clients):
        a, _ = await hello(one.url)
        b, _ = await hello(two.url)
        clients += [a, b]
        first = await ask(a, {"type": "register", "name": "Ann", "password": password}, "account")
        assert first["name"] == "Ann"
        assert len(first["key"]) >= 43  # 32 bytes, base64
        taken = await error_of(b, {"type": "register", "name": "ANN", "password": password})
        assert taken["code"] == "name_taken"
        short = await error_of(b, {"type": "register", "name": "Bo", "password": "short"})
        assert short["code"] == "bad_field"

        # The key works on the other process.
        c, welcome = await hello(two.url, key=first["key"])
        clients.append(c)
        assert welcome["account"] == "Ann"

        # One answer for a wrong password and an unknown name.
        wrong = await error_of(b, {"type": "login", "name": "ann", "password": "wrong password"})
        unknown = await error_of(b, {"type": "login", "name": "nobody", "password": password})
        assert (wrong["code"], wrong["reason"]) == (unknown["code"], unknown["reason"])
        assert wrong["code"] == "bad_credentials"

        second = await ask(a, {"type": "login", "name": "aNN", "password": password}, "account")
        assert second["key"] != first["key"]

        # Logout on process two revokes the first key everywhere; the second stays good.
        await ask(c, {"type": "logout"}, "logged_out")
        d, welcome = await hello(one.url, key=first["key"])
        clients.append(d)
        assert welcome["account"] is None
        e, welcome = await hello(one.url, key=second["key"])
        clients.append(e)
        assert welcome["account"] == "Ann"
        assert (await error_of(d, {"type": "logout"}))["code"] == "not_logged_in"

        # The limit per name holds across processes: 4 attempts, then rate_limited.
        codes = []
        for attempt in range(6):
            client = a if attempt % 2 else b
            answer = await error_of(client, {"type": "login", "name": "zed", "password": "x" * 8})
            codes.append(answer["code"])
        assert codes == ["bad_credentials"] * 4 + ["rate_limited"] * 2

        stored = await scan(redis_cluster, prefix)
        assert b"argon2id" in stored  # the scan does see the accounts
        for secret in (password, first["key"], second["key"]):
            assert secret.encode() not in stored


async def test_a_new_password_on_one_process_ends_the_other_logins_on_every_process(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    old, new = "old horse battery", "new staple battery"
    async with processes(redis_cluster, tmp_path, prefix, 2) as ((one, two), clients):
        a, _ = await hello(one.url)
        b, _ = await hello(two.url)
        clients += [a, b]
        await ask(a, {"type": "register", "name": "Ann", "password": old}, "account")
        elsewhere = await ask(b, {"type": "login", "name": "ann", "password": old}, "account")
        change = {"type": "change_password", "password": old, "new_password": new}

        guest, _ = await hello(one.url)
        clients.append(guest)
        assert (await error_of(guest, change))["code"] == "not_logged_in"
        wrong = await error_of(a, {**change, "password": "not the password"})
        assert wrong["code"] == "bad_credentials"
        short = await error_of(a, {**change, "new_password": "short"})
        assert short["code"] == "bad_field"
        assert "new_password" in short["reason"]

        assert (await ask(a, change, "password_changed"))["revoked"] == 1
        # The other login ended, on the other process too: its open connection is told at once
        # and is a guest from then on; the key logs nobody in any more.
        told = await b.expect("logged_out")
        assert "ref" not in told  # news, not an answer
        assert (await error_of(b, {"type": "profile"}))["code"] == "not_logged_in"
        c, welcome = await hello(two.url, key=elsewhere["key"])
        clients.append(c)
        assert welcome["account"] is None
        refused = await error_of(c, {"type": "login", "name": "ann", "password": old})
        assert refused["code"] == "bad_credentials"
        fresh = await ask(c, {"type": "login", "name": "ann", "password": new}, "account")

        # A logout ends the same key's other connections too, and only its own answer reaches
        # the connection that sent it.
        d, welcome = await hello(one.url, key=fresh["key"])
        clients.append(d)
        assert welcome["account"] == "Ann"
        await ask(c, {"type": "logout"}, "logged_out")
        await d.expect("logged_out")
        await ask(a, {"type": "logout"}, "logged_out")  # the key that changed it stayed good
        await asyncio.sleep(0.3)
        await ask(c, {"type": "ping"}, "pong")
        await ask(a, {"type": "ping"}, "pong")
        for client in (a, c):
            assert [m["type"] for m in client.messages].count("logged_out") == 1

        stored = await scan(redis_cluster, prefix)
        assert b"password_changed" in stored
        for secret in (old, new, elsewhere["key"]):
            assert secret.encode() not in stored


async def register(url: str, name: str) -> tuple[Client, str]:
    client, _ = await hello(url)
    answer = await ask(
        client, {"type": "register", "name": name, "password": "pw-" + name * 3}, "account"
    )
    return client, answer["key"]


async def race(creator: Client, racers: list[Client]) -> str:
    """A rated race (secret seed) where everyone resigns, in join order: places follow it."""
    room = (
        await ask(
            creator,
            {"type": "create_room", "variant": "swiss", "capacity": 4, "countdown_ms": 0},
            "room",
        )
    )["room"]
    assert room["rated"] is True
    for racer in racers:
        await ask(racer, {"type": "join", "room": room["id"]}, "joined")
    await racers[0].send({"type": "start"})
    for racer in racers:
        await racer.expect("started")
    for racer in racers:
        await racer.send({"type": "resign"})
    for racer in racers:
        await racer.expect("finished")
    return str(room["id"])


async def rated_events(cluster: LocalRedisCluster, prefix: str) -> list[dict[str, Any]]:
    store = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    try:
        return [e.data for e in await store.read(ratings_stream("swiss"))]
    finally:
        await store.aclose()


async def leaderboard_rows(cluster: LocalRedisCluster, prefix: str) -> list[Any]:
    store = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    try:
        return [
            (e.member, e.score, msgpack.unpackb(e.value))
            for e in await store.index_range(leaderboard_index("swiss"))
        ]
    finally:
        await store.aclose()


async def renamed_and_raced_again(
    one: str, two: str, moderator: Client, bob_key: str, clients: list[Client], room: str
) -> None:
    """A moderator renames ann on one process; on the other she logs in with the new name and
    her old password and is told; the leaderboard and her profile show the new name, the old
    one is nobody else's, and her next race is rated on her own rating (her seat's key)."""
    rename = {"type": "mod_action", "action": "rename", "name": "ann", "reason": "an insult"}
    done = await ask(moderator, {**rename, "new_name": "Zed"}, "mod_done")
    assert (done["account"], done["name"], done["new_name"]) == ("ann", "ann", "Zed")
    zed, _ = await hello(two)
    guest, _ = await hello(one)
    bob, welcome = await hello(one, "bob", bob_key)
    clients += [zed, guest, bob]
    assert "notice" not in welcome  # told only to the account renamed
    password = "pw-" + "ann" * 3
    login = await ask(zed, {"type": "login", "name": "zed", "password": password}, "account")
    assert (login["name"], login["notice"]) == (
        "Zed",
        "a moderator renamed your account from ann to Zed: an insult",
    )
    again = await ask(guest, {"type": "login", "name": "ANN", "password": password}, "account")
    assert again["name"] == "Zed"  # the old name still finds the account: nobody else's
    assert "notice" not in again  # told once
    taken = await error_of(guest, {"type": "register", "name": "Ann", "password": password})
    assert taken["code"] == "name_taken"
    board = await ask(bob, {"type": "leaderboard", "variant": "swiss"}, "standings")
    assert [r["name"] for r in board["rows"]] == ["Zed", "bob", "cy"]
    card = await ask(bob, {"type": "profile", "name": "Zed"}, "player_card")
    assert (card["name"], card["recent"][0]["room"]) == ("Zed", room)
    second = await race(zed, [zed, bob])
    changes = await ask(zed, {"type": "race_ratings", "room": second}, "rating_changes")
    assert [(c["account"], c["name"]) for c in changes["changes"]] == [
        ("ann", "Zed"),
        ("bob", "bob"),
    ]
    card = await ask(bob, {"type": "profile", "name": "Zed"}, "player_card")
    assert card["ratings"][0]["games"] == 2  # the same rating, under the new name


async def test_a_rated_race_on_two_processes_is_rated_once_and_rebuilds_the_same(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    moderator = ("--moderators", "cy")
    async with processes(redis_cluster, tmp_path, prefix, 2, *moderator) as ((one, two), clients):
        ann, _ = await register(one.url, "ann")
        bob, bob_key = await register(two.url, "bob")
        cy, _ = await register(one.url, "cy")
        clients += [ann, bob, cy]
        room = await race(ann, clients)
        answers = [
            await ask(c, {"type": "race_ratings", "room": room}, "rating_changes") for c in clients
        ]
        assert answers[0]["changes"] == answers[1]["changes"] == answers[2]["changes"]
        changes = answers[0]["changes"]
        assert [c["name"] for c in changes] == ["ann", "bob", "cy"]
        deltas = [c["delta"] for c in changes]
        assert deltas[0] > deltas[1] > deltas[2]
        assert deltas[0] > 0 > deltas[2]
        events = await rated_events(redis_cluster, prefix)
        assert [e["room"] for e in events] == [room]  # both processes saw it finish: once

        board = await ask(bob, {"type": "leaderboard", "variant": "swiss", "top": 2}, "standings")
        assert [r["name"] for r in board["rows"]] == ["ann", "bob"]
        assert board["me"]["name"] == "bob"
        assert board["players"] == 3
        card = await ask(cy, {"type": "profile", "name": "ANN"}, "player_card")
        assert card["ratings"][0]["rank"] == 1
        assert card["recent"][0]["room"] == room
        await renamed_and_raced_again(one.url, two.url, cy, bob_key, clients, room)

        live = await leaderboard_rows(redis_cluster, prefix)
        rebuild = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "ratings",
            "--rebuild",
            "--redis-url",
            redis_cluster.all_url,
            "--redis-cluster",
            "--redis-prefix",
            prefix,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(rebuild.communicate(), 60)
        assert rebuild.returncode == 0
        assert "swiss: 3 rated races folded" in out.decode()  # two races and the rename
        assert await leaderboard_rows(redis_cluster, prefix) == live


async def test_a_process_killed_right_after_the_finish_rates_the_race_once_on_restart(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    one = server(redis_cluster, tmp_path / "one.log", prefix)
    one.start()
    clients: list[Client] = []
    try:
        ann, _ = await register(one.url, "ann")
        bob, _ = await register(one.url, "bob")
        clients = [ann, bob]
        room = (
            await ask(ann, {"type": "create_room", "variant": "swiss", "countdown_ms": 0}, "room")
        )["room"]["id"]
        for racer in clients:
            await ask(racer, {"type": "join", "room": room}, "joined")
        await ann.send({"type": "start"})
        await ann.expect("started")
        await bob.expect("started")
        await ann.send({"type": "resign"})
        await bob.send({"type": "resign"})
        await ann.expect("finished")
        one.kill()  # SIGKILL as soon as the finish is out: the rating may not be made yet
        for client in clients:
            await client.close()
        one.start()
        two = server(redis_cluster, tmp_path / "two.log", prefix)
        two.start()
        try:
            for _ in range(100):
                if await rated_events(redis_cluster, prefix):
                    break
                await asyncio.sleep(0.1)
            watcher, _ = await hello(two.url)
            clients = [watcher]
            answer = await ask(watcher, {"type": "race_ratings", "room": room}, "rating_changes")
            assert [c["name"] for c in answer["changes"]] == ["ann", "bob"]
            assert [e["room"] for e in await rated_events(redis_cluster, prefix)] == [room]
        finally:
            two.stop()
    finally:
        for client in clients:
            await client.close()
        one.stop()


async def test_a_finish_nobody_rated_is_rated_once_by_the_processes_that_start_next(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    """What a process killed between appending ``race_finished`` and rating it leaves: the
    room's events and the pending entry, no ``race_rated``. Two processes start at once; both
    sweep; the race is rated once."""
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    store = RedisEventStore(redis_cluster.url, cluster=True, prefix=prefix)
    racers = [("Ann", "Ann"), ("Guest", None), ("Bob", "Bob"), ("Cy", "Cy")]
    events = room_events("left1", racers, at=int(time.time() * 1000) - 60_000)
    try:
        await store.append(room_stream("left1"), [encode(e) for e in events], expected_version=0)
        await store.index_put(PENDING_INDEX, "left1", events[0].at)
    finally:
        await store.aclose()
    async with processes(redis_cluster, tmp_path, prefix, 2) as ((one, two), clients):
        for _ in range(100):
            if await rated_events(redis_cluster, prefix):
                break
            await asyncio.sleep(0.1)
        answers = []
        for url in (one.url, two.url):
            client, _ = await hello(url)
            clients.append(client)
            answers.append(
                await ask(client, {"type": "race_ratings", "room": "left1"}, "rating_changes")
            )
        assert answers[0] == {**answers[1], "ref": answers[0]["ref"]}
        assert [(c["name"], c["place"]) for c in answers[0]["changes"]] == [
            ("Ann", 1),
            ("Bob", 3),
            ("Cy", 4),
        ]
        assert [e["room"] for e in await rated_events(redis_cluster, prefix)] == ["left1"]


async def test_a_race_ended_by_the_time_limit_is_rated(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    async with processes(redis_cluster, tmp_path, prefix, 1) as ((one,), clients):
        ann, _ = await register(one.url, "ann")
        bob, _ = await register(one.url, "bob")
        clients += [ann, bob]
        create = {"type": "create_room", "variant": "swiss", "countdown_ms": 0}
        room = (await ask(ann, {**create, "time_limit_ms": 1500}, "room"))["room"]["id"]
        for racer in clients:
            await ask(racer, {"type": "join", "room": room}, "joined")
        await ann.send({"type": "start"})
        finished = await ann.expect("finished", wait_s=30)
        assert finished["reason"] == "time_limit"
        answer = await ask(bob, {"type": "race_ratings", "room": room}, "rating_changes")
        assert [c["name"] for c in answer["changes"]] == ["ann", "bob"]
        assert answer["changes"][0]["delta"] > 0 > answer["changes"][1]["delta"]
