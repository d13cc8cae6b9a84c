"""Winnable-only rooms and solo hints through real server processes: the deal is proved
winnable, its seed stays secret until the end, and the solver never holds up the loop."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import apply_move, deal_deck, legal_moves, new_game, solve
from tests.server.wsclient import Client, assert_no_secrets, greedy_moves
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

BUDGET = 10_000  # the server's default --solver-max-nodes (hints; winnable draws prove at 1,000)
FAST = ["--rate", "1000", "--burst", "1000"]


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        redis_url=redis_server.url, log_path=tmp_path / "server.log", extra_args=FAST
    )
    process.start()
    yield process
    process.stop()


async def hello(url: str, name: str) -> Client:
    client = await Client(url, name).open()
    await client.hello()
    return client


async def solo_race(client: Client, **fields: Any) -> dict[str, Any]:
    """A started solo room of this client's: its ``room`` state as created."""
    await client.send(
        {"type": "create_room", "variant": "quadrennial", "capacity": 1, "countdown_ms": 0}
        | fields
        | {"ref": "c"}
    )
    room = (await client.expect("room", lambda m: m.get("ref") == "c", wait_s=60))["room"]
    await client.send({"type": "join", "room": room["id"]})
    await client.expect("joined")
    await client.send({"type": "start"})
    await client.expect("started")
    return dict(room)


async def ask_hint(client: Client, ref: str) -> dict[str, Any]:
    await client.send({"type": "hint", "ref": ref})
    return await client.expect("suggestion", lambda m: m.get("ref") == ref, wait_s=60)


async def error_of(client: Client, msg: dict[str, Any]) -> str:
    await client.send({**msg, "ref": "e"})
    return str((await client.expect("error", lambda m: m.get("ref") == "e"))["code"])


async def test_a_winnable_room_deals_a_deck_the_solver_wins_and_hints_its_moves(
    server: ServerProcess,
) -> None:
    ann = await hello(server.url, "ann")
    try:
        room = await solo_race(ann, winnable=True)
        assert room["winnable"] is True
        assert room["open_seed"] is False
        hinted: list[tuple[dict[str, Any], str]] = []
        for i in range(3):  # a few hints, each played: the server's own state moves on
            suggestion = await ask_hint(ann, f"h{i}")
            assert suggestion["type"] == "suggestion"
            assert suggestion["max_nodes"] == BUDGET
            assert 0 <= suggestion["nodes"] <= BUDGET
            assert suggestion["heuristic"] is (suggestion["status"] != "won")
            if suggestion["status"] != "won" or suggestion["move"] is None:
                break
            hinted.append((suggestion, suggestion["move"]))
            assert (await ann.move(suggestion["move"]))["type"] == "ack"
        assert hinted, "a deal proved winnable gets a winning first move"
        await ann.send({"type": "resign"})
        finished = await ann.expect("finished")
        seed = finished["seed"]
        digest = hashlib.sha256(f"{seed}:{finished['salt']}".encode()).hexdigest()
        assert digest == room["commitment"] == finished["commitment"]
        deck = deal_deck("quadrennial", seed)
        state = new_game("quadrennial", deck=deck)
        assert solve(state, max_nodes=BUDGET).status == "won"
        for suggestion, move in hinted:  # each hint was a winning line's move from there
            assert move in legal_moves(state)
            answer = solve(state, max_nodes=BUDGET)
            assert answer.status == suggestion["status"] == "won"
            state = apply_move(state, move)
        assert_no_secrets([ann], "quadrennial", deck, seed)
    finally:
        await ann.close()


