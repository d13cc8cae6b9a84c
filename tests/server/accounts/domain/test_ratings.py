"""The ratings fold, with plain values: the direction of every update, and the shown rating."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.accounts.domain.ratings import (
    DISPLAY_BASE,
    MODEL,
    PROVISIONAL_GAMES,
    FairPlayMarked,
    FairPlayUnmarked,
    RaceRated,
    RacerRenamed,
    RatingTable,
    display,
    encode,
    refold,
)

ACCOUNTS = [f"a{i}" for i in range(6)]
races = st.lists(
    st.lists(st.sampled_from(ACCOUNTS), min_size=2, max_size=5, unique=True),
    min_size=1,
    max_size=25,
)


def race(number: int, order: list[str]) -> dict[str, object]:
    racers = tuple(
        {"account": a, "name": a.upper(), "place": p, "won": p == 1, "time_ms": 1000 * p}
        for p, a in enumerate(order, 1)
    )
    return encode(RaceRated(number, f"r{number}", "swiss", racers))


@settings(max_examples=60, deadline=None)
@given(races)
def test_the_first_gains_the_last_loses_and_a_repeat_changes_nothing(
    history: list[list[str]],
) -> None:
    table = RatingTable("swiss")
    for number, order in enumerate(history, 1):
        before = {a: (s.mu, s.sigma) for a, s in table.players.items()}
        changes = table.apply(number, race(number, order))
        first, last = table.players[order[0]], table.players[order[-1]]
        assert first.mu > before.get(order[0], (MODEL.mu, 0))[0]
        assert last.mu < before.get(order[-1], (MODEL.mu, 0))[0]
        assert [c.account for c in changes] == order
        assert changes[0].after - changes[0].before >= changes[-1].after - changes[-1].before
    games = {a: sum(a in order for order in history) for a in ACCOUNTS}
    assert {a: s.games for a, s in table.players.items()} == {a: n for a, n in games.items() if n}
    # The same race again (a second append would be a bug; the fold still counts it once).
    again = table.apply(len(history) + 1, race(1, history[0]))
    assert again == table.races["r1"]
    assert sum(s.games for s in table.players.values()) == sum(games.values())


def test_the_shown_rating_and_provisional_marks() -> None:
    assert display(MODEL.mu, MODEL.sigma) == DISPLAY_BASE
    table = RatingTable("swiss")
    for number in range(1, PROVISIONAL_GAMES + 1):
        table.apply(number, race(number, ["a0", "a1"]))
        assert table.players["a0"].provisional is (number < PROVISIONAL_GAMES)
    assert table.players["a0"].wins == PROVISIONAL_GAMES
    assert table.players["a0"].best_ms == 1000
    assert table.players["a1"].best_ms is None
    assert table.players["a0"].rating > DISPLAY_BASE > table.players["a1"].rating


def _standings(table: RatingTable) -> dict[str, tuple[float, float, int, int]]:
    return {a: (s.mu, s.sigma, s.games, s.wins) for a, s in table.players.items()}


@settings(max_examples=60, deadline=None)
@given(races, st.sampled_from(ACCOUNTS), st.integers(min_value=0, max_value=25))
def test_a_mark_is_as_if_the_accounts_races_were_never_rated_and_unmark_restores(
    history: list[list[str]], cheat: str, marked_after: int
) -> None:
    """Everyone's ratings with a mark folded anywhere in the log equal a fold of the log
    without the marked account's races; the unmark gives back the fold without any mark."""
    marked_after = min(marked_after, len(history))
    table = RatingTable("swiss")
    log: list[dict[str, object]] = []

    def fold(data: dict[str, object]) -> RatingTable:
        log.append(data)
        table.apply(len(log), data)  # type: ignore[arg-type]
        return refold(table, log) if table.refold_from_start else table  # type: ignore[arg-type]

    for number, order in enumerate(history, 1):
        if number == marked_after + 1:
            table = fold(encode(FairPlayMarked(0, cheat)))
        table = fold(race(number, order))
    if marked_after == len(history):
        table = fold(encode(FairPlayMarked(0, cheat)))
    clean = RatingTable("swiss")
    kept = [(n, o) for n, o in enumerate(history, 1) if cheat not in o]
    for v, (number, order) in enumerate(kept, 1):
        clean.apply(v, race(number, order))
    assert _standings(table) == _standings(clean)
    assert cheat not in table.players
    table = fold(encode(FairPlayUnmarked(1, cheat)))
    plain = RatingTable("swiss")
    for number, order in enumerate(history, 1):
        plain.apply(number, race(number, order))
    assert _standings(table) == _standings(plain)


def test_a_profiles_recent_race_says_whose_clock_ran_out() -> None:
    table = RatingTable("swiss")
    racers = (
        {"account": "a0", "name": "A0", "place": 1, "won": False, "time_ms": None},
        {"account": "a1", "name": "A1", "place": 2, "won": False, "time_ms": None,
         "timed_out": True},
    )  # fmt: skip
    table.apply(1, encode(RaceRated(5, "r1", "swiss", racers)))
    assert [table.players[a].recent[0]["timed_out"] for a in ("a0", "a1")] == [False, True]


def test_a_rename_shows_the_new_name_even_for_a_race_played_under_the_old_one() -> None:
    table = RatingTable("swiss")
    table.apply(1, race(1, ["a0", "a1"]))
    table.apply(2, encode(RacerRenamed(2, "a0", "Zed")))
    assert table.players["a0"].row("a0")["name"] == "Zed"
    changes = table.apply(3, race(3, ["a1", "a0"]))  # its seat named the old name
    assert [c.name for c in changes] == ["A1", "Zed"]
    assert table.players["a0"].name == "Zed"
    rebuilt = refold(table, [race(1, ["a0", "a1"]), encode(RacerRenamed(2, "a0", "Zed"))])
    assert rebuilt.players["a0"].name == "Zed"
