"""Fair spectating's common cards (server.race.domain.fairness): kept from one move to the next,
they must always equal the intersection computed from scratch over every racer's seen set."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.race.domain.fairness import common_cards, computed_common_cards
from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import Game, Room, Seat, game_stream
from server.race.domain.progress import PlayerStatus, Progress

CARDS = [f"{rank}{suit}" for rank in "A23456" for suit in "SH"]
LAYOUT = tuple(CARDS[:4])
PLAYERS = ["p0", "p1", "p2", "p3"]

player = st.sampled_from(PLAYERS)
operation = st.one_of(
    st.tuples(st.just("join"), player),
    st.tuples(st.just("leave"), player),
    st.tuples(st.just("start"), player),
    st.tuples(st.just("reveal"), player, st.lists(st.sampled_from(CARDS), max_size=3)),
    st.tuples(st.just("done"), player, st.sampled_from(list(PlayerStatus))),
    st.tuples(st.just("status"), st.sampled_from(list(RoomStatus))),
    st.tuples(st.just("ask")),
)


def _apply(room: Room, op: tuple[object, ...]) -> None:
    """What the fold does to the parts fairness reads (server.race.domain.fold)."""
    kind, *args = op
    if kind == "join":
        (name,) = args
        assert isinstance(name, str)
        room.seats[name] = Seat(name, name, "", len(room.seats))
        room.games.setdefault(name, Game(name, game_stream(room.id, name)))
    elif kind == "leave":
        room.seats.pop(str(args[0]), None)
    elif kind == "start":
        game = room.games.get(str(args[0]))
        if game is not None and game.version == 0:
            game.version = 1
            game.reveals.append(tuple(LAYOUT))
            game.seen.update(LAYOUT)
            game.progress = Progress.started(0)
    elif kind == "reveal":
        game = room.games.get(str(args[0]))
        cards = args[1]
        assert isinstance(cards, list)
        if game is not None and game.version > 0:
            game.version += 1
            game.reveals.append(tuple(cards))
            game.seen.update(cards)
    elif kind == "done":
        game = room.games.get(str(args[0]))
        status = args[1]
        assert isinstance(status, PlayerStatus)
        if game is not None and game.version > 0:
            game.progress = game.progress.after(at=1, status=status, foundation=0, moved=False)
    elif kind == "status":
        status = args[0]
        assert isinstance(status, RoomStatus)
        room.status = status


@settings(max_examples=300, deadline=None)
@given(st.lists(operation, max_size=60))
def test_kept_common_cards_equal_the_intersection_over_random_races(
    ops: list[tuple[object, ...]],
) -> None:
    room = Room("r")
    room.status = RoomStatus.RACING
    for op in ops:
        _apply(room, op)
        assert common_cards(room) == computed_common_cards(room), op


def test_a_card_joins_when_the_last_racer_turns_it_and_a_finish_releases_its_holder() -> None:
    room = Room("r")
    room.status = RoomStatus.RACING
    for name in ("p0", "p1"):
        _apply(room, ("join", name))
        _apply(room, ("start", name))
    assert common_cards(room) == set(LAYOUT)
    _apply(room, ("reveal", "p0", ["6S"]))
    assert common_cards(room) == set(LAYOUT)
    _apply(room, ("reveal", "p1", ["6S", "5H"]))
    assert common_cards(room) == {*LAYOUT, "6S"}
    _apply(room, ("done", "p0", PlayerStatus.WON))
    assert common_cards(room) == {*LAYOUT, "6S", "5H"}
    _apply(room, ("done", "p1", PlayerStatus.RESIGNED))
    assert common_cards(room) is None


def test_a_racer_not_started_holds_back_all_but_the_layout() -> None:
    room = Room("r")
    room.status = RoomStatus.RACING
    _apply(room, ("join", "p0"))
    _apply(room, ("start", "p0"))
    _apply(room, ("join", "p1"))
    assert common_cards(room) == set(LAYOUT)
    _apply(room, ("reveal", "p0", ["6S", LAYOUT[0]]))
    assert common_cards(room) == set(LAYOUT)
    _apply(room, ("start", "p1"))
    _apply(room, ("reveal", "p1", ["6S"]))
    assert common_cards(room) == {*LAYOUT, "6S"}