async def test_hints_are_for_a_seated_solo_racer_only(server: ServerProcess) -> None:
    ann, bob, eve = [await hello(server.url, n) for n in ("ann", "bob", "eve")]
    try:
        # A two-seat room: never a hint, even before the race.
        await ann.send({"type": "create_room", "variant": "quadrennial", "capacity": 2, "ref": 1})
        pair = (await ann.expect("room", lambda m: m.get("ref") == 1))["room"]["id"]
        await ann.send({"type": "join", "room": pair})
        await ann.expect("joined")
        assert await error_of(ann, {"type": "hint"}) == "not_allowed"
        # A solo lobby: seated but not racing.
        await bob.send({"type": "create_room", "variant": "quadrennial", "capacity": 1, "ref": 2})
        solo = (await bob.expect("room", lambda m: m.get("ref") == 2))["room"]["id"]
        await bob.send({"type": "join", "room": solo})
        await bob.expect("joined")
        assert await error_of(bob, {"type": "hint"}) == "not_racing"
        # A spectator of it, and a connection in no room, have no seat.
        await eve.send({"type": "join", "room": solo, "role": "spectator"})
        await eve.expect("joined")
        assert await error_of(eve, {"type": "hint"}) == "not_a_player"
        await eve.send({"type": "leave"})
        await eve.expect("left")
        assert await error_of(eve, {"type": "hint"}) == "not_a_player"
        # A winnable room cannot also have a chosen seed or deck.
        bad = {"type": "create_room", "variant": "quadrennial", "winnable": True}
        assert await error_of(ann, {**bad, "seed": "x"}) == "bad_field"
        assert await error_of(ann, {**bad, "deck": deal_deck("quadrennial", "x")}) == "bad_field"
    finally:
        for client in (ann, bob, eve):
            await client.close()


async def test_a_hint_after_the_game_is_won_is_game_over_or_not_racing(
    server: ServerProcess,
) -> None:
    ann = await hello(server.url, "ann")
    try:
        seed = "winnable-greedy-0"
        for i in range(1000):  # a seed the greedy policy wins, so the game can be finished
            seed = f"winnable-greedy-{i}"
            state = new_game("quadrennial", deck=deal_deck("quadrennial", seed))
            moves = greedy_moves(state)
            for move in moves:
                state = apply_move(state, move)
            if state.won:
                break
        await solo_race(ann, seed=seed)
        for move in moves:
            assert (await ann.move(move))["type"] == "ack"
        # A solo room finishes when its one game is won: either refusal is right.
        assert await error_of(ann, {"type": "hint"}) in {"game_over", "not_racing"}
    finally:
        await ann.close()


async def test_moves_are_answered_while_a_winnable_room_is_prepared(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # Swiss deals at a large budget take the solver a second or more each (bench.solver): long
    # enough for many moves to be answered meanwhile, short enough for a suite on two cores.
    process = ServerProcess(
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[*FAST, "--winnable-max-nodes", "15000", "--solver-attempts", "3"],
    )
    process.start()
    racer, creator = None, None
    try:
        racer = await hello(process.url, "racer")
        creator = await hello(process.url, "creator")
        seed = "busy-loop"
        await solo_race(racer, seed=seed)
        moves = greedy_moves(new_game("quadrennial", deck=deal_deck("quadrennial", seed)))
        await creator.send(
            {"type": "create_room", "variant": "swiss", "winnable": True, "ref": "w"}
        )
        answered: list[str] = []

        def prepared() -> bool:
            return any(
                m.get("ref") == "w" and m["type"] in ("room", "error") for m in creator.messages
            )

        while not prepared():
            if len(answered) < len(moves):
                answer = await racer.move(moves[len(answered)])
            else:  # out of legal moves: an illegal one is still answered by the same path
                answer = await racer.move("zz")
            answered.append(answer["type"])
        assert answered, "no move was answered while the deal was being prepared"
        assert set(answered[: len(moves)]) == {"ack"}
        outcome = next(m for m in creator.messages if m.get("ref") == "w")
        if outcome["type"] == "room":
            assert outcome["room"]["winnable"] is True
        else:
            assert outcome["code"] == "no_winnable_deal"
    finally:
        for client in (racer, creator):
            if client is not None:
                await client.close()
        process.stop()
