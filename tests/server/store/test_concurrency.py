"""Many writers at one expected version: exactly one wins, the stream has no gap and no double."""

from __future__ import annotations

import asyncio

from server.store import EventStore
from shared.errors import WrongExpectedVersion

WRITERS = 50
ROUNDS = 50


async def test_one_writer_wins_each_round_and_the_stream_stays_whole(store: EventStore) -> None:
    stream = "{race}:game:contended"
    winners: list[int] = []
    for round_ in range(ROUNDS):
        expected = await store.last_version(stream)
        results = await asyncio.gather(
            *(
                store.append(
                    stream,
                    [
                        {"type": "moved", "writer": writer, "round": round_, "part": part}
                        for part in range(1 + writer % 3)
                    ],
                    expected_version=expected,
                )
                for writer in range(WRITERS)
            ),
            return_exceptions=True,
        )
        won = [(w, r) for w, r in enumerate(results) if isinstance(r, int)]
        lost = [r for r in results if isinstance(r, WrongExpectedVersion)]
        assert len(won) == 1, results
        assert len(lost) == WRITERS - 1
        writer, version = won[0]
        assert version == expected + 1 + writer % 3
        assert all(r.expected == expected and r.actual is not None for r in lost)
        winners.append(writer)

    events = await store.read(stream)
    assert [e.version for e in events] == list(range(1, len(events) + 1))
    assert len(events) == await store.last_version(stream)
    by_round = [[e.data for e in events if e.data["round"] == round_] for round_ in range(ROUNDS)]
    for round_, (writer, appended) in enumerate(zip(winners, by_round, strict=True)):
        assert [(d["writer"], d["part"]) for d in appended] == [
            (writer, part) for part in range(1 + writer % 3)
        ], round_


async def test_writers_on_their_own_streams_all_succeed(store: EventStore) -> None:
    async def writer(n: int) -> None:
        for version in range(10):
            await store.append(f"{{r}}:game:p{n}", [{"i": version}], expected_version=version)

    await asyncio.gather(*(writer(n) for n in range(WRITERS)))
    for n in range(WRITERS):
        assert [e.data["i"] for e in await store.read(f"{{r}}:game:p{n}")] == list(range(10))


async def test_retrying_writers_interleave_without_losing_an_event(store: EventStore) -> None:
    """Each writer re-reads the version after a conflict, as the server does."""
    stream = "{r}:room"

    async def writer(n: int) -> int:
        conflicts = 0
        for i in range(5):
            while True:
                version = await store.last_version(stream)
                try:
                    await store.append(stream, [{"w": n, "i": i}], expected_version=version)
                    break
                except WrongExpectedVersion:
                    conflicts += 1
        return conflicts

    await asyncio.gather(*(writer(n) for n in range(10)))
    events = await store.read(stream)
    assert [e.version for e in events] == list(range(1, 51))
    for n in range(10):
        assert [e.data["i"] for e in events if e.data["w"] == n] == list(range(5))
