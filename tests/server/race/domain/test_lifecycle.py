"""The room lifecycle: a table keyed by (status, event type), and only that table."""

from __future__ import annotations

import itertools

import pytest

from server.kernel.errors import WrongStatus
from server.race.domain.events import (
    EVENT_TYPES,
    CountdownStarted,
    PlayerAway,
    PlayerJoined,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomCreated,
)
from server.race.domain.lifecycle import ENDED, TRANSITIONS, RoomStatus, allows, next_status


def test_the_happy_path_of_a_room() -> None:
    status = RoomStatus.NEW
    for kind in (RoomCreated, PlayerJoined, CountdownStarted, RaceStarted, RaceFinished):
        status = next_status(status, kind)
    assert status is RoomStatus.FINISHED


def test_every_pair_outside_the_table_is_refused() -> None:
    for status, kind in itertools.product(RoomStatus, EVENT_TYPES.values()):
        if (status, kind) in TRANSITIONS:
            assert allows(status, kind)
            continue
        assert not allows(status, kind)
        with pytest.raises(WrongStatus) as info:
            next_status(status, kind)
        assert info.value.code == "wrong_status"


def test_ended_rooms_take_no_event_but_a_rematch_and_every_event_type_has_a_row() -> None:
    after_the_end = {pair: to for pair, to in TRANSITIONS.items() if pair[0] in ENDED}
    assert after_the_end == {(RoomStatus.FINISHED, RematchOffered): RoomStatus.FINISHED}
    assert {kind for _, kind in TRANSITIONS} == set(EVENT_TYPES.values())


def test_presence_is_folded_until_the_race_ends() -> None:
    for status in (RoomStatus.LOBBY, RoomStatus.COUNTDOWN, RoomStatus.RACING):
        assert next_status(status, PlayerAway) is status
    assert not allows(RoomStatus.FINISHED, PlayerAway)
