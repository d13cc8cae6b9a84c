"""A challenge's decisions hold under concurrency (each an append at the version it read): one
last place for two accounts at once, one attempt for one account on two connections at once, one
settlement and one rating however many settle at once; and an attempt whose room nobody sat in
(its process died) is given a new room, never a second game."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.app import App
from server.challenges.domain import challenge as c
from server.daily.services.challenge import ORPHAN_AFTER_MS
from server.kernel.errors import ChallengeFull, ChallengePlayed, NotAllowed
from server.runtime.clock import FakeClock
from server.store import MemoryEventStore, StoreError
from tests.server.parts import Peer, join, open_app, until


@pytest.fixture
async def app(clock: FakeClock) -> AsyncIterator[App]:
    made = open_app(MemoryEventStore(), clock)
    yield made
    await made.close_parts()


async def create(app: App, *, invited: tuple[str, ...] = (), capacity: int = 2) -> str:
    request = c.CreateRequest("swiss", invited, capacity, c.DAY_MS)
    made = await app.challenges.create(
        request, creator="ann", creator_name="ann", invited=[(i, i) for i in invited]
    )
    return made.code


async def played(app: App, code: str, account: str) -> None:
    """``account``'s attempt, seated, started and resigned."""
    _, room = await app.challenges.play(code, account, account, f"sess-{account}")
    await join(app, Peer(f"sess-{account}"), room.id)
    await app.commands.start(room, f"sess-{account}")
    await until(lambda: room.games.get(f"sess-{account}") is not None)
    await app.commands.games.resign(room, f"sess-{account}")
    await until(lambda: room.finished is not None)


async def test_two_accounts_at_once_for_the_last_place_one_gets_it(app: App) -> None:
    code = await create(app, capacity=3)
    await played(app, code, "ann")
    results = await asyncio.gather(
        *(app.challenges.play(code, who, who, f"sess-{who}") for who in ("bob", "cy")),
        return_exceptions=True,
    )
    full = [r for r in results if isinstance(r, ChallengeFull)]
    rooms = [r for r in results if not isinstance(r, BaseException)]
    assert (len(full), len(rooms)) == (0, 2)  # three places: both fit
    results = await asyncio.gather(
        *(app.challenges.play(code, who, who, f"sess-{who}") for who in ("dee", "eve")),
        return_exceptions=True,
    )
    assert all(isinstance(r, ChallengeFull) for r in results)
    code = await create(app, capacity=2)
    await played(app, code, "ann")
    results = await asyncio.gather(
        *(app.challenges.play(code, who, who, f"sess-{who}") for who in ("bob", "cy")),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["ChallengeFull", "tuple"]
    assert len((await app.challenges.load(code)).entries) == 2


async def test_one_account_on_two_connections_at_once_gets_one_attempt(app: App) -> None:
    code = await create(app)
    results = await asyncio.gather(
        app.challenges.play(code, "ann", "ann", "sess-1"),
        app.challenges.play(code, "ann", "ann", "sess-2"),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["ChallengePlayed", "tuple"]


async def test_an_attempt_nobody_sat_in_gets_a_new_room_later(app: App, clock: FakeClock) -> None:
    code = await create(app)
    _, first = await app.challenges.play(code, "ann", "ann", "sess-dead")  # then the process died
    with pytest.raises(ChallengePlayed):  # another connection may be about to sit: not yet
        await app.challenges.play(code, "ann", "ann", "sess-new")
    clock.advance(ORPHAN_AFTER_MS)
    _, second = await app.challenges.play(code, "ann", "ann", "sess-new")
    assert second.id != first.id
    assert (await app.challenges.load(code)).entries["ann"].room == second.id
    with pytest.raises(NotAllowed):  # the old room's seat stays the dead session's
        await join(app, Peer("sess-new"), first.id)
    await join(app, Peer("sess-new"), second.id)
    clock.advance(ORPHAN_AFTER_MS)
    with pytest.raises(ChallengePlayed):  # seated: that is the attempt
        await app.challenges.play(code, "ann", "ann", "sess-3")


async def test_settling_at_once_everywhere_settles_and_rates_once(app: App) -> None:
    code = await create(app, invited=("bob",))
    await played(app, code, "ann")
    await played(app, code, "bob")
    await asyncio.gather(*(app.challenges.settle(code) for _ in range(5)))
    events = [c.decode(e.data) for e in await app.store.read(c.challenge_stream(code))]
    assert [type(e) for e in events].count(c.ChallengeSettled) == 1
    table = await app.ratings.catch_up("swiss")
    assert [r for r in table.races if r == code] == [code]
    assert {change.account for change in table.races[code]} == {"ann", "bob"}
    assert table.version == 1  # one race_rated, however many tried


async def test_a_settlement_whose_rating_failed_is_rated_by_the_next_sweep(app: App) -> None:
    """As after a kill -9 between the settlement and the rating: the sweep rates it, long
    before the window closes."""
    code = await create(app, invited=("bob",))
    await played(app, code, "ann")
    rating = app.challenges.on_settled

    async def store_down(challenge: c.Challenge) -> None:
        raise StoreError("the store went away")

    app.challenges.on_settled = store_down
    await played(app, code, "bob")  # the listener settles it, and the rating fails
    await until(lambda: not app.challenge_sweep._spawned)
    assert (await app.challenges.load(code)).status is c.ChallengeStatus.SETTLED
    assert code not in (await app.ratings.catch_up("swiss")).races
    app.challenges.on_settled = rating
    await app.challenge_sweep.sweep()
    assert code in (await app.ratings.catch_up("swiss")).races
    assert await app.store.index_get(c.OPEN_INDEX, code) is None


async def test_a_challenges_room_is_watched_once_the_reader_has_played(app: App) -> None:
    code = await create(app, invited=("bob",))
    await played(app, code, "ann")
    ann_room = (await app.challenges.load(code)).entries["ann"].room
    room = await app.commands.room(ann_room)
    for reader in (None, "bob", "cy"):
        assert await app.challenges.hidden_from(room, reader) is not None
    assert await app.challenges.hidden_from(room, "ann") is None
    await played(app, code, "bob")
    assert await app.challenges.hidden_from(room, "bob") is None
    await app.challenges.settle(code)
    assert await app.challenges.hidden_from(room, None) is None  # settled: anyone
