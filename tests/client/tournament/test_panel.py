"""The tournament's text as the terminal shows it, against fixed-width strings: the standings
at 80 columns with sheets, streaks and the player's own row, the wait line, the podium, the list."""

from __future__ import annotations

from typing import Any

import pytest

from client.text import strip_ansi, width
from client.tournament.panel import (
    ELLIPSIS,
    Listing,
    Phase,
    Place,
    Presence,
    Result,
    Standing,
    berserk_hint,
    berserk_line,
    facts_line,
    list_lines,
    listing,
    lobby_lines,
    podium_lines,
    sheet_line,
    sheet_text,
    standing,
    standings_lines,
    wait_line,
)

W = Result(2)
SECOND = Result(1)
LOSS = Result(0)
DOUBLE = Result(4, double=True)
BERSERK = Result(3, berserk=True)


def test_the_standings_at_80_columns() -> None:
    rows = [
        Standing(1, "ann", 10, (W, W, DOUBLE, LOSS, W), streak=False, rating=1623),
        Standing(2, "bob", 8, (W, W, DOUBLE), streak=True, rating=1502, me=True),
        Standing(3, "cy", 0, (LOSS,), rating=1480, presence=Presence.RACING),
        Standing(4, "dee", 0, (), rating=1500, presence=Presence.PAUSED),
    ]
    assert standings_lines(rows) == [
        "     #  name                   score  sheet                      rating  state",
        "     1  ann                       10  2 2 4 0 2                    1623  waiting",
        ">    2  bob                     8 x2  2 2 4                        1502  waiting",
        "     3  cy                         0  0                            1480  racing",
        "     4  dee                        0                               1500  paused",
    ]


def test_every_line_fits_80_columns_with_wide_names_and_long_sheets() -> None:
    long_sheet = tuple([W, LOSS, BERSERK] * 30)
    rows = [
        Standing(i, "名前が長い選手の名前です" * 2, 999, long_sheet, True, 2999)
        for i in range(1, 11)
    ]
    for line in standings_lines(rows, players=2000, page=1, pages=200):
        assert width(line) <= 80, line


def test_a_sheet_too_long_keeps_its_newest_races() -> None:
    sheet = tuple(Result(n % 3) for n in range(40))
    text = sheet_text(sheet, 10)
    assert text == ELLIPSIS + " " + " ".join(str(n % 3) for n in range(36, 40))
    assert len(text) == 9  # a whole figure more would not fit


def test_figures_are_always_spaced_so_a_2_then_a_0_never_reads_20() -> None:
    assert sheet_text((W, LOSS), 20) == "2 0"
    assert sheet_text((Result(1), Result(0), W), 20) == "1 0 2"


def test_once_nobody_is_paired_the_rows_say_done_not_waiting() -> None:
    row = {**ROW, "racing": None, "active": True}
    for status in ("finishing", "finished"):
        lines = lobby_lines({**SUMMARY, "status": status}, standings_of(row), me=None)
        assert any(line.endswith("  done") for line in lines), lines
        assert not any(line.endswith("waiting") for line in lines), lines
    racing = {**row, "racing": "room9"}
    lines = lobby_lines({**SUMMARY, "status": "finishing"}, standings_of(racing), me=None)
    assert any(line.endswith("  racing") for line in lines), lines


def test_berserk_races_are_marked_and_spaced() -> None:
    assert sheet_text((W, BERSERK, LOSS), 20) == "2 3b 0"
    assert sheet_text((W, BERSERK, LOSS, W, W), 8) == f"{ELLIPSIS} 0 2 2"


def test_doubled_races_are_coloured_and_the_plain_text_is_the_same() -> None:
    painted = sheet_text((W, DOUBLE, LOSS), 20, color=True)
    assert "\x1b[33m4\x1b[0m" in painted
    assert strip_ansi(painted) == "2 4 0"


def test_the_players_own_row_below_the_page_comes_after_a_gap() -> None:
    rows = [Standing(i, f"p{i}", 20 - i) for i in range(1, 11)]
    mine = Standing(37, "me", 1, (SECOND,), me=True)
    lines = standings_lines(rows, mine=mine, players=40, page=1, pages=4)
    assert lines[-3:] == [
        "   ...",
        ">   37  me                         1  1                                  waiting",
        "  40 players, page 1 of 4: 'page N' shows another",
    ]


