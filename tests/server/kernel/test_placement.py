"""server.kernel.placement: a room's home worker, and ids drawn homed on a worker."""

from __future__ import annotations

import itertools
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.kernel.placement import MAX_DRAWS, draw_room_id, home_worker

IDS = st.text(alphabet="abcdefghijkmnpqrstuvwxyz23456789", min_size=1, max_size=12)


@given(IDS, st.integers(min_value=1, max_value=64))
def test_every_room_has_one_home_among_the_workers(room_id: str, workers: int) -> None:
    home = home_worker(room_id, workers)
    assert 0 <= home < workers
    assert home == home_worker(room_id, workers)  # the same answer every time


def test_the_home_is_the_same_in_every_process_and_release() -> None:
    """CRC-32, not hash() (salted per process): workers started apart, and restarted ones,
    must agree; a vector pins it, since a change would re-home live rooms."""
    assert zlib.crc32(b"k2x7m4qa") == 3_314_566_958
    assert [home_worker("k2x7m4qa", n) for n in (1, 2, 3, 4)] == [0, 0, 2, 2]


@given(st.integers(min_value=1, max_value=16), st.data())
def test_a_worker_draws_only_ids_homed_on_itself(workers: int, data: st.DataObject) -> None:
    index = data.draw(st.integers(min_value=0, max_value=workers - 1))
    counter = itertools.count()
    room_id = draw_room_id(lambda: f"r{next(counter)}", index, workers)
    assert home_worker(room_id, workers) == index


def test_drawing_gives_up_loudly_instead_of_looping_for_ever() -> None:
    draws = itertools.count()

    def always_the_same() -> str:
        next(draws)
        return "a"

    homed_elsewhere = 1 - home_worker("a", 2)  # asked of the worker "a" is not homed on
    with pytest.raises(RuntimeError, match="no room id"):
        draw_room_id(always_the_same, homed_elsewhere, 2)
    assert next(draws) == MAX_DRAWS
