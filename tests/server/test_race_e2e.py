"""A whole race through real server processes and real WebSocket clients, on a real Redis."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from shared import (
    apply_move,
    deal_deck,
    fold,
    move_event,
    new_game,
    public_fold,
    public_view,
    resign_event,
    start_event,
)
from shared.state import GameState
from tests.server.wsclient import Client, assert_no_secrets, winning_seed
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess


def play(state: GameState, moves: list[str]) -> GameState:
    for move in moves:
        state = apply_move(state, move)
    return state


def private_events(deck: list[str], moves: list[str], *, resigned: bool) -> list[dict]:
    events = [start_event("quadrennial", deck, at=0)]
    state = new_game("quadrennial", deck=deck)
    for move in moves:
        events.append(move_event(state, move, at=0))
        state = apply_move(state, move)
    if resigned:
        events.append(resign_event(at=0))
    return events


async def test_three_racers_two_spectators_to_the_finish(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    seed, win = winning_seed()
    deck = deal_deck("quadrennial", seed)
    server = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=["--rate", "1000", "--burst", "1000"],
    )
    server.start()
    clients: list[Client] = []
    try:
        ann, bob, cat = [await Client(server.url, n).open() for n in ("ann", "bob", "cat")]
        watcher = await Client(server.url, "early").open()
        late = await Client(server.url, "late").open()
        clients = [ann, bob, cat, watcher, late]
        for client in clients:
            await client.hello()
        await ann.send(
            {
                "type": "create_room",
                "variant": "quadrennial",
                "seed": seed,
                "capacity": 3,
                "countdown_ms": 300,
                "ref": 1,
            }
        )
        created = await ann.expect("room", lambda m: m.get("ref") == 1)
        room = created["room"]["id"]
        commitment = created["room"]["commitment"]
        for racer in (ann, bob, cat):
            await racer.send({"type": "join", "room": room, "role": "player", "ref": "j"})
            joined = await racer.expect("joined")
            assert joined["ref"] == "j"
            assert joined["player"] == racer.session
        await watcher.send({"type": "join", "room": room, "role": "spectator"})
        await watcher.expect("joined")

        await bob.send({"type": "start"})
        for client in (ann, bob, cat, watcher):
            countdown = await client.expect("countdown")
            started = await client.expect("started")
            assert started["at"] >= countdown["go_at"]
            assert started["commitment"] == commitment

        async def race(racer: Client, moves: list[str], *, resign: bool) -> None:
            await racer.expect("game_event", lambda m: m["player"] == racer.session)
            for version, move in enumerate(moves, start=2):
                answer = await racer.move(move)
                assert answer == {"type": "ack", "id": racer.next_id, "version": version}
            if resign:
                await racer.send({"type": "resign"})
                await racer.expect(
                    "progress",
                    lambda m: m["player"] == racer.session and m["status"] == "resigned",
                )

        await race(bob, win[:20], resign=True)
        await race(ann, win[: len(win) // 2], resign=False)
        await late.send({"type": "watch", "room": room})  # joins as a spectator midway
        await late.expect("joined")
        for version, move in enumerate(win[len(win) // 2 :], start=len(win) // 2 + 2):
            assert (await ann.move(move))["version"] == version
        await ann.send({"type": "move", "id": "after-win", "move": "d"})
        assert (await ann.answer("after-win"))["code"] == "game_over"  # won: no more moves
        await race(cat, win, resign=False)

        results = [await c.expect("finished") for c in clients]
        assert all(r == results[0] for r in results)
        finished = results[0]
        assert finished["reason"] == "all_done"
        ranking = finished["ranking"]
        assert [r["player"] for r in ranking] == [ann.session, cat.session, bob.session]
        assert [r["place"] for r in ranking] == [1, 2, 3]
        assert [r["status"] for r in ranking] == ["won", "won", "resigned"]
        assert ranking[0]["finished_at"] <= ranking[1]["finished_at"]
        assert ranking[2]["foundation"] == sum(
            len(f) for f in play(new_game("quadrennial", deck=deck), win[:20]).foundations
        )
        assert finished["seed"] == seed
        digest = hashlib.sha256(f"{seed}:{finished['salt']}".encode()).hexdigest()
        assert digest == commitment == finished["commitment"]

        expected = {
            ann.session: public_view(fold(private_events(deck, win, resigned=False))),
            bob.session: public_view(fold(private_events(deck, win[:20], resigned=True))),
            cat.session: public_view(fold(private_events(deck, win, resigned=False))),
        }
        for spectator in (watcher, late):
            for player, view in expected.items():
                assert public_fold(spectator.game_events(player)) == view
        for racer in (ann, bob, cat):
            assert public_fold(racer.game_events(racer.session)) == expected[racer.session]
        assert_no_secrets(clients, "quadrennial", deck, seed)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        assert server.stop() == 0
