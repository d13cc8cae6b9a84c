"""A move id names one move of a game: sent again with the same move it gets its first answer,
sent with another move it is refused as id_reused and nothing is applied, on a real server
over Redis and after that server restarts (the ids are read back from the game's stream)."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

from shared import GameState, apply_move, deal_deck, legal_moves, new_game
from tests.server.wsclient import Client
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

VARIANT = "swiss"
SEED = "move-ids"


def to_a_draw(state: GameState) -> tuple[GameState, list[str]]:
    """Moves from ``state`` to a position where drawing and another move are both legal (a
    few moves in, so the ids are not the first ones)."""
    played: list[str] = []
    while True:
        legal = sorted(legal_moves(state))
        if len(played) >= 3 and "d" in legal and len(legal) > 1:
            return state, played
        played.append(legal[0])
        state = apply_move(state, legal[0])


async def racing_alone(url: str) -> Client:
    ann = await Client(url, "ann").open()
    await ann.hello()
    await ann.send({"type": "create_room", "variant": VARIANT, "seed": SEED, "countdown_ms": 0})
    room = (await ann.expect("room"))["room"]["id"]
    await ann.send({"type": "join", "room": room})
    await ann.expect("joined")
    await ann.send({"type": "start"})
    await ann.expect("started")
    return ann


def ack(move_id: int, version: int) -> dict[str, object]:
    return {"type": "ack", "id": move_id, "version": version}


async def test_a_reused_id_for_another_move_is_refused_also_after_a_restart(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        # A key prefix of its own: the session's Redis is shared with other tests.
        extra_args=["--rate", "1000", "--burst", "1000", "--redis-prefix", secrets.token_hex(4)],
    )
    state, played = to_a_draw(new_game(VARIANT, deck=deal_deck(VARIANT, SEED)))
    server.start()
    clients: list[Client] = []
    try:
        ann = await racing_alone(server.url)
        clients.append(ann)
        # Ids counted from 1, as a client written from docs/protocol.md alone may number them.
        for move_id, move in enumerate(played, start=1):
            assert await ann.move(move, move_id) == ack(move_id, move_id + 1)
        drawn = len(played) + 1
        assert await ann.move("d", drawn) == ack(drawn, drawn + 1)
        state = apply_move(state, "d")
        other = sorted(m for m in legal_moves(state) if m != "d")[0]

        reused = await ann.move(other, drawn)
        assert (reused["type"], reused["code"]) == ("reject", "id_reused")
        assert await ann.move("d", drawn) == ack(drawn, drawn + 1)  # its first answer again

        token = ann.token
        server.kill()
        await ann.wait_closed()
        server.start()
        back = await Client(server.url, "ann").open()
        clients.append(back)
        assert (await back.hello(resume=token))["resumed"]
        reused = await back.move(other, drawn)
        assert (reused["type"], reused["code"]) == ("reject", "id_reused")
        assert await back.move("d", drawn) == ack(drawn, drawn + 1)
        # Nothing of the refused move was applied: the next move lands right after the draw.
        assert await back.move(other, drawn + 1) == ack(drawn + 1, drawn + 2)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()
