"""Live logins on the in-memory store: a key revoked by anyone is told to the logins holding it,
once, and a released login is not."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.accounts.domain.accounts import key_hash
from server.accounts.services.accounts import Accounts
from server.accounts.services.logins import Logins
from server.runtime.clock import FakeClock
from server.store import MemoryEventStore
from tests.server.accounts.test_service import accounts


@pytest.fixture
async def store() -> AsyncIterator[MemoryEventStore]:
    s = MemoryEventStore()
    yield s
    await s.aclose()


async def settled(logins: Logins) -> None:
    """Until the checks the wake-ups started are done."""
    for _ in range(100):
        await asyncio.sleep(0)
        if not logins._checks:
            return
    raise AssertionError("the checks never ended")


async def test_a_revoked_key_is_told_to_its_logins_once(store: MemoryEventStore) -> None:
    service: Accounts = accounts(store, FakeClock())
    logins = Logins(store, service)
    first = await service.register("Ann", "password one", address="a")
    second = await service.login("ann", "password one", address="a")
    told: list[str] = []
    try:
        await logins.hold("ann", key_hash(first.key), lambda: told.append("first"))
        await logins.hold("ann", key_hash(first.key), lambda: told.append("first again"))
        kept = await logins.hold("ann", key_hash(second.key), lambda: told.append("second"))
        await service.logout(first.key)
        await settled(logins)
        assert sorted(told) == ["first", "first again"]
        await service.login("ann", "password one", address="a")  # another change: no news
        await settled(logins)
        assert len(told) == 2

        await logins.release(kept)
        await service.logout(second.key)
        await settled(logins)
        assert len(told) == 2  # released: not told
        assert logins._held == {}

        # A key revoked before it is held is told at once.
        await logins.hold("ann", key_hash(first.key), lambda: told.append("late"))
        assert told[-1] == "late"
    finally:
        await logins.aclose()
