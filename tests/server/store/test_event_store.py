"""The whole store (``EventStore``) on every backend: its life cycle beside the capabilities."""

from __future__ import annotations

from server.store import EventStore, EventStreams, Indexes, Wakeups


async def test_ping_is_true_when_the_store_serves(store: EventStore) -> None:
    assert await store.ping() is True


async def test_usable_as_an_async_context_manager(store: EventStore) -> None:
    async with store as same:
        assert same is store
        assert await same.append("s", [{"type": "x"}], expected_version=0) == 1


def test_the_store_is_each_capability(store: EventStore) -> None:
    assert isinstance(store, EventStreams)
    assert isinstance(store, Indexes)
    assert isinstance(store, Wakeups)
