"""When a game may be exported (server.race.domain.export): never before its race is over, the
spectator delay has shown its end, or a daily's day is over; and by a racer's id or name."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from server.kernel.days import day_end_ms
from server.kernel.errors import NoSuchPlayer, NotAllowed, WrongStatus
from server.race.domain.events import RaceFinished, RoomCreated
from server.race.domain.export import export_header, exportable_game
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Game, Room, Seat, game_stream
from server.race.domain.progress import PlayerStatus, Progress

DAY = dt.date(2026, 12, 4)
META = RoomCreated(
    at=0,
    variant="swiss",
    seed="s3cret",
    deck=None,
    salt="00",
    commitment="ff",
    deal_version=1,
    capacity=2,
    countdown_ms=0,
    time_limit_ms=0,
    spectator_delay_ms=0,
    open_seed=False,
    winnable=False,
    creator=None,
)


def _room(*, finished_at: int | None, **settings: object) -> Room:
    room = Room("k2x7m4qa", meta=replace(META, **settings))  # type: ignore[arg-type]
    room.status = RoomStatus.RACING if finished_at is None else RoomStatus.FINISHED
    room.seats["p1"] = Seat("p1", "Ann", "", 0)
    game = Game("p1", game_stream(room.id, "p1"), version=3)
    game.progress = Progress.started(0).after(
        at=5, status=PlayerStatus.WON, foundation=52, moved=True
    )
    room.games["p1"] = game
    if finished_at is not None:
        ranking = ({"place": 1, "player": "p1", "name": "Ann", "status": "won"},)
        room.finished = RaceFinished(finished_at, "all_done", ranking)
    return room


def test_a_live_race_is_not_exported() -> None:
    with pytest.raises(WrongStatus, match="not over"):
        exportable_game(_room(finished_at=None), "p1", now=10**13)


def test_the_spectator_delay_holds_an_export_back_as_it_holds_the_spectators() -> None:
    room = _room(finished_at=1000, spectator_delay_ms=60_000)
    with pytest.raises(WrongStatus, match="60 s late"):
        exportable_game(room, "p1", now=60_999)
    assert exportable_game(room, "p1", now=61_000).player == "p1"


def test_a_daily_attempt_waits_for_the_end_of_its_day() -> None:
    room = _room(finished_at=1000, daily=f"swiss:{DAY.isoformat()}")
    with pytest.raises(NotAllowed, match="day is over"):
        exportable_game(room, "p1", now=day_end_ms(DAY) - 1)
    assert exportable_game(room, "ann", now=day_end_ms(DAY)).player == "p1"


def test_a_racer_is_found_by_id_or_name_and_no_one_else() -> None:
    room = _room(finished_at=1000)
    assert exportable_game(room, "Ann", now=1000).player == "p1"
    room.seats.clear()  # left after the race: the ranking still names them
    assert exportable_game(room, "ANN", now=1000).player == "p1"
    with pytest.raises(NoSuchPlayer):
        exportable_game(room, "bob", now=1000)


def test_the_header_reveals_the_seed_of_the_finished_race() -> None:
    room = _room(finished_at=1000)
    header = export_header(room, room.games["p1"])
    assert (header.room, header.player, header.result, header.place) == (
        "k2x7m4qa",
        "Ann",
        "won",
        1,
    )
    assert header.seed == "s3cret"
