"""An attempt read from its solo room, whatever became of the room: never sat in, being
played, done, ended by the time limit, or closed before its game began."""

from __future__ import annotations

from server.daily.domain.attempts import Outcome, attempt_in
from server.race.domain.events import RaceFinished, RoomClosed
from tests.server.race.domain.test_decide import apply, joined, lobby, racing


def test_a_room_nobody_sat_in_is_no_attempt() -> None:
    assert attempt_in(lobby(capacity=1), "ann", now=5) is None


def test_a_seat_before_the_start_is_playing_with_nothing_yet() -> None:
    found = attempt_in(joined(lobby(capacity=1), "ann"), "acct", now=5)
    assert found is not None
    assert (found.outcome, found.elapsed_ms, found.foundations) == (Outcome.PLAYING, 0, 0)


def test_a_game_on_counts_its_time_up_to_now() -> None:
    room = racing("ann")
    found = attempt_in(room, "acct", now=61_010)
    assert found is not None
    assert (found.outcome, found.elapsed_ms, found.account) == (Outcome.PLAYING, 60_000, "acct")


def test_the_time_limit_ends_a_game_on_as_over() -> None:
    room = racing("ann")
    apply(room, [RaceFinished(61_010, "time_limit", ())])
    found = attempt_in(room, "acct", now=99_999)
    assert found is not None
    assert (found.outcome, found.elapsed_ms) == (Outcome.OVER, 60_000)


def test_a_room_closed_before_its_game_began_is_over_with_nothing() -> None:
    room = joined(lobby(capacity=1), "ann")
    apply(room, [RoomClosed(600_000, "idle")])
    found = attempt_in(room, "acct", now=700_000)
    assert found is not None
    assert (found.outcome, found.elapsed_ms, found.foundations) == (Outcome.OVER, 0, 0)
    assert found.outcome.done
