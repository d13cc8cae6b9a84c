"""The fair-play assessment: one game's signals, and the level folded from an account's games."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given
from hypothesis import strategies as st

from server.referee.domain import assessment as a
from server.referee.domain.events import GameAssessed, decode, encode


def played(times: list[int], choices: list[int], **kw: object) -> a.Played:
    moves = tuple(kw.pop("moves", ("d",) * len(times)))  # type: ignore[arg-type]
    base = {"won": True, "deal": "unknown"}
    return a.Played(tuple(times), tuple(choices), moves, **{**base, **kw})  # type: ignore[arg-type]


def assessed(p: a.Played, at: int = 1000, room: str = "r1") -> GameAssessed:
    return a.assess(
        p, at=at, room=room, player="p1", account="ann", name="Ann", variant="quadrennial",
        kind="race",
    )  # fmt: skip


def game(**kw: object) -> GameAssessed:
    """A game with the given figures (the rest a person's)."""
    base = dict(
        at=1, room="r", player="p", account="ann", name="Ann", variant="quadrennial",
        kind="race", moves=100, think_mean_ms=2000, think_spread=0.7, even_streak=2,
        timed_moves=60, time_difficulty=0.4, deal="won", known="won", won=False, kept=10, judged=11,
        focus_lost=0,
    )  # fmt: skip
    return GameAssessed(**{**base, **kw})  # type: ignore[arg-type]


def test_think_times_run_from_the_start_then_from_each_move() -> None:
    assert a.think_times(100, [1100, 1600, 4600]) == (1000, 500, 3000)


def test_the_deck_is_known_after_the_first_redeal() -> None:
    assert a.known_from(["d", "t1f", "redeal", "d", "redeal"]) == 3
    assert a.known_from(["d", "t1f"]) == 0


def test_spearman_ranks_ties_and_flat_sides() -> None:
    assert a.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert a.spearman([1, 2, 3, 4], [40, 30, 20, 10]) == -1.0
    assert a.spearman([1, 1, 1], [1, 2, 3]) is None
    assert a.ranks([5, 1, 5, 2]) == [3.5, 1.0, 3.5, 2.0]


def test_a_near_equal_streak_is_counted() -> None:
    assert a.even_streak([1000, 1020, 1010, 3000, 900]) == 3
    assert a.even_streak([]) == 0


def test_times_that_follow_the_position_correlate_and_a_scripts_do_not() -> None:
    rng = random.Random(1)
    choices = [rng.randint(1, 9) for _ in range(80)]
    person = [int(800 * c * rng.lognormvariate(0, 0.3)) for c in choices]
    script = [int(1500 * rng.lognormvariate(0, 0.3)) for _ in choices]
    assert (assessed(played(person, choices)).time_difficulty or 0) > 0.5
    assert abs(assessed(played(script, choices)).time_difficulty or 0) < 0.3


def test_only_moves_after_the_first_redeal_are_timed() -> None:
    moves = ["d"] * 20 + ["redeal"] + ["d"] * 15
    got = assessed(played([1000] * 36, list(range(36)), moves=moves))
    assert got.timed_moves == 15


def test_a_short_game_gives_no_correlation() -> None:
    assert assessed(played([1000, 2000], [1, 2])).time_difficulty is None


def test_the_analysis_settles_kept_and_judged_moves() -> None:
    lost = played([1000] * 10, [2] * 10, won=False, deal="won", won_until=4, lost_from=5)
    assert (assessed(lost).kept, assessed(lost).judged) == (4, 5)
    assert assessed(lost).known == "won"  # no redeal: the deck was known from the deal on
    moves = ["d"] * 6 + ["redeal"] + ["d"] * 3
    late = played([1000] * 10, [2] * 10, won=False, deal="won", won_until=4, lost_from=5,
                  moves=moves)  # fmt: skip
    assert assessed(late).known == "lost"  # thrown away in the first pass
    unanalysed = played([1000] * 10, [2] * 10)
    assert (assessed(unanalysed).kept, assessed(unanalysed).judged) == (0, 0)
    assert assessed(unanalysed).deal == "unknown"


def test_the_event_round_trips() -> None:
    event = assessed(played([1000] * 20, list(range(20)), focus_lost=2))
    assert decode(encode(event)) == event


def test_a_person_is_clean() -> None:
    s = a.standing([game(at=i, room=f"r{i}", won=i % 3 != 0) for i in range(20)])
    assert s.level is a.Level.CLEAN
    assert s.reasons == ()


def test_flat_timing_and_every_won_deal_won_is_assisted() -> None:
    s = a.standing([game(at=i, room=f"r{i}", time_difficulty=0.0, won=True) for i in range(20)])
    assert s.level is a.Level.ASSISTED
    assert s.reasons[0].startswith("think time ignores the position")
    assert "won 20 of 20 games won once the deck was known" in s.reasons
    assert s.evidence().startswith("assisted (20 games): think time")


def test_winning_every_won_deal_alone_is_only_unclear() -> None:
    s = a.standing([game(at=i, room=f"r{i}", won=True) for i in range(20)])
    assert s.level is a.Level.UNCLEAR


def test_unanalysed_games_are_assessed_from_their_times() -> None:
    games = [game(at=i, room=f"r{i}", deal="unknown", known="unknown", time_difficulty=0.01)
             for i in range(12)]  # fmt: skip
    s = a.standing(games)
    assert s.level is a.Level.LIKELY
    assert s.known_won == 0


def test_flat_timing_needs_the_moves_to_be_sure() -> None:
    """Six short games of flat timing could be a person's weakest: only "weak"; six long ones
    are "flat"."""
    short = [game(at=i, room=f"r{i}", known="unknown", time_difficulty=0.0, timed_moves=30)
             for i in range(6)]  # fmt: skip
    assert a.standing(short).reasons[0].startswith("think time ignores the position (weak")
    assert a.standing(short).level is a.Level.UNCLEAR
    long = [dataclasses.replace(g, timed_moves=200) for g in short]
    assert a.standing(long).level is a.Level.LIKELY
    assert a.standing(long).reasons == (
        "think time ignores the position (flat: +0.00 over 6 games, 1200 moves)",
    )


def test_few_games_say_nothing() -> None:
    games = [game(at=i, room=f"r{i}", time_difficulty=0.0, won=True) for i in range(3)]
    assert a.standing(games).level is a.Level.CLEAN


def test_only_the_last_games_count() -> None:
    old = [game(at=i, room=f"o{i}", time_difficulty=0.0, won=True) for i in range(20)]
    new = [game(at=100 + i, room=f"n{i}") for i in range(20)]
    assert a.standing(old + new).level is a.Level.CLEAN


def test_the_levels_order_and_flag() -> None:
    assert [lv.flagged for lv in a.Level] == [False, False, True, True]
    assert a.Level.LIKELY.value == "likely assisted"


games_st = st.lists(
    st.builds(
        game,
        at=st.integers(0, 50),
        room=st.sampled_from(["a", "b", "c", "d", "e"]),
        time_difficulty=st.none() | st.floats(-1, 1),
        think_spread=st.floats(0, 2),
        even_streak=st.integers(1, 12),
        known=st.sampled_from(["won", "lost", "unknown"]),
        won=st.booleans(),
        focus_lost=st.integers(0, 6),
    ),
    max_size=30,
)


@given(games_st, st.randoms())
def test_the_fold_does_not_depend_on_the_order_of_the_games(
    games: list[GameAssessed], rng: random.Random
) -> None:
    shuffled = list(games)
    rng.shuffle(shuffled)
    assert a.standing(shuffled) == a.standing(games)


def stronger(g: GameAssessed, how: int) -> GameAssessed:
    """The game with one signal pushed towards assistance."""
    if how == 0 and g.time_difficulty is not None:
        return dataclasses.replace(g, time_difficulty=max(-1.0, g.time_difficulty - 0.3))
    if how == 1 and g.known == "won":
        return dataclasses.replace(g, won=True)
    if how == 2:
        return dataclasses.replace(g, even_streak=g.even_streak + 4)
    if how == 3:
        return dataclasses.replace(g, focus_lost=g.focus_lost + 2)
    return dataclasses.replace(g, think_spread=g.think_spread / 2)


@given(games_st, st.integers(0, 4), st.data())
def test_a_level_never_drops_when_a_signal_only_gets_stronger(
    games: list[GameAssessed], how: int, data: st.DataObject
) -> None:
    if not games:
        return
    i = data.draw(st.integers(0, len(games) - 1))
    more = [*games[:i], stronger(games[i], how), *games[i + 1 :]]
    assert a.standing(more).points >= a.standing(games).points
    assert a.standing(more).level.rank >= a.standing(games).level.rank