def test_nobody_yet() -> None:
    assert standings_lines([])[1:] == ["  nobody has joined yet"]


def test_the_sheet_in_words() -> None:
    row = Standing(3, "bob", 8, (W, W, DOUBLE), streak=True, me=True)
    assert sheet_line(row) == (
        "Your sheet: 2 2 4 = 8 points, rank 3, 3 races. On a streak: your next first place "
        "counts double."
    )
    assert sheet_line(Standing(5, "bob", 0)) == "Your sheet: no race yet; rank 5, 0 points."


@pytest.mark.parametrize(
    ("phase", "presence", "expected"),
    [
        (Phase.UPCOMING, None, "The tournament starts in 02:00: stay here to be paired."),
        (
            Phase.RUNNING,
            Presence.WAITING,
            "Waiting to be paired for 00:07. 09:00 left in the tournament.",
        ),
        (
            Phase.RUNNING,
            Presence.PAUSED,
            "Paused: you are not paired. 09:00 left; 'join' to play again.",
        ),
        (Phase.RUNNING, Presence.RACING, "In a race. 09:00 left."),
        (
            Phase.FINISHING,
            Presence.WAITING,
            "No more pairings: the last races are being played; the standings follow them.",
        ),
        (Phase.FINISHED, None, "The tournament is over: the standings are final."),
    ],
)
def test_the_wait_line(phase: Phase, presence: Presence | None, expected: str) -> None:
    now = 1_000_000
    line = wait_line(
        phase=phase,
        now_ms=now,
        starts_at=now + 120_000,
        ends_at=now + 540_000,
        presence=presence,
        waiting_since=now - 7_000,
    )
    assert line == expected


@pytest.mark.parametrize("presence", [Presence.WAITING, Presence.PAUSED])
def test_the_last_stretch_says_no_race_is_coming(presence: Presence) -> None:
    now = 1_000_000
    ends_at = now + 25_000
    kwargs = {"phase": Phase.RUNNING, "starts_at": now - 300_000, "ends_at": ends_at}
    line = wait_line(now_ms=now, presence=presence, pairing_until=ends_at - 180_000, **kwargs)
    assert line == (
        "No more races: the last stretch (00:25 left, less than a race). The races still on "
        "are played out; the standings follow them."
    )
    before = wait_line(now_ms=now, presence=presence, pairing_until=now + 1, **kwargs)
    assert "last stretch" not in before
    racing = wait_line(now_ms=now, presence=Presence.RACING, pairing_until=now - 1, **kwargs)
    assert racing == "In a race. 00:25 left."


def test_the_podium() -> None:
    podium = [Place(1, "ann", 14, 7, 6), Place(2, "bob", 9, 7, 4), Place(3, "cy", 2, 1, 1)]
    assert podium_lines(podium, name="Friday") == [
        "Friday: the podium",
        "  1st  ann                    14 points    7 races, 6 first places",
        "  2nd  bob                     9 points    7 races, 4 first places",
        "  3rd  cy                      2 points     1 race, 1 first place",
    ]
    assert podium_lines([], name="Empty")[1] == "  nobody played a race"


SUMMARY = {
    "id": "t7k2",
    "name": "Hourly Swiss",
    "variant": "swiss",
    "creator": None,
    "status": "running",
    "starts_at": 1_000_000,
    "ends_at": 1_000_000 + 1_800_000,
    "length_ms": 1_800_000,
    "pairing_until": 1_000_000 + 1_700_000,
    "time_limit_ms": 180_000,
    "race_size": 2,
    "rated": True,
    "berserk": True,
    "streaks": True,
    "players": 12,
    "racing": 4,
    "races": 9,
    "podium": None,
}


def test_the_list_live_first_then_upcoming_then_finished() -> None:
    now = 1_600_000
    items = [
        listing({**SUMMARY, "id": "done1", "status": "finished", "podium": [{"name": "ann"}]}),
        listing(
            {
                **SUMMARY,
                "id": "soon",
                "status": "upcoming",
                "starts_at": now + 300_000,
                "ends_at": now + 300_000 + 3_600_000,
            }
        ),
        listing(SUMMARY),
    ]
    assert list_lines(items, now_ms=now) == [
        "id         name                     game        length players  when",
        "t7k2       Hourly Swiss             swiss       30 min      12  20:00 left",
        "soon       Hourly Swiss             swiss          1 h      12  in 05:00",
        "done1      Hourly Swiss             swiss       30 min      12  won by ann",
    ]
    assert list_lines([], now_ms=now)[1].startswith("(no tournaments")
    assert isinstance(items[0], Listing)


