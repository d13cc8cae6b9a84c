"""Tournament requests over the wire: bad input gets its code and appends nothing, limits hold,
names are text; listing, following and profiles show what they should."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.server.tournaments.racers import ask, connect, register
from tests.server.wsclient import Client
from tests.support.server_process import ServerProcess

MIN = 60_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        log_path=tmp_path_factory.mktemp("tournament-requests") / "server.log",
        extra_args=[
            "--rate", "1000", "--burst", "1000",
            "--auth-attempts-per-address", "1000",
            "--tournament-min-length-s", "1",
            "--tournament-requests-per-minute", "8",
        ],
    )  # fmt: skip
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def ann(server: ServerProcess) -> AsyncIterator[Client]:
    name = f"ann{time.monotonic_ns() % 10**8}"
    key = await register(server.url, name)
    client, _ = await connect(server.url, name, key)
    yield client
    await client.close()


async def create(client: Client, **fields: object) -> dict[str, object]:
    msg = {"type": "create_tournament", "name": "Evening", "length_ms": 30 * MIN, **fields}
    return await ask(client, msg, "tournament")


async def test_a_guest_cannot_create_or_join(server: ServerProcess, ann: Client) -> None:
    guest, _ = await connect(server.url, "guest")
    try:
        assert (await create(guest))["code"] == "not_logged_in"
        made = await create(ann)
        tid = made["tournament"]["id"]  # type: ignore[index]
        join = {"type": "join_tournament", "tournament": tid}
        assert (await ask(guest, join, "tournament_joined"))["code"] == "not_logged_in"
        # a guest may follow and list
        follow = await ask(guest, {"type": "follow_tournament", "tournament": tid}, "tournament")
        assert follow["tournament"]["status"] == "running"
        standings = await guest.expect("tournament_standings")
        assert standings["me"] is None
        assert standings["players"] == 0
        listed = await ask(guest, {"type": "list_tournaments"}, "tournaments")
        assert tid in [t["id"] for t in listed["live"]]
    finally:
        await guest.close()


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"length_ms": 500}, "bad_field"),  # under the server's minimum
        ({"length_ms": 13 * 60 * MIN}, "bad_field"),  # over 12 h
        ({"race_size": 5}, "bad_field"),
        ({"time_limit_ms": 31 * MIN}, "bad_field"),
        ({"starts_at": int(time.time() * 1000) + 8 * 24 * 60 * MIN}, "bad_field"),
        ({"variant": "poker"}, "bad_field"),
        ({"name": ""}, "bad_field"),
    ],
)
async def test_out_of_range_creations_are_refused(
    ann: Client, fields: dict[str, object], code: str
) -> None:
    assert (await create(ann, **fields))["code"] == code


async def test_an_account_has_three_tournaments_at_most(server: ServerProcess) -> None:
    name = f"bea{time.monotonic_ns() % 10**8}"
    bea, _ = await connect(server.url, name, await register(server.url, name))
    try:
        for _ in range(3):
            assert (await create(bea))["type"] == "tournament"
        assert (await create(bea))["code"] == "too_many_tournaments"
    finally:
        await bea.close()


async def test_names_are_cleaned_to_text(ann: Client) -> None:
    made = await create(ann, name="\x1b[31mRed\u202e Night\u200b  Cup\x07")
    assert made["tournament"]["name"] == "Red Night Cup"  # type: ignore[index]


async def test_join_withdraw_and_their_errors(server: ServerProcess, ann: Client) -> None:
    tid = (await create(ann, starts_at=int(time.time() * 1000) + 60_000))["tournament"]["id"]  # type: ignore[index]
    nothing = {"type": "join_tournament", "tournament": "nosuchthing"}
    assert (await ask(ann, nothing, "tournament_joined"))["code"] == "no_such_tournament"
    withdraw = {"type": "withdraw_tournament", "tournament": tid}
    assert (await ask(ann, withdraw, "tournament_withdrawn"))["code"] == "not_in_tournament"
    joined = await ask(ann, {"type": "join_tournament", "tournament": tid}, "tournament_joined")
    assert joined["type"] == "tournament_joined"
    state = await ann.expect("tournament")
    assert state["tournament"]["status"] == "upcoming"
    assert state["tournament"]["players"] == 1
    standings = await ann.expect("tournament_standings")
    assert standings["me"]["active"]
    assert (await ask(ann, withdraw, "tournament_withdrawn"))["type"] == "tournament_withdrawn"


async def test_spamming_join_and_withdraw_is_rate_limited(server: ServerProcess) -> None:
    name = f"cy{time.monotonic_ns() % 10**8}"
    cy, _ = await connect(server.url, name, await register(server.url, name))
    try:
        tid = (await create(cy))["tournament"]["id"]  # type: ignore[index]
        codes = []
        for i in range(10):
            kind = "join_tournament" if i % 2 == 0 else "withdraw_tournament"
            answer = await ask(
                cy, {"type": kind, "tournament": tid}, "tournament_joined", "tournament_withdrawn"
            )
            codes.append(answer.get("code", answer["type"]))
        assert "rate_limited" in codes
        assert codes[:6] == ["tournament_joined", "tournament_withdrawn"] * 3  # create counted too
    finally:
        await cy.close()


async def test_a_finished_tournament_cannot_be_joined(ann: Client) -> None:
    tid = (await create(ann, length_ms=1_000, time_limit_ms=1_000))["tournament"]["id"]  # type: ignore[index]
    await asyncio.sleep(1.2)
    answer = await ask(ann, {"type": "join_tournament", "tournament": tid}, "tournament_joined")
    assert answer["code"] == "tournament_over"


async def test_berserk_outside_a_tournament_race(ann: Client) -> None:
    assert (await ask(ann, {"type": "berserk"}, "berserked"))["code"] == "not_in_room"
    room = await ask(ann, {"type": "create_room", "variant": "swiss"}, "room")
    await ask(ann, {"type": "join", "room": room["room"]["id"]}, "joined")
    assert (await ask(ann, {"type": "berserk"}, "berserked"))["code"] == "not_allowed"


async def test_the_profile_lists_tournaments_played(ann: Client) -> None:
    card = await ask(ann, {"type": "profile"}, "player_card")
    assert card["tournaments"] == {"played": 0, "podiums": []}
