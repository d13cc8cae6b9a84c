"""Which worker a room lives on: its home, so its connections share one fold and one fan-out.

With ``--workers N`` every worker can serve every room (the store is the shared state), but a
room whose connections are spread over workers is folded, checked for fairness and encoded
once per worker (about a fifth more CPU a move with two). So each room has a home
worker, a pure function of its id; a worker draws the ids of the rooms it creates among those
homed on itself, and a connection that names its room when it opens (``?room=CODE``,
docs/protocol.md) is handed to that room's home.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

MAX_DRAWS = 1000
"""Ids drawn before giving up on one homed here; (1 - 1/N)^1000 is nil for any sane N."""


def home_worker(room_id: str, workers: int) -> int:
    """The index of the worker that is ``room_id``'s home among ``workers`` (CRC-32: the same
    answer in every process and release, unlike ``hash``)."""
    if workers <= 1:
        return 0
    return zlib.crc32(room_id.encode()) % workers


def draw_room_id(draw: Callable[[], str], worker_index: int, workers: int) -> str:
    """A fresh id from ``draw`` whose home is ``worker_index`` (any id with one worker)."""
    for _ in range(MAX_DRAWS):
        room_id = draw()
        if home_worker(room_id, workers) == worker_index:
            return room_id
    raise RuntimeError(f"no room id homed on worker {worker_index} of {workers}")
