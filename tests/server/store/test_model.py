"""Seeded random operations on each backend, checked against a plain dict-of-lists model."""

from __future__ import annotations

import random

import pytest

from server.store import EventStore
from shared.errors import WrongExpectedVersion

STREAMS = ["{a}:room", "{a}:game:x", "{b}:room", "{b}:game:y"]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_operations_match_the_model(store: EventStore, seed: int) -> None:
    rng = random.Random(seed)
    model: dict[str, list[dict[str, int]]] = {}
    for step in range(300):
        stream = rng.choice(STREAMS)
        have = model.get(stream, [])
        op = rng.random()
        if op < 0.5:
            expected = len(have) if rng.random() < 0.7 else rng.randrange(0, len(have) + 3)
            batch = [{"step": step, "i": i} for i in range(rng.randint(1, 3))]
            if expected == len(have):
                model[stream] = have + batch
                new_version = await store.append(stream, batch, expected_version=expected)
                assert new_version == len(model[stream])
            else:
                with pytest.raises(WrongExpectedVersion) as caught:
                    await store.append(stream, batch, expected_version=expected)
                assert caught.value.actual == len(have)
        elif op < 0.8:
            after = rng.randrange(0, len(have) + 2)
            limit = rng.choice([None, 0, 1, 2, 5])
            want = have[after:] if limit is None else have[after : after + limit]
            got = await store.read(stream, after=after, limit=limit)
            assert [(e.version, e.data) for e in got] == [
                (after + 1 + i, data) for i, data in enumerate(want)
            ]
        elif op < 0.95:
            assert await store.last_version(stream) == len(have)
        else:
            await store.expire(stream, 0)
            model.pop(stream, None)
        assert await store.streams() == sorted(model)
