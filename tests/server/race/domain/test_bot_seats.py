"""Bot seats, pure: who may seat a bot and how many, and which process may claim one."""

from __future__ import annotations

import pytest

from server.kernel.errors import NotAllowed, RoomFull, TooManyBots, WrongStatus
from server.race.domain.bot_seats import (
    bot_connection,
    check_bots,
    decide_add_bot,
    decide_claim_bot,
    process_of,
)
from server.race.domain.events import PlayerBack, PlayerJoined, RoomCreated, encode
from server.race.domain.fold import fold_room_event
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Room


def room(capacity: int = 3, members: tuple[str, ...] = ()) -> Room:
    r = Room("r1")
    created = RoomCreated(
        at=1, variant="swiss", seed="s", deck=None, salt="x", commitment="c", deal_version=1,
        capacity=capacity, countdown_ms=0, time_limit_ms=0, spectator_delay_ms=0,
        open_seed=False, winnable=False, creator="ann", rated=True, members=members,
    )  # fmt: skip
    fold_room_event(r, 1, encode(created))
    return r


def add(r: Room, player: str, *, by: str | None = "ann", level: int = 3) -> None:
    for event in decide_add_bot(
        r, by=by, player=player, name="Ada (bot 3)", level=level, process="p1", now=5
    ):
        fold_room_event(r, r.version + 1, encode(event))


def test_the_creator_seats_bots_up_to_capacity_minus_one() -> None:
    r = room()
    add(r, "bot1")
    (event,) = decide_add_bot(
        r, by="ann", player="bot2", name="Ada (bot 3)", level=5, process="p1", now=6
    )
    assert isinstance(event, PlayerJoined)
    assert (event.bot, event.account, event.token_hash) == (5, None, "")
    assert event.name == "Ada (bot 3) 2"  # unique in the room, as any name
    assert event.connection == bot_connection("p1", "bot2")
    add(r, "bot2", level=5)
    assert not r.rated
    with pytest.raises(TooManyBots):
        add(r, "bot3")
    with pytest.raises(TooManyBots):
        check_bots(2, capacity=2)
    check_bots(1, capacity=2)


@pytest.mark.parametrize(
    ("by", "members", "error"),
    [("bob", (), NotAllowed), ("ann", ("ann", "bob"), NotAllowed)],
)
def test_who_may_not_seat_a_bot(by: str, members: tuple[str, ...], error: type) -> None:
    with pytest.raises(error):
        add(room(members=members), "bot1", by=by)


def test_the_server_seats_bots_in_a_quick_races_room_and_not_past_the_lobby() -> None:
    r = room(capacity=2, members=("ann",))
    add(r, "bot1", by=None)
    assert [s.bot for s in r.seats.values()] == [3]
    with pytest.raises(TooManyBots):
        add(r, "bot2", by=None)
    full = room(capacity=2)
    fold_room_event(full, 2, encode(PlayerJoined(2, "ann", "ann", "h", "c.1")))
    fold_room_event(full, 3, encode(PlayerJoined(3, "bob", "bob", "h2", "c.2")))
    with pytest.raises(RoomFull):
        add(full, "bot1")
    full.status = RoomStatus.RACING
    with pytest.raises(WrongStatus):
        add(full, "bot1")


def test_a_bot_is_claimed_only_from_a_process_that_is_gone() -> None:
    r = room()
    add(r, "bot1")
    assert decide_claim_bot(r, "bot1", process="p2", live={"p1", "p2"}, now=9) == []
    (claim,) = decide_claim_bot(r, "bot1", process="p2", live={"p2"}, now=9)
    assert claim == PlayerBack(9, "bot1", bot_connection("p2", "bot1"))
    fold_room_event(r, r.version + 1, encode(claim))
    assert decide_claim_bot(r, "bot1", process="p3", live={"p2", "p3"}, now=10) == []
    assert decide_claim_bot(r, "ann", process="p3", live=set(), now=10) == []  # not a bot
    assert process_of(bot_connection("p2", "bot1")) == "p2"
    assert process_of("p2.17") == "p2"
