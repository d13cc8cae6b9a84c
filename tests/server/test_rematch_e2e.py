"""A rematch through two real server processes on one real Redis: the racers of a finished race
are seated in one new room like it, on a new secret deal, whichever process each is on."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all


async def ask(client: Client, msg: dict[str, Any], answer: str) -> dict[str, Any]:
    ref = uuid.uuid4().hex[:8]
    await client.send({**msg, "ref": ref})
    return await client.expect(answer, lambda m: m.get("ref") == ref)


async def test_the_racers_of_a_finished_race_race_again_in_one_new_room(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    prefix = ["--redis-prefix", f"t{uuid.uuid4().hex[:8]}:", "--rate", "1000", "--burst", "1000"]
    one, two = (
        ServerProcess(redis_url=redis_server.url, log_path=tmp_path / f"{n}.log", extra_args=prefix)
        for n in ("one", "two")
    )
    start_all([one, two])
    clients: list[Client] = []
    try:
        ann = await Client(one.url, "ann").open()
        bob = await Client(two.url, "bob").open()
        watcher = await Client(two.url, "watcher").open()
        clients = [ann, bob, watcher]
        for client in clients:
            await client.hello()
        create = {"type": "create_room", "variant": "swiss", "capacity": 2, "countdown_ms": 0}
        first = (await ask(ann, {**create, "spectator_delay_ms": 0}, "room"))["room"]
        for racer in (ann, bob):
            await ask(racer, {"type": "join", "room": first["id"]}, "joined")
        await ask(watcher, {"type": "join", "room": first["id"], "role": "spectator"}, "joined")
        early = await ask(ann, {"type": "rematch"}, "error")
        assert early["code"] == "wrong_status"  # not before the race is over

        await ann.send({"type": "start"})
        for racer in (ann, bob):
            await racer.expect("started")
            await racer.send({"type": "resign"})
        for client in clients:
            await client.expect("finished")
        spectator = await ask(watcher, {"type": "rematch"}, "error")
        assert spectator["code"] == "not_a_player"

        joined = await ask(bob, {"type": "rematch"}, "joined")
        rematch = joined["room"]
        assert rematch != first["id"]
        assert (joined["role"], joined["player"]) == ("player", bob.session)
        state = (await bob.expect("room", lambda m: m["room"]["id"] == rematch))["room"]
        assert state["status"] == "lobby"
        assert [p["name"] for p in state["players"]] == ["bob"]
        assert (state["variant"], state["capacity"], state["rated"]) == ("swiss", 2, True)
        assert state["commitment"] != first["commitment"]  # a new deal
        # ann (on the other process) and the spectator are told where it is.
        for client in (ann, watcher):
            told = await client.expect("room", lambda m: m["room"].get("rematch") is not None)
            assert (told["room"]["id"], told["room"]["rematch"]) == (first["id"], rematch)

        joined = await ask(ann, {"type": "rematch"}, "joined")
        assert joined["room"] == rematch  # the one offered, not another
        await bob.expect(
            "room", lambda m: m["room"]["id"] == rematch and len(m["room"]["players"]) == 2
        )
        rooms = (await ask(watcher, {"type": "list_rooms"}, "rooms"))["rooms"]
        assert sum(r["id"] == rematch for r in rooms) == 1
        assert len(rooms) == 2  # the finished race and its rematch: no second lobby was made

        await bob.send({"type": "start"})
        for racer in (ann, bob):
            started = await racer.expect("started", lambda m: m["room"] == rematch)
            assert started["commitment"] == state["commitment"]
        again = await ask(ann, {"type": "rematch"}, "error")
        assert again["code"] == "wrong_status"  # this race is on
    finally:
        for client in clients:
            await client.close()
        one.stop()
        two.stop()
