"""The pairer leaves out a racer seated in another unfinished room, whichever connection or
process seated them: a player is in one race at a time."""

from __future__ import annotations

from server.runtime.clock import FakeClock
from server.store import MemoryEventStore
from server.tournaments.domain.decide import decide_join
from server.tournaments.domain.events import RacePaired, TournamentCreated, tournament_stream
from tests.server.parts import open_app

MIN = 60_000
ID = "tpairtest1"


async def test_an_account_seated_in_another_race_is_not_paired() -> None:
    store, clock = MemoryEventStore(), FakeClock()
    app = open_app(store, clock)
    try:
        tournaments = app.tournaments
        now = clock.now_ms()
        await tournaments.book.create(
            TournamentCreated(
                at=now, id=ID, name="T", variant="swiss", starts_at=now, length_ms=60 * MIN,
                time_limit_ms=3 * MIN, race_size=2, rated=False, berserk=True, streaks=True,
                creator=None, creator_name=None,
            )
        )  # fmt: skip
        # ann and bob rank first (ratings): without the check they are the race, cy waits.
        for account, rating in (("ann", 2000), ("bob", 1900), ("cy", 1500)):
            await tournaments.book.run(
                ID, lambda t, n, a=account, r=rating: decide_join(t, a, a.title(), r, n)
            )
            # followed on a connection that is not busy: its own connection knows nothing
            await tournaments.presence.note(ID, account, f"s-{account}", now, busy=False)
        quick = await app.commands.create_room(
            {"variant": "swiss", "capacity": 2}, creator="other-connection"
        )
        await app.commands.join(
            quick, "q-ann", name="Ann", token="tok-q-ann", connection="c2", account="ann"
        )
        clock.advance(20_000)  # everyone has waited long enough for a round (12 s here)
        tournament = await tournaments.book.get(ID)
        await tournaments.pairer.pair(tournament)

        stored = [e.data for e in await store.read(tournament_stream(ID))]
        paired = [e["players"] for e in stored if e["type"] == RacePaired.TYPE]
        assert paired == [["bob", "cy"]]
        assert (await tournaments.book.get(ID)).entrants["ann"].racing is None

        # ann leaves that room (still a live lobby, her latest seat): free to be paired again
        await app.commands.leave(quick, "q-ann")
        assert await app.commands.directory.is_live(quick.id)
        now = clock.now_ms()
        await tournaments.book.run(ID, lambda t, n: decide_join(t, "dee", "Dee", 1000, n))
        for account in ("ann", "dee"):
            await tournaments.presence.note(ID, account, f"s-{account}", now, busy=False)
        clock.advance(20_000)
        await tournaments.pairer.pair(await tournaments.book.get(ID))
        stored = [e.data for e in await store.read(tournament_stream(ID))]
        paired = [e["players"] for e in stored if e["type"] == RacePaired.TYPE]
        assert paired == [["bob", "cy"], ["ann", "dee"]]
    finally:
        await app.stop()
