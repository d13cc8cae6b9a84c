"""Seat files: where they live (XDG), who may read them (0600), and which seat a run takes back."""

from __future__ import annotations

import stat
from pathlib import Path

from client.seats import RACE, SOLO, STALE_MS, Seat, SeatStore, state_dir


def seat(room: str, name: str = "ann", kind: str = RACE, at: int = 1_000) -> Seat:
    return Seat("ws://h:1", room, "p1", name, f"tok-{room}-{name}", kind, at)


def test_the_state_directory_follows_xdg(tmp_path: Path) -> None:
    assert state_dir({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "solitaire"
    # A relative XDG path is invalid by the specification: ignored.
    assert state_dir({"XDG_STATE_HOME": "rel"}) == Path.home() / ".local/state/solitaire"
    assert state_dir({}) == Path.home() / ".local/state/solitaire"


def test_a_seat_file_is_private_and_round_trips(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "solitaire")
    store.save(seat("abc"))
    (path,) = (tmp_path / "solitaire").iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "solitaire").stat().st_mode) == 0o700
    assert store.load("ws://h:1", "ABC", "ann", 2_000) == seat("abc")  # codes in any case
    assert store.load("ws://h:1", "abc", "bob", 2_000) is None  # someone else's seat
    assert store.load("ws://other:1", "abc", "ann", 2_000) is None
    store.forget("ws://h:1", "abc", "ann")
    assert store.load("ws://h:1", "abc", "ann", 2_000) is None


def test_the_latest_solo_seat_and_stale_ones(tmp_path: Path) -> None:
    store = SeatStore(tmp_path)
    store.save(seat("one", kind=SOLO, at=1_000))
    store.save(seat("two", kind=SOLO, at=5_000))
    store.save(seat("race", kind=RACE, at=9_000))
    latest = store.latest("ws://h:1", "ann", SOLO, 10_000)
    assert latest is not None
    assert latest.room == "two"
    assert store.latest("ws://h:1", "ann", SOLO, 5_000 + STALE_MS + 1) is None  # all stale
    assert list(tmp_path.glob("seat-*.json")) != []  # the race seat is younger: still there


def test_a_damaged_file_is_no_seat(tmp_path: Path) -> None:
    store = SeatStore(tmp_path)
    store.save(seat("abc"))
    (path,) = tmp_path.glob("seat-*.json")
    path.write_text("{not json")
    assert store.load("ws://h:1", "abc", "ann", 2_000) is None
