"""A real server on its default store, SQLite in a data directory, killed with SIGKILL: after a
restart on the same directory an account logs in, its rating is the same, a finished race
replays as it did, and a live race's game holds every acked move. A second server on a held
directory is refused in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from shared import deal_deck, fold, public_fold, public_view
from tests.server.test_race_e2e import private_events
from tests.server.wsclient import Client, winning_seed
from tests.support.ports import free_port
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a server process

FAST = ["--rate", "1000", "--burst", "1000"]
ROOT = Path(__file__).resolve().parents[2]


async def hello(url: str, name: str, key: str | None = None) -> tuple[Client, dict[str, Any]]:
    client = await Client(url, name).open()
    msg: dict[str, Any] = {"type": "hello", "protocol": 1, "name": name}
    if key is not None:
        msg["key"] = key
    await client.send(msg)
    welcome = await client.expect("welcome")
    client.session, client.token = welcome["session"], welcome["token"]
    return client, welcome


async def ask(client: Client, msg: dict[str, Any], answer: str) -> dict[str, Any]:
    ref = uuid.uuid4().hex[:8]
    await client.send({**msg, "ref": ref})
    return await client.expect(answer, lambda m: m.get("ref") == ref)


async def watched(url: str, room: str, players: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every player's public game events, as a spectator joining the room now sees them."""
    watcher, _ = await hello(url, "watcher")
    try:
        await ask(watcher, {"type": "join", "room": room, "role": "spectator"}, "joined")
        for player in players:
            await watcher.expect("game", lambda m, p=player: m.get("player") == p)  # type: ignore[misc]
        return {player: watcher.game_events(player) for player in players}
    finally:
        await watcher.close()


async def test_a_sigkilled_server_keeps_accounts_ratings_races_and_acked_moves(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    server = ServerProcess(data_dir=data, log_path=tmp_path / "server.log", extra_args=FAST)
    server.start()
    clients: list[Client] = []
    try:
        # Two accounts race a rated race to its end.
        keys = {}
        for name in ("ann", "bob"):
            client, _ = await hello(server.url, name)
            clients.append(client)
            password = f"pw-{name}-{name}-{name}"
            keys[name] = (
                await ask(
                    client, {"type": "register", "name": name, "password": password}, "account"
                )
            )["key"]
        ann, bob = clients
        create = {"type": "create_room", "variant": "swiss", "capacity": 2, "countdown_ms": 0}
        rated = (await ask(ann, create, "room"))["room"]
        assert rated["rated"] is True
        for racer in (ann, bob):
            await ask(racer, {"type": "join", "room": rated["id"]}, "joined")
        await ann.send({"type": "start"})
        for racer in (ann, bob):
            await racer.expect("started")
        await ann.move("d")
        for racer in (ann, bob):
            await racer.send({"type": "resign"})
        for racer in (ann, bob):
            await racer.expect("finished")
        changes = await ask(ann, {"type": "race_ratings", "room": rated["id"]}, "rating_changes")
        card = await ask(bob, {"type": "profile", "name": "ann"}, "player_card")
        racers = [ann.session, bob.session]
        replay = await watched(server.url, rated["id"], racers)
        assert len(replay[ann.session]) == 3  # started, the deal, resigned

        # A live race between two guests, with acked moves, when the server dies.
        seed, win = winning_seed()
        cy, _ = await hello(server.url, "cy")
        dee, _ = await hello(server.url, "dee")
        clients += [cy, dee]
        live = {**create, "variant": "quadrennial", "seed": seed}
        room = (await ask(cy, live, "room"))["room"]["id"]
        for racer in (cy, dee):
            await ask(racer, {"type": "join", "room": room}, "joined")
        await cy.send({"type": "start"})
        for racer in (cy, dee):
            await racer.expect("started")
        acked = win[:12]
        for version, move in enumerate(acked, start=2):
            assert (await cy.move(move))["version"] == version

        server.kill()  # SIGKILL: no shutdown, no checkpoint; the lock goes with the process
        for client in clients:
            await client.close()
        clients = []
        server.start()

        # The account: its key and its password both log in; its rating is the same.
        again, welcome = await hello(server.url, "ann", key=keys["ann"])
        clients.append(again)
        assert welcome["account"] == "ann"
        password = {"type": "login", "name": "bob", "password": "pw-bob-bob-bob"}
        assert (await ask(again, password, "account"))["name"] == "bob"
        assert await ask(again, {"type": "profile", "name": "ann"}, "player_card") == {
            **card,
            "ref": again.messages[-1]["ref"],
        }
        same = await ask(again, {"type": "race_ratings", "room": rated["id"]}, "rating_changes")
        assert {**same, "ref": None} == {**changes, "ref": None}
        # The finished race replays as it did; the live game has every acked move.
        assert await watched(server.url, rated["id"], racers) == replay
        # The racer takes its seat back: its next move follows the last acked one.
        back = await Client(server.url, "cy").open()
        clients.append(back)
        assert (await back.hello(resume=cy.token))["resumed"] is True
        back.next_id = cy.next_id  # move ids are kept too: a used one is refused
        answer = await back.move(win[len(acked)])
        assert answer.get("version") == len(acked) + 2, answer
        again_dee = await Client(server.url, "dee").open()
        clients.append(again_dee)
        assert (await again_dee.hello(resume=dee.token))["resumed"] is True
        for racer in (back, again_dee):
            await racer.send({"type": "resign"})
        await back.expect("finished")
        games = await watched(server.url, room, [cy.session, dee.session])
        deck = deal_deck("quadrennial", seed)
        assert public_fold(games[cy.session]) == public_view(
            fold(private_events(deck, win[: len(acked) + 1], resigned=True))
        )
        assert public_fold(games[dee.session]) == public_view(
            fold(private_events(deck, [], resigned=True))
        )
    finally:
        for client in clients:
            await client.close()
        server.stop()


def test_a_data_directory_another_server_holds_is_one_line(tmp_path: Path) -> None:
    first = ServerProcess(data_dir=tmp_path / "data", log_path=tmp_path / "first.log")
    first.start()
    try:
        second = ServerProcess(data_dir=tmp_path / "data")
        done = subprocess.run(
            second.command(), capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 1
        assert done.stderr.strip().splitlines() == [
            f"solitaire-server: the data directory {tmp_path / 'data'} is in use by another "
            f"server (pid {first.process.pid if first.process else 0}): stop it, or give this "
            "one another --data-dir"
        ]
    finally:
        first.stop()


def test_scripts_serve_with_store_memory_says_it_keeps_nothing(tmp_path: Path) -> None:
    """The server's log and scripts/serve's own lines both say so, and no data directory is
    made."""
    port = free_port()
    serve = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "serve"), "--port", str(port), "--store", "memory"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the server's log and the script's own lines, in order
        text=True,
        cwd=str(ROOT),
        start_new_session=True,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
    )
    try:
        assert serve.stdout is not None
        said = []
        for line in serve.stdout:
            said.append(line)
            if "Race a friend" in line:
                break
        text = "".join(said)
        assert "store_keeps_nothing" in text
        assert "--store memory: nothing is kept; everything is forgotten when it stops." in text
        assert f"Solitaire Arena is serving on ws://127.0.0.1:{port}" in text
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=30)
    assert list(tmp_path.iterdir()) == []
