"""A daily attempt's room: only its player may sit in it, and an attempt left without a seated
room by a process that died (claimed, then nothing) is given a new room, never a second game."""

from __future__ import annotations

import pytest

from server.app import App
from server.daily.domain import days as d
from server.daily.services.challenge import ORPHAN_AFTER_MS
from server.kernel.errors import DailyPlayed, NotAllowed
from server.runtime.clock import FakeClock
from server.store import MemoryEventStore
from tests.server.parts import Peer, join, open_app

VARIANT = "swiss"


async def claim_then_die(app: App, clock: FakeClock, account: str) -> str:
    """What a process that died right after claiming left behind: the claim alone."""
    day = d.day_of(clock.now_ms())
    await app.daily.deal(VARIANT, day)
    stream = d.attempt_stream(VARIANT, day, account)
    claimed = d.AttemptClaimed(clock.now_ms(), account, account, "x" * 16)
    await app.store.append(stream, [d.encode(claimed)], expected_version=0)
    return stream


async def test_someone_elses_daily_room_cannot_be_sat_in() -> None:
    """The directory lists the room before its player sits: a stranger who joined it as a
    player would play the day's deal, then their own attempt knowing it."""
    clock = FakeClock()
    app = open_app(MemoryEventStore(), clock)
    try:
        room = await app.daily.attempt(VARIANT, "acct-ann", "ann", "sess-ann")
        with pytest.raises(NotAllowed, match="daily challenge attempt"):
            await join(app, Peer("sess-bob"), room.id)
        await join(app, Peer("sess-ann"), room.id)
        assert list((await app.commands.room(room.id)).seats) == ["sess-ann"]
    finally:
        await app.close_parts()


async def test_an_attempt_whose_process_died_after_the_claim_gets_its_room_later() -> None:
    clock = FakeClock()
    app = open_app(MemoryEventStore(), clock)
    try:
        stream = await claim_then_die(app, clock, "acct-ann")
        # At once it may be another connection making the room: refused, as before.
        with pytest.raises(DailyPlayed):
            await app.daily.attempt(VARIANT, "acct-ann", "ann", "sess-2")
        clock.advance(ORPHAN_AFTER_MS)
        room = await app.daily.attempt(VARIANT, "acct-ann", "ann", "sess-2")
        assert room.settings.daily == d.daily_tag(VARIANT, d.day_of(clock.now_ms()))
        kinds = [type(d.decode(e.data)) for e in await app.store.read(stream)]
        assert kinds == [d.AttemptClaimed, d.AttemptRoom]
        await join(app, Peer("sess-2"), room.id)
        # Seated now: that is the attempt, whatever happens to this process.
        clock.advance(ORPHAN_AFTER_MS)
        with pytest.raises(DailyPlayed):
            await app.daily.attempt(VARIANT, "acct-ann", "ann", "sess-3")
    finally:
        await app.close_parts()


async def test_a_room_made_but_never_sat_in_is_replaced_and_stays_closed_to_others() -> None:
    """The process died between making the room and seating its player: a new room, and the
    old one's seat stays reserved for the dead connection's session (nobody plays it)."""
    clock = FakeClock()
    app = open_app(MemoryEventStore(), clock)
    try:
        first = await app.daily.attempt(VARIANT, "acct-ann", "ann", "sess-dead")
        clock.advance(ORPHAN_AFTER_MS)
        second = await app.daily.attempt(VARIANT, "acct-ann", "ann", "sess-new")
        assert second.id != first.id
        day = d.day_of(clock.now_ms())
        entry = await app.store.index_get(d.attempts_index(VARIANT, day), "acct-ann")
        assert entry is not None
        assert entry.value.decode() == second.id  # the standings follow the new room
        with pytest.raises(NotAllowed):
            await join(app, Peer("sess-new"), first.id)
        await join(app, Peer("sess-new"), second.id)
    finally:
        await app.close_parts()
