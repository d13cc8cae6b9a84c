"""Background rounds: every so often, and sooner when woken."""

from __future__ import annotations

import asyncio

from server.runtime.tasks import Background
from shared.errors import ArenaError, ServerError


async def test_a_round_comes_every_period_and_sooner_when_woken() -> None:
    rounds: list[float] = []
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()

    async def work() -> None:
        rounds.append(loop.time())

    background = Background()
    background.every(60.0, work, lambda _exc: None, wake=woken, settle_s=0.01)
    try:
        await asyncio.sleep(0.1)
        assert len(rounds) == 1  # the first at once, the next not for a minute
        woken.set()
        woken.set()  # a burst of reasons: one round
        await asyncio.sleep(0.2)
        assert len(rounds) == 2
    finally:
        await background.aclose()


async def test_a_wake_during_a_round_brings_another_right_after() -> None:
    rounds = 0
    woken = asyncio.Event()
    during = asyncio.Event()

    async def work() -> None:
        nonlocal rounds
        rounds += 1
        if rounds == 1:
            woken.set()  # something to do came up while this round ran
            during.set()

    background = Background()
    background.every(60.0, work, lambda _exc: None, wake=woken, settle_s=0.01)
    try:
        await asyncio.wait_for(during.wait(), 1)
        await asyncio.sleep(0.2)
        assert rounds == 2
    finally:
        await background.aclose()


async def test_a_failed_round_is_told_and_the_next_comes_all_the_same() -> None:
    failures: list[ArenaError] = []
    rounds = 0

    async def work() -> None:
        nonlocal rounds
        rounds += 1
        if rounds == 1:
            raise ServerError("the store is down")

    background = Background()
    background.every(0.01, work, failures.append)
    try:
        await asyncio.sleep(0.2)
        assert rounds >= 2
        assert [f.reason for f in failures] == ["the store is down"]
    finally:
        await background.aclose()
