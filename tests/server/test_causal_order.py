"""Causal delivery (docs/protocol.md, "Causal order"): a room's end reaches a connection after
every game event it was decided from, on any process. Two processes on one store (memory, a real
Redis); the watcher's process loses a game's wake-ups, so the end arrives before the moves it
was decided from: the hub holds the end and reads the game first."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from server.race.domain.events import RaceFinished
from server.race.domain.fold import Change, RoomChanged, fold_stored, waits_for
from server.race.domain.model import Room, game_stream
from server.race.services.causal_fold import fold_in_order
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import MemoryEventStore, Wakeup
from shared import legal_moves
from tests.server.causal import violations
from tests.server.parts import Peer, join, open_app, racing, until
from tests.server.race.services.test_hub import Stores, stores  # noqa: F401  (the fixture)

RESIGNED = "resigned"
SLOW_CATCH_UP = Config(catch_up_s=3600)  # no periodic catch-up: the hold alone must do it


async def test_the_end_waits_for_the_moves_it_was_decided_from(stores: Stores) -> None:  # noqa: F811
    clock = FakeClock()
    writer = open_app(stores.new(), clock, SLOW_CATCH_UP)
    watcher = open_app(stores.new(), clock, SLOW_CATCH_UP)
    try:
        ann, bob = Peer("ann"), Peer("bob")
        room = await racing(writer, clock, [ann, bob])
        far = Peer("far")
        await join(watcher, far, room.id, "spectator")
        await watcher.hub.sync(watcher.hub.rooms[room.id])
        subscription = watcher.hub._subscription
        assert subscription is not None
        lost: list[Wakeup] = []
        deliver = subscription.deliver
        ann_game = game_stream(room.id, "ann")

        def lose_anns_game(wakeup: Wakeup) -> None:
            (lost.append if wakeup.stream == ann_game else deliver)(wakeup)

        subscription.deliver = lose_anns_game  # type: ignore[method-assign]
        game = room.games["ann"]
        for cid in range(6):
            assert game.state is not None
            await writer.commands.games.move(room, "ann", cid, sorted(legal_moves(game.state))[0])
        await writer.commands.games.resign(room, "bob")
        await writer.commands.games.resign(room, "ann")
        await until(lambda: room.finished is not None)
        assert room.finished is not None
        assert room.finished.games == {"ann": 8, "bob": 2}  # its causes: each game's version
        await until(lambda: bool(far.of("finished")))
        assert lost  # the watcher's process never heard of ann's moves from a wake-up
        watched = watcher.hub.rooms[room.id]
        assert watched.games["ann"].version == 8
        assert violations(far.messages) == []
        ends = [i for i, m in enumerate(far.messages) if m["type"] == "finished"]
        resigned = [
            i
            for i, m in enumerate(far.messages)
            if m["type"] == "game_event"
            and m["player"] == "ann"
            and m["event"]["type"] == "resigned"
        ]
        assert resigned < ends
        subscription.deliver = deliver  # type: ignore[method-assign]
    finally:
        await watcher.close_parts()
        await writer.close_parts()


async def test_a_racer_watching_under_a_delay_is_told_the_end_after_the_watched_moves(
    stores: Stores,  # noqa: F811
) -> None:
    """With a spectator delay a finished racer watching a rival sees the rival's moves late:
    the end waits with them, or it would come before the moves it was decided from."""
    clock = FakeClock()
    app = open_app(stores.new(), clock)
    try:
        ann, bob = Peer("ann"), Peer("bob")
        room = await racing(app, clock, [ann, bob], spectator_delay_ms=5000)
        await app.commands.games.resign(room, "ann")
        member = app.delivery.audience(room).members[ann]
        app.delivery.watch(room, member, "bob")
        game = room.games["bob"]
        for cid in range(3):
            assert game.state is not None
            await app.commands.games.move(room, "bob", cid, sorted(legal_moves(game.state))[0])
        await app.commands.games.resign(room, "bob")
        await until(lambda: room.finished is not None)
        assert not ann.of("finished")  # bob's last moves are still under the delay
        assert bob.of("finished")  # a racer who watches nobody is told at once
        await app.commands.rematch(room, "bob", creator="bob")  # bob knows the end: he asks
        assert [m for m in ann.of("room") if m["room"]["rematch"]] == []
        clock.advance(5000)
        await until(lambda: bool(ann.of("finished")))
        await until(lambda: any(m["room"]["rematch"] for m in ann.of("room")))
        assert violations(ann.messages) == []
        assert violations(bob.messages) == []
    finally:
        await app.close_parts()


def test_an_end_written_without_its_causes_waits_for_nothing() -> None:
    """An end stored before it named its causes (``games`` absent) folds as it always did."""
    from server.race.domain.events import decode, encode

    end = encode(RaceFinished(1, "all_done", ()))
    del end["games"]
    assert decode(end) == RaceFinished(1, "all_done", ())
    assert waits_for(Room("r"), end) == {}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (
            [
                {"type": "game_event", "player": "a", "version": 1, "event": {"type": "x"}},
                {
                    "type": "finished",
                    "ranking": [{"player": "a", "status": "resigned", "moves": 0}],
                },
                {"type": "game_event", "player": "a", "version": 2, "event": {"type": "resigned"}},
            ],
            1,
        ),
        (
            [
                {"type": "game_event", "player": "a", "version": 1, "event": {"type": "x"}},
                {"type": "game_event", "player": "a", "version": 3, "event": {"type": "moved"}},
            ],
            1,
        ),
        (
            [
                {
                    "type": "progress",
                    "player": "a",
                    "status": "playing",
                    "foundation": 0,
                    "moves": 0,
                },
                {
                    "type": "finished",
                    "ranking": [{"player": "a", "status": "over", "foundation": 1, "moves": 2}],
                },
            ],
            1,
        ),
        (
            [
                {"type": "room", "room": {"rematch": "r2"}},
                {"type": "finished", "ranking": []},
            ],
            1,
        ),
    ],
)
def test_the_checker_finds_an_effect_before_its_cause(
    messages: list[dict[str, object]], expected: int
) -> None:
    assert len(violations(messages)) == expected


async def test_an_end_whose_causes_the_store_lost_is_folded_all_the_same(
    store: MemoryEventStore, clock: FakeClock
) -> None:
    """Read, and the game events an end names are not there (a failover lost them): the end is
    folded after one read, never waited for forever; the stream is the truth."""
    app = open_app(store, clock)
    try:
        room = await racing(app, clock, [Peer("ann"), Peer("bob")])
        for player in ("ann", "bob"):
            await app.commands.games.resign(room, player)
        await until(lambda: room.finished is not None)
        events = await store.read(room.stream)
    finally:
        await app.close_parts()
    behind = Room(room.id)
    fold_stored(behind, events[:-1])  # the room up to its end; no game event folded
    reads: list[list[str]] = []
    told: list[Change] = []

    async def read_nothing(_: Room, streams: Sequence[str]) -> None:
        reads.append(list(streams))

    await fold_in_order(behind, events[-1:], lambda _, changes: told.extend(changes), read_nothing)
    assert reads == [sorted(g.stream for g in behind.games.values())]
    assert behind.finished == room.finished
    assert [type(c) for c in told] == [RoomChanged]