def test_the_facts_line() -> None:
    assert facts_line(SUMMARY) == (
        "Swiss, 30 min, races of 2 (03:00 each), rated, berserk, streaks; 12 players"
    )


ROW = {
    "rank": 2,
    "account": "bob",
    "name": "Bob",
    "rating": 1510,
    "score": 6,
    "fire": True,
    "performance": 1600,
    "races": 2,
    "wins": 2,
    "active": True,
    "racing": None,
    "sheet": [
        {"room": "r1", "place": 1, "of": 2, "points": 2, "doubled": False, "berserk": False},
        {"room": "r2", "place": 1, "of": 2, "points": 4, "doubled": True, "berserk": False},
    ],
}


def standings_of(row: dict[str, Any]) -> dict[str, Any]:
    """A page of `tournament_standings` holding ``row`` alone."""
    return {"page": 1, "pages": 1, "players": 1, "rows": [row], "me": None, "final": False}


def test_rows_from_the_wire() -> None:
    row = standing(ROW, me="BOB")
    assert row == Standing(2, "Bob", 6, (Result(2), Result(4, double=True)), True, 1510, me=True)
    assert standing({**ROW, "racing": "room9"}, me=None).presence is Presence.RACING
    assert standing({**ROW, "active": False}, me=None).presence is Presence.PAUSED


def test_the_standings_show_the_rating_as_it_stands_now() -> None:
    moved = standing({**ROW, "rating_now": 1579}, me=None)
    assert moved.rating == 1579  # after the races, not the 1510 it joined with
    assert "  1579  waiting" in standings_lines([moved])[1]


def test_between_races_the_screen_shows_facts_standings_and_sheet() -> None:
    standings = {
        "tournament": "t7k2",
        "version": 9,
        "page": 1,
        "pages": 1,
        "players": 1,
        "rows": [ROW],
        "me": ROW,
        "final": False,
    }
    lines = lobby_lines(SUMMARY, standings, me="bob")
    assert lines[0].startswith("Swiss, 30 min")
    assert lines[3] == (
        ">    2  Bob                     6 x2  2 4                          1510  waiting"
    )
    assert lines[-2:] == [
        "Your sheet: 2 4 = 6 points, rank 2, 2 races. On a streak: your next first place",
        "counts double.",
    ]


def test_a_finished_tournament_shows_its_podium() -> None:
    podium = [{**ROW, "rank": 1}]
    lines = lobby_lines({**SUMMARY, "status": "finished", "podium": podium}, None, me=None)
    assert lines[1:] == [
        "Hourly Swiss: the podium",
        "  1st  Bob                     6 points    2 races, 2 first places",
    ]


def test_the_sheet_in_words_says_which_races_the_clock_ended() -> None:
    row = Standing(1, "Ann", 4, (Result(2, timed_out=True), Result(0), Result(2, timed_out=True)))
    assert sheet_line(row).endswith(" You ran out of time in races 1, 3.")
    one = Standing(1, "Ann", 2, (Result(0), Result(2, timed_out=True)))
    assert sheet_line(one).endswith("2 races. You ran out of time in race 2.")
    assert "out of time" not in sheet_line(Standing(1, "Ann", 2, (Result(2),)))
    wire = {"rank": 1, "name": "Ann", "score": 0, "sheet": [{"points": 0, "timed_out": True}]}
    assert standing(wire, me=None).sheet == (Result(0, timed_out=True),)


def test_berserk_is_offered_and_confirmed_with_the_clock_it_leaves() -> None:
    cup = {"berserk": True, "time_limit_ms": 180_000}
    assert berserk_hint(cup) == "Type 'berserk' to race on 01:30 instead of 03:00."
    assert berserk_hint({**cup, "berserk": False}) == ""
    assert berserk_line(cup) == (
        "Berserk: your clock is halved to 01:30; a first place in 20 moves or more earns +1."
    )
