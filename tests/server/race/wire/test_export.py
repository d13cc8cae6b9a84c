"""GET /export/CODE/PLAYER on a real server process: a finished race's game as its text record,
and nothing of a race still running or still delayed for its spectators."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import apply_move, new_game
from shared.export import parse_export
from shared.verification import verify_export
from tests.server.wsclient import Client, winning_seed
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

FAST = ["--rate", "1000", "--burst", "1000"]


@pytest.fixture(scope="module")
def arena(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs: Path = tmp_path_factory.mktemp("export")
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=logs / "server.log",
        extra_args=[
            "--rate",
            "1000",
            "--burst",
            "1000",
            "--redis-prefix",
            f"x{uuid.uuid4().hex[:8]}:",
        ],
    )
    server.start()
    yield server.url
    server.stop()


def _get(url: str) -> tuple[int, Any, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


async def get(ws_url: str, path: str) -> tuple[int, Any, str]:
    return await asyncio.to_thread(_get, ws_url.replace("ws://", "http://") + path)


async def _room(creator: Client, racers: list[Client], **settings: Any) -> str:
    await creator.send({"type": "create_room", "ref": 1, "countdown_ms": 0, **settings})
    room = (await creator.expect("room", lambda m: m.get("ref") == 1))["room"]["id"]
    for racer in racers:
        await racer.send({"type": "join", "room": room, "role": "player"})
        await racer.expect("joined")
    await racers[0].send({"type": "start"})
    for racer in racers:
        await racer.expect("started")
        await racer.expect("game_event", _of(racer.session))
    return room


def _of(player: str) -> Callable[[dict[str, Any]], bool]:
    return lambda msg: bool(msg["player"] == player)


async def test_a_finished_race_exports_and_a_running_one_does_not(arena: str) -> None:
    seed, win = winning_seed()
    ann, bob = [await Client(arena, name).open() for name in ("Ann", "bob")]
    try:
        for client in (ann, bob):
            await client.hello()
        room = await _room(ann, [ann, bob], variant="quadrennial", seed=seed, capacity=2)
        for move in win[:3]:
            assert (await ann.move(move))["type"] == "ack"

        status, headers, body = await get(arena, f"/export/{room}/Ann")
        assert status == 403
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
        assert body.startswith("wrong_status: ")
        assert "not over" in body
        assert seed not in body

        status, _, body = await get(arena, f"/export/zz{room}/Ann")
        assert status == 404
        assert body == f"no_such_room: no room 'zz{room}'\n"
        for move in win[3:]:
            assert (await ann.move(move))["type"] == "ack"
        await bob.send({"type": "resign"})
        await ann.expect("finished")

        status, headers, body = await get(arena, f"/export/{room.upper()}/ann")
        assert status == 200
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
        assert headers["Content-Disposition"] == f'attachment; filename="solitaire-{room}-Ann.txt"'
        game = parse_export(body)
        assert (game.header.room, game.header.player, game.header.seed) == (room, "Ann", seed)
        assert str(verify_export(game)) == "fair"  # it names the salt and commitment too
        assert (game.header.result, game.header.place) == ("won", 1)
        moves = [e["move"] for e in game.events if e["type"] == "moved"]
        assert moves == win
        state = new_game("quadrennial", seed=seed)
        for move in moves:
            state = apply_move(state, move)
        assert state.won

        status, _, body = await get(arena, f"/export/{room}/{bob.session}")
        assert status == 200
        assert parse_export(body).header.result == "resigned"
        status, _, body = await get(arena, f"/export/{room}/nobody")
        assert status == 404
        assert body.startswith("no_such_player: ")
    finally:
        await asyncio.gather(ann.close(), bob.close())


async def test_a_finished_race_waits_for_its_spectator_delay(arena: str) -> None:
    cat = await Client(arena, "cat").open()
    try:
        await cat.hello()
        room = await _room(cat, [cat], variant="swiss", capacity=1, spectator_delay_ms=600_000)
        await cat.send({"type": "resign"})
        await cat.expect("finished")
        status, _, body = await get(arena, f"/export/{room}/cat")
        assert status == 403
        assert "600 s late" in body
    finally:
        await cat.close()
