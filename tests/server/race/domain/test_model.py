"""The room model: a compacted room keeps its summary and costs a few KiB, whatever its games'
length (what an ended room waiting to be unloaded holds; docs/benchmarks.md, "Memory")."""

from __future__ import annotations

import gc
import random
import tracemalloc
from typing import Any, NamedTuple

from server.race.domain import decide as d
from server.race.domain.events import encode
from server.race.domain.fold import fold_stored
from server.race.domain.model import Room, room_stream
from shared import legal_moves

COMPACT_GOAL = 8 * 1024  # bytes a compacted room may hold
ROOM = "k2x7m4qa"


class Stored(NamedTuple):
    stream: str
    version: int
    data: dict[str, Any]


def _append(room: Room, stream: str, events: list[dict[str, Any]]) -> None:
    first = room.version_of(stream) + 1
    fold_stored(room, [Stored(stream, first + i, e) for i, e in enumerate(events)])


def _room_events(room: Room, events: Any) -> None:
    _append(room, room.stream, [encode(e) for e in events])


def finished_race(racers: int, moves: int, seed: int = 7) -> Room:
    """A race of ``racers`` guests, each playing up to ``moves`` random moves, folded as the
    hub folds it (every event of every stream), then finished."""
    rng = random.Random(seed)
    room = Room(ROOM)
    now = 1_700_000_000_000
    created = d.decide_create(
        {"variant": "swiss", "countdown_ms": 0},
        capacity=racers,
        deck=None,
        seed=f"seed-{seed}",
        salt="00" * 16,
        time_limit_ms=1_200_000,
        creator="c" * 13,
        now=now,
    )
    _room_events(room, [created])
    for i in range(racers):
        player = f"p{i:012x}"
        _room_events(
            room,
            d.decide_join(
                room,
                player,
                name=f"racer {i}",
                token_hash=f"{i:064x}",
                connection=f"abcd1234.{i}",
                now=now,
            ),
        )
    _room_events(room, d.decide_start(room, "p000000000000", now=now))
    _room_events(room, d.decide_go(room, now=now))
    for game in room.games.values():
        _append(room, game.stream, [d.game_start_event(room, now=now)])
        for cid in range(moves):
            assert game.state is not None
            legal = sorted(legal_moves(game.state))
            if not legal:
                break
            now += 1000
            move = d.decide_move(room, game, rng.choice(legal), cid=cid, now=now)
            _append(room, game.stream, [move])
        if not game.progress.status.done:
            _append(room, game.stream, [d.decide_resign(room, game, reason=None, now=now)])
    _room_events(room, d.decide_finish(room, "all_done", now=now))
    assert room.finished is not None
    return room


def held(make: Any) -> tuple[int, Any]:
    """Bytes (traced by tracemalloc) that what ``make`` returns keeps alive."""
    make()  # once before: the interpreter's and the libraries' caches are filled
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, kept
    finally:
        tracemalloc.stop()


def compacted(racers: int, moves: int) -> Any:
    def make() -> Room:
        room = finished_race(racers, moves)
        room.compact()
        return room

    return make


def test_a_compacted_room_keeps_what_its_summary_and_results_show() -> None:
    room = finished_race(4, 60)
    summary, finished = room.summary(), room.finished_message()
    progress = {p: (g.version, g.progress) for p, g in room.games.items()}
    room.compact()
    assert room.compacted
    assert room.summary() == summary
    assert room.finished_message() == finished
    assert {p: (g.version, g.progress) for p, g in room.games.items()} == progress
    assert room.version_of(room_stream(ROOM)) == room.version
    for game in room.games.values():
        assert game.state is None
        assert (game.public, game.reveals, game.seen, game.cids, game.cid_moves) == (
            [],
            [],
            set(),
            {},
            {},
        )
    room.reset()  # folded whole again (server.race.services.hub): nothing compacted about it
    assert not room.compacted


def test_a_compacted_room_costs_a_few_kib_however_long_its_games() -> None:
    full, _ = held(lambda: finished_race(4, 150))
    small, _ = held(compacted(4, 150))
    short, _ = held(compacted(4, 10))
    assert small <= COMPACT_GOAL, f"a compacted room of 4 racers holds {small} bytes"
    assert small < full / 5
    assert small - short < 512  # the games' length is gone with their events
