"""The tournament fold and its decisions: standings, sheets, streaks, berserk, ties, withdrawal,
the last stretch and the podium, by tables of cases; the fold property-tested."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.kernel.errors import NotInTournament, TooManyTournaments, TournamentOver, WrongStatus
from server.tournaments.domain.decide import (
    CreationLimits,
    decide_create,
    decide_finish,
    decide_join,
    decide_paired,
    decide_pairing,
    decide_score,
    decide_withdraw,
)
from server.tournaments.domain.events import (
    EntrantJoined,
    RacePaired,
    RaceScored,
    TournamentCreated,
    TournamentFinished,
    decode,
    encode,
)
from server.tournaments.domain.fold import Phase, Tournament, TournamentStatus, fold
from server.tournaments.domain.standings import page_of, standings_message, state
from shared.protocol import BadField

START = 1_000_000
MIN = 60_000


def created(**over: Any) -> TournamentCreated:
    fields: dict[str, Any] = dict(
        at=START,
        id="t1",
        name="Hourly",
        variant="swiss",
        starts_at=START,
        length_ms=30 * MIN,
        time_limit_ms=3 * MIN,
        race_size=2,
        rated=True,
        berserk=True,
        streaks=True,
        creator="ann",
        creator_name="Ann",
    )
    fields.update(over)
    return TournamentCreated(**fields)


def tour(*players: tuple[str, int], **over: Any) -> Tournament:
    t = Tournament("t1")
    t.apply(created(**over))
    for account, rating in players:
        t.apply(EntrantJoined(at=START, account=account, name=account.upper(), rating=rating))
    return t


def race(
    t: Tournament, room: str, *order: str, moves: int = 30, berserk: str = "", timed_out: str = ""
) -> None:
    """Pair ``order`` in ``room`` and score it in that finishing order."""
    at = START + t.version
    t.apply(RacePaired(at=at, room=room, players=tuple(order)))
    results = [
        {
            "account": a,
            "place": i,
            "moves": moves,
            "berserk": a in berserk.split(),
            "abandoned": False,
            "timed_out": a in timed_out.split(),
        }
        for i, a in enumerate(order, 1)
    ]
    for event in decide_score(t, room, results, at + 1):
        t.apply(event)


def scores(t: Tournament) -> list[tuple[str, int]]:
    return [(e.account, e.score) for e in t.standings()]


def test_events_round_trip_through_their_stored_form() -> None:
    for event in (
        created(),
        EntrantJoined(at=1, account="a", name="A", rating=1500),
        RacePaired(at=2, room="r", players=("a", "b")),
        TournamentFinished(at=3),
    ):
        assert decode(encode(event)) == event
    assert encode(TournamentFinished(at=3)) == {"type": "tournament_finished", "v": 1, "at": 3}


def test_the_lifecycle_refuses_events_out_of_turn() -> None:
    t = Tournament("t1")
    with pytest.raises(WrongStatus):
        t.apply(EntrantJoined(at=1, account="a", name="A", rating=1500))
    t.apply(created())
    t.apply(TournamentFinished(at=2))
    with pytest.raises(WrongStatus):
        t.apply(RacePaired(at=3, room="r", players=("a",)))
    assert t.status is TournamentStatus.FINISHED
    assert t.version == 2


@pytest.mark.parametrize(
    ("races", "expected"),
    [
        # one win each way
        ([("r1", "a b"), ("r2", "b a")], [("a", 2), ("b", 2)]),
        # a streak: the third win in a row is doubled, the fourth too
        ([("r1", "a b"), ("r2", "a b"), ("r3", "a b"), ("r4", "a b")], [("a", 12), ("b", 0)]),
        # the streak broken by a loss starts again
        ([("r1", "a b"), ("r2", "a b"), ("r3", "b a"), ("r4", "a b")], [("a", 6), ("b", 2)]),
    ],
)
def test_standings_by_races(races: list[tuple[str, str]], expected: list[tuple[str, int]]) -> None:
    t = tour(("a", 1500), ("b", 1500))
    for room, order in races:
        race(t, room, *order.split())
    assert scores(t) == expected


def test_the_sheet_records_each_race_with_its_streak_and_berserk() -> None:
    t = tour(("a", 1500), ("b", 1500))
    race(t, "r1", "a", "b")
    race(t, "r2", "a", "b")
    race(t, "r3", "a", "b", berserk="a")
    a = t.entrants["a"]
    assert [(r.room, r.points, r.doubled, r.berserk) for r in a.sheet] == [
        ("r1", 2, False, False),
        ("r2", 2, False, False),
        ("r3", 5, True, True),
    ]
    assert a.fire(streaks=True)
    assert a.wins == 3
    msg = standings_message(t, 1, "b")
    assert msg["rows"][0]["sheet"][2] == {
        "room": "r3",
        "place": 1,
        "of": 2,
        "points": 5,
        "doubled": True,
        "berserk": True,
        "timed_out": False,
    }
    assert msg["me"]["account"] == "b"
    assert msg["me"]["rank"] == 2


def test_the_sheet_says_which_races_the_clock_ended() -> None:
    t = tour(("a", 1500), ("b", 1500))
    race(t, "r1", "a", "b", timed_out="b")
    race(t, "r2", "b", "a")
    b = t.entrants["b"]
    assert [r.timed_out for r in b.sheet] == [True, False]
    rows = {row["account"]: row for row in standings_message(t, 1, "b")["rows"]}
    assert [r["timed_out"] for r in rows["b"]["sheet"]] == [True, False]
    assert [r["points"] for r in rows["b"]["sheet"]] == [0, 2]  # scored as any other place


def test_the_standings_carry_the_rating_each_race_left_a_racer_at() -> None:
    t = tour(("a", 1500), ("b", 1500))
    race(t, "r1", "a", "b")
    rows = {row["account"]: row for row in standings_message(t, 1, None)["rows"]}
    assert (rows["a"]["rating"], rows["a"]["rating_now"]) == (1500, 1500)  # none told yet
    t.apply(RacePaired(at=START + 50, room="r2", players=("a", "b")))
    results = [
        {"account": "a", "place": 1, "moves": 9, "rating": 1569},
        {"account": "b", "place": 2, "moves": 9, "rating": 1463},
    ]
    for event in decide_score(t, "r2", results, START + 60):
        t.apply(decode(encode(event)))
    rows = {row["account"]: row for row in standings_message(t, 1, None)["rows"]}
    assert (rows["a"]["rating"], rows["a"]["rating_now"]) == (1500, 1569)
    assert (rows["b"]["rating"], rows["b"]["rating_now"]) == (1500, 1463)
    assert t.entrants["a"].rank_key()[2] == -1500  # the tie-break keeps the entry rating


def test_berserk_counts_only_where_the_tournament_allows_it() -> None:
    t = tour(("a", 1500), ("b", 1500), berserk=False)
    race(t, "r1", "a", "b", berserk="a")
    assert scores(t)[0] == ("a", 2)


def test_ties_are_broken_by_performance_then_rating() -> None:
    # a beat the strong c, b beat the weak d: equal scores, a performed better.
    t = tour(("a", 1500), ("b", 1500), ("c", 1900), ("d", 1100))
    race(t, "r1", "b", "d")
    race(t, "r2", "a", "c")
    assert [e.account for e in t.standings()][:2] == ["a", "b"]
    assert t.entrants["a"].performance == 2300
    assert t.entrants["b"].performance == 1500
    # nobody has raced: the higher rating first, then who joined first
    t = tour(("x", 1500), ("y", 1600), ("z", 1500))
    assert [e.account for e in t.standings()] == ["y", "x", "z"]


def test_a_race_is_scored_once() -> None:
    t = tour(("a", 1500), ("b", 1500))
    race(t, "r1", "a", "b")
    results = [{"account": "a", "place": 1, "moves": 30}, {"account": "b", "place": 2, "moves": 3}]
    assert decide_score(t, "r1", results, START + 99) == []
    assert decide_score(t, "never", results, START + 99) == []


def test_an_unfilled_race_frees_its_players_and_scores_nobody() -> None:
    t = tour(("a", 1500), ("b", 1500))
    t.apply(RacePaired(at=START, room="r1", players=("a", "b")))
    assert t.entrants["a"].racing == "r1"
    assert t.racing_count() == 2
    for event in decide_score(t, "r1", [{"account": "a", "place": 1, "moves": 0}], START + 10):
        t.apply(event)
    assert t.entrants["a"].racing is None
    assert t.entrants["b"].racing is None
    assert scores(t) == [("a", 0), ("b", 0)]  # alone in the race: nothing won


def test_an_abandoning_racer_is_withdrawn_and_may_join_again_with_points_kept() -> None:
    t = tour(("a", 1500), ("b", 1500))
    race(t, "r1", "a", "b")
    t.apply(RacePaired(at=START, room="r2", players=("a", "b")))
    results = [
        {"account": "a", "place": 1, "moves": 25},
        {"account": "b", "place": 2, "moves": 0, "abandoned": True},
    ]
    for event in decide_score(t, "r2", results, START + 5):
        t.apply(event)
    assert not t.entrants["b"].active
    with pytest.raises(NotInTournament):
        decide_withdraw(t, "b", START + 6)
    for event in decide_join(t, "b", "B", 1500, START + 7):
        t.apply(event)
    assert t.entrants["b"].active
    assert len(t.entrants["b"].sheet) == 2
    assert decide_join(t, "b", "B", 1500, START + 8) == []  # already in: nothing


def test_phases_and_the_last_stretch() -> None:
    t = tour(("a", 1500), ("b", 1500))
    assert t.phase(START - 1) is Phase.UPCOMING
    assert t.phase(START) is Phase.RUNNING
    assert t.pairing_until == START + 30 * MIN - 2 * MIN  # the race's 3 min, at most 2
    present = {"a": START, "b": START}
    assert decide_pairing(t, present, set(), START + 20_000) == [("a", "b")]
    assert decide_pairing(t, present, set(), t.pairing_until) == []  # the last stretch
    assert decide_pairing(t, present, {"b"}, START + 20_000) == []  # b is racing elsewhere
    assert decide_pairing(t, {"a": START}, set(), START + 20_000) == []  # b is absent
    assert t.phase(t.ends_at) is Phase.FINISHING
    with pytest.raises(TournamentOver):
        decide_join(t, "c", "C", 1500, t.ends_at)


def test_the_finish_waits_for_the_races_in_play_and_the_podium_is_the_top_three() -> None:
    t = tour(("a", 1500), ("b", 1500), ("c", 1500), ("d", 1500))
    race(t, "r1", "a", "b")
    race(t, "r2", "c", "d")
    for event in decide_paired(t, "r3", ("a", "c"), START + 100):
        t.apply(event)
    assert decide_paired(t, "r4", ("a", "d"), START + 100) == []  # a is racing
    assert decide_finish(t, START + 10 * MIN) == []  # still running
    assert decide_finish(t, t.ends_at) == []  # r3 in play
    assert state(t, t.ends_at)["status"] == "finishing"
    race_results = [
        {"account": "c", "place": 1, "moves": 30},
        {"account": "a", "place": 2, "moves": 30},
    ]
    for event in decide_score(t, "r3", race_results, t.ends_at + 1):
        t.apply(event)
    for event in decide_finish(t, t.ends_at + 2):
        t.apply(event)
    view = state(t, t.ends_at + 3)
    assert view["status"] == "finished"
    assert [r["account"] for r in view["podium"]] == ["c", "a", "b"]
    assert standings_message(t, 1, None)["final"]


def test_creation_checks_its_ranges_and_the_owner_limit() -> None:
    limits = CreationLimits()

    def make(msg: dict[str, Any], owned: int = 0) -> TournamentCreated:
        return decide_create(
            msg,
            tournament_id="t",
            name="T",
            creator="ann",
            creator_name="Ann",
            owned=owned,
            limits=limits,
            now=START,
        )

    made = make({"length_ms": 30 * MIN})
    assert (made.starts_at, made.time_limit_ms, made.race_size, made.rated) == (
        START,
        3 * MIN,
        2,
        True,
    )
    for bad in (
        {"length_ms": 4 * MIN},
        {"length_ms": 13 * 60 * MIN},
        {"length_ms": 30 * MIN, "race_size": 5},
        {"length_ms": 30 * MIN, "time_limit_ms": 5_000},
        {"length_ms": 5 * MIN, "time_limit_ms": 6 * MIN},
        {"length_ms": 30 * MIN, "starts_at": START + 8 * 24 * 60 * MIN},
        {"length_ms": 30 * MIN, "starts_at": START - 2 * MIN},
    ):
        with pytest.raises(BadField):
            make(bad)
    with pytest.raises(TooManyTournaments):
        make({"length_ms": 30 * MIN}, owned=3)


def test_pages_hold_ten_rows_and_me_anywhere() -> None:
    t = tour(*((f"p{i:02}", 2000 - i) for i in range(25)))
    assert standings_message(t, 3, "p00")["rows"][0]["rank"] == 21
    assert standings_message(t, 9, None)["page"] == 3  # clamped
    assert page_of(t, "p14") == 2
    assert page_of(t, None) == 1
    msg = standings_message(t, 1, "p24")
    assert len(msg["rows"]) == 10
    assert msg["me"]["rank"] == 25
    assert msg["pages"] == 3


def test_a_marked_account_is_out_of_the_standings_and_the_podium_shown_not_of_pairing() -> None:
    t = tour(*((f"p{i:02}", 2000 - i) for i in range(10)), ("cheat", 1400))
    race(t, "r1", "cheat", "p00")
    race(t, "r2", "p01", "p02")
    for event in decide_finish(t, t.ends_at):
        t.apply(event)
    assert state(t, t.ends_at + 1)["podium"][0]["account"] == "cheat"
    assert standings_message(t, 1, None)["pages"] == 2
    t.hide(frozenset({"cheat"}))
    view = state(t, t.ends_at + 1)
    assert [r["account"] for r in view["podium"]] == ["p01", "p02", "p00"]  # tie: performance
    shown = standings_message(t, 1, "cheat")
    assert "cheat" not in [r["account"] for r in shown["rows"]]
    assert [r["rank"] for r in shown["rows"]] == list(range(1, 11))
    assert shown["me"] is None
    assert shown["pages"] == 1  # ten rows now, not eleven: one page
    assert page_of(t, "cheat") == 1
    assert t.ranked()[0].account == "cheat"  # pairing still sees every entrant
    t.hide(frozenset())  # the mark taken back: as before
    assert state(t, t.ends_at + 1)["podium"][0]["account"] == "cheat"


races_strategy = st.lists(
    st.tuples(st.permutations(["a", "b", "c", "d"]), st.integers(2, 4), st.booleans()), max_size=25
)


@settings(max_examples=60, deadline=None)
@given(races_strategy)
def test_the_fold_of_the_stored_stream_is_the_live_fold(
    races: list[tuple[list[str], int, bool]],
) -> None:
    """Rebuilt from its stored maps, at any prefix, the tournament has the same standings; the
    score is the sum of the sheet, and ranks follow scores."""
    t = tour(("a", 1500), ("b", 1600), ("c", 1400), ("d", 1500), race_size=4)
    stored = [encode(created(race_size=4))] + [
        encode(EntrantJoined(at=START, account=a, name=a.upper(), rating=r))
        for a, r in (("a", 1500), ("b", 1600), ("c", 1400), ("d", 1500))
    ]
    for n, (order, size, berserk) in enumerate(races):
        players = order[:size]
        paired = RacePaired(at=START + n, room=f"r{n}", players=tuple(players))
        t.apply(paired)
        stored.append(encode(paired))
        results = [
            {"account": a, "place": i, "moves": 20 + i, "berserk": berserk}
            for i, a in enumerate(players, 1)
        ]
        for event in decide_score(t, f"r{n}", results, START + n):
            t.apply(event)
            stored.append(encode(event))
    again = fold("t1", stored)
    assert standings_message(again, 1, "a") == standings_message(t, 1, "a")
    for e in t.standings():
        assert e.score == sum(r.points for r in e.sheet)
    table = [e.score for e in t.standings()]
    assert table == sorted(table, reverse=True)
    assert isinstance(
        decode(stored[-1]), (RaceScored, RacePaired, EntrantJoined, TournamentCreated)
    )


def test_a_renamed_entrant_is_shown_under_the_new_name() -> None:
    t = tour(("ann", 1500), ("bob", 1400))
    race(t, "r1", "ann", "bob")
    t.renamed = {"ann": "Zed"}  # a moderator's rename, as the ratings' log has it
    rows = standings_message(t, 1, "ann")["rows"]
    assert [(r["account"], r["name"]) for r in rows] == [("ann", "Zed"), ("bob", "BOB")]
    assert t.entrants["ann"].name == "ANN"  # the events keep the name joined under
