"""Unanswered requests, moves and pings matched to the server's answers."""

from __future__ import annotations

import pytest

from client.connection import ConnectionLost
from client.inflight import InFlight


async def test_an_answer_resolves_its_request_by_ref_or_else_the_oldest_expecting_it() -> None:
    inflight = InFlight()
    first, first_answer = inflight.request("joined")
    second, second_answer = inflight.request("joined")
    inflight.answer({"type": "joined", "room": "r", "ref": second})
    assert second_answer.result()["ref"] == second
    inflight.request_done(second, "joined")
    inflight.answer({"type": "joined", "room": "r"})  # no ref: the oldest request expecting it
    assert first_answer.result() == {"type": "joined", "room": "r"}
    inflight.request_done(first, "joined")
    inflight.answer({"type": "joined", "room": "r"})  # nobody waits: nothing happens


async def test_an_error_without_ref_answers_nobody() -> None:
    inflight = InFlight()
    _, answer = inflight.request("game")
    inflight.answer({"type": "error", "code": "x", "reason": "y", "ref": None})
    assert not answer.done()


async def test_moves_wait_for_their_ack_and_are_sent_again_until_then() -> None:
    inflight = InFlight()
    move = {"type": "move", "id": inflight.move_id(), "move": "d"}
    answer = inflight.move(move)
    assert inflight.unanswered_moves() == [move]
    inflight.answer({"type": "ack", "id": move["id"], "version": 3})
    assert answer.result()["version"] == 3
    assert inflight.unanswered_moves() == []


def test_move_ids_grow_and_start_from_the_clock() -> None:
    inflight = InFlight()
    first, second = inflight.move_id(), inflight.move_id()
    assert second == first + 1
    assert first > 1_600_000_000 * 10**6  # microseconds: unique across runs too


def test_the_pong_of_a_ping_gives_the_servers_clock_offset() -> None:
    now = [1_000]
    inflight = InFlight(clock_ms=lambda: now[0])
    ping = inflight.ping()
    now[0] = 1_100  # a round trip of 100 ms: the server answered at our 1_050
    assert inflight.clock_offset({"type": "pong", "at": 5_050, "ref": ping["ref"]}) == 4_000
    assert inflight.clock_offset({"type": "pong", "at": 5_050, "ref": ping["ref"]}) is None
    assert inflight.clock_offset({"type": "ack", "id": 1, "version": 1}) is None


async def test_failing_fails_every_waiter() -> None:
    inflight = InFlight()
    _, request = inflight.request(None)
    move = inflight.move({"type": "move", "id": 1, "move": "d"})
    inflight.fail_requests(ConnectionLost("gone"))
    inflight.fail_moves(ConnectionLost("gone"))
    for future in (request, move):
        with pytest.raises(ConnectionLost):
            future.result()
    assert inflight.unanswered_moves() == []
