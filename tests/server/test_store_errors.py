"""The store's errors seen from above it: callers catch ``StoreError`` (what the store maps
redis-py's errors to) and ride out a store that is down, without catching ``Exception``."""

from __future__ import annotations

from collections.abc import Sequence

from structlog.testing import capture_logs

from server.race.services.directory import ROOMS_INDEX
from server.runtime.clock import FakeClock
from server.runtime.config import Config
from server.store import IndexEntry, MemoryEventStore, StoreUnavailable, Wakeup
from shared import legal_moves
from tests.server.parts import Peer, join, open_app, racing, until

FAST = Config(catch_up_s=0.02)


class FlakyStore(MemoryEventStore):
    """The memory store, down for the next ``failing`` calls of the operations a test names."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = 0

    def _fail(self) -> None:
        if self.failing:
            self.failing -= 1
            raise StoreUnavailable("Redis is unreachable: (a test)")

    async def last_versions(self, streams: Sequence[str]) -> dict[str, int]:
        self._fail()
        return await super().last_versions(streams)

    async def index_range(self, index: str, *, max_score: int | None = None) -> list[IndexEntry]:
        if index == ROOMS_INDEX:  # the directory alone: the race clock's due polls go on
            self._fail()
        return await super().index_range(index, max_score=max_score)


async def test_the_periodic_catch_up_rides_out_a_store_that_is_down() -> None:
    """The watcher loses its wake-ups while the store cannot answer the catch-up: once the
    store is back, the next pass brings the moves all the same."""
    store = FlakyStore()
    clock = FakeClock()
    writer = open_app(store, clock, FAST)
    watcher = open_app(store, clock, FAST)
    try:
        room = await racing(writer, clock, [Peer("ann")])
        await join(watcher, Peer("far"), room.id, "spectator")
        seen = watcher.hub.rooms[room.id]
        subscription = watcher.hub._subscription
        assert subscription is not None
        dropped: list[Wakeup] = []
        subscription.deliver = dropped.append  # type: ignore[method-assign]
        with capture_logs() as logs:
            store.failing = 3
            game = room.games["ann"]
            for cid in range(3):
                assert game.state is not None
                await writer.commands.games.move(
                    room, "ann", cid, sorted(legal_moves(game.state))[0]
                )
            await until(lambda: seen.games["ann"].version == game.version)
        assert store.failing == 0  # both processes' catch-ups met the store down
        failed = [entry for entry in logs if entry["event"] == "periodic_catch_up_failed"]
        assert failed
        assert {(entry["code"], entry["reason"]) for entry in failed} == {
            ("store_unavailable", "Redis is unreachable: (a test)")
        }
        assert dropped  # caught up by the catch-up, not by a wake-up
    finally:
        await watcher.close_parts()
        await writer.close_parts()


async def test_the_warm_up_waits_for_a_store_still_starting() -> None:
    store = FlakyStore()
    clock = FakeClock()
    app = open_app(store, clock)
    try:
        store.failing = 1
        with capture_logs() as logs:
            await app.warm_up()
        assert app.warmed.is_set()
        assert [entry["event"] for entry in logs][:1] == ["store_not_ready"]
    finally:
        await app.close_parts()
