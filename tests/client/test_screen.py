"""The screen as a pure function, read back through a terminal emulator (pyte) as a person sees
it: every frame fits its window (80x24, 100x40, 40x12), tall piles keep their playable cards in
view, the race panel stays right of the board, and names line up by display width."""

from __future__ import annotations

import re

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.board import render_board, render_compact
from client.screen import (
    PANEL_WIDTH,
    Racer,
    RacerState,
    Screen,
    compose,
    fit,
    format_clock,
    frame_bytes,
    render_panel,
    strip_ansi,
    visible_width,
)
from client.text import card_text
from shared import apply_move, new_game, public_view
from shared.cards import IS_RED
from shared.state import GameState
from shared.views import PublicView
from tests.shared.strategies import quadrennial_positions, swiss_positions

SIZES = [(80, 24), (100, 40), (40, 12)]


def on_terminal(lines: list[str], columns: int, rows: int) -> list[str]:
    """The frame drawn in place, as the client draws it, on a terminal of that size."""
    screen = pyte.Screen(columns, rows)
    pyte.Stream(screen).feed(frame_bytes(lines, "> "))
    return [row.rstrip() for row in screen.display]


def swiss_after_d() -> PublicView:
    return public_view(apply_move(new_game("swiss", seed=1), "d"))


def quadrennial() -> PublicView:
    return public_view(new_game("quadrennial", seed=7))


RACERS = (
    Racer("ann", 12, 40, RacerState.PLAYING, me=True),
    Racer("bob", 52, 130, RacerState.WON, finished_ms=125_000),
    Racer("carolinemaxi", 3, 9, RacerState.RESIGNED),
)


def race_screen(view: PublicView, **extra: object) -> Screen:
    fields: dict[str, object] = {
        "title": f"Solitaire Arena - {view.variant.capitalize()} - race - room abc123",
        "boards": (("", view),),
        "clock": "01:05",
        "moves": view.moves_made,
        "racers": RACERS,
        "status": "Your move: e.g. 3 5, 3f, wf or d; 'moves' lists them, 'help rules' explains.",
        "messages": ("played d",),
        "error": "t1f: Q♠ cannot go to its foundation, which takes a Two",
    }
    fields.update(extra)
    return Screen(**fields)  # type: ignore[arg-type]


SWISS_RACE_80x24 = """\
Solitaire Arena - Swiss - race - room abc123                 1 move  clock 01:05
Stock: 26 cards   Waste: 3♣ (1 card)           Racers
Foundations: ♣ --   ♦ --   ♥ --   ♠ --  0/52    #  name       fnd  mvs state
                                                1 *ann         12   40 playing
  t1   t2   t3   t4   t5   t6   t7   t8   t9    2  bob         52  130 02:05
  Q♠   9♥   6♣   4♠   5♦   9♠   7♠   2♥   7♥    3  carolinem…   3    9 resigned
       Q♦   Q♣   K♠   8♣   10♠  8♦   4♦
            K♦   2♦   K♣   K♥   J♥
                 9♣   6♥   3♠
                      5♠

Your move: e.g. 3 5, 3f, wf or d; 'moves' lists them, 'help rules' explains.
played d
t1f: Q♠ cannot go to its foundation, which takes a Two
>"""

QUAD_SOLO_80x24 = """\
Solitaire Arena - Quadrennial - solo - room q1              0 moves  clock 00:04
Stock: 44 cards   Waste: empty
Foundations: ♣ --   ♦ --   ♥ --   ♠ --  0/52
Redeals left: 2
  r1   r2   r3   r4   r5   r6   r7   r8
  8♥   2♦   10♣  4♥   8♦   5♥   9♠   7♥

Your move: e.g. 5 (r5 to its foundation), wf, d or redeal; 'moves' lists them,
'help rules' explains.
>"""


def test_a_swiss_race_at_80x24_shows_board_panel_status_and_messages() -> None:
    lines = compose(race_screen(swiss_after_d()), width=80, height=24)
    shown = on_terminal(lines, 80, 24)
    assert "\n".join(shown).rstrip() == SWISS_RACE_80x24


def test_a_quadrennial_solo_game_at_80x24() -> None:
    screen = Screen(
        title="Solitaire Arena - Quadrennial - solo - room q1",
        boards=(("", quadrennial()),),
        clock="00:04",
        moves=0,
        status="Your move: e.g. 5 (r5 to its foundation), wf, d or redeal; 'moves' lists them, "
        "'help rules' explains.",
    )
    shown = on_terminal(compose(screen, width=80, height=24), 80, 24)
    assert "\n".join(shown).rstrip() == QUAD_SOLO_80x24


@pytest.mark.parametrize(("columns", "rows"), SIZES)
@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
def test_both_variants_fit_or_say_the_size_they_need(variant: str, columns: int, rows: int) -> None:
    view = swiss_after_d() if variant == "swiss" else quadrennial()
    lines = compose(race_screen(view), width=columns, height=rows, color=True)
    assert len(lines) < rows  # the prompt line stays on screen: nothing scrolls
    assert all(visible_width(line) <= columns for line in lines)
    shown = on_terminal(lines, columns, rows)
    if columns >= 80:
        assert shown[0].startswith(f"Solitaire Arena - {variant.capitalize()}")
        assert "1 move" in shown[0] or "0 moves" in shown[0]  # the move counter
        piles = "t9" if variant == "swiss" else "r8"
        assert any(piles in row for row in shown)
        assert any("carolinem…" in row for row in shown)  # the panel, beside the board
        assert any("t1f: Q♠ cannot go" in row for row in shown)  # the last message
    else:
        # Not clipped silently: the notice says how big the window must be.
        text = " ".join(" ".join(shown).split())
        assert "Window too small: needs at least 79x" in text
        assert f"this one is {columns}x{rows}" in text


def test_colour_changes_nothing_but_the_escapes() -> None:
    screen = race_screen(swiss_after_d())
    plain = compose(screen, width=80, height=24)
    coloured = compose(screen, width=80, height=24, color=True)
    assert [strip_ansi(line) for line in coloured] == plain
    assert any("\x1b[31m9♥\x1b[0m" in line for line in coloured)  # red cards are red


def tall_pile_view() -> PublicView:
    """A Swiss board whose t3 holds 42 cards (RULES.md, "Swiss": a run of alternating colours
    built down around the corner), as `play --offline --seed 156` reaches after 237 moves."""
    pile = []
    for i in range(42):
        block, rank = divmod(i, 13)
        red = i % 2 == 1
        suit = ("H" if red else "S") if block < 2 else ("D" if red else "C")
        pile.append("KQJT98765432A"[rank] + suit)
    assert len(set(pile)) == 42
    rest = [c for c in (r + s for s in "CDHS" for r in "A23456789TJQK") if c not in pile]
    tableau = ((rest[0],), (rest[1], rest[2]), tuple(pile), (rest[3],), (), (rest[4],), (), (), ())
    return PublicView(
        variant="swiss",
        tableau=tableau,
        reserve=(),
        stock_count=0,
        waste=tuple(rest[5:10]),
        foundations=((), (), (), ()),
        redeals_left=0,
        moves_made=237,
        won=False,
        over=False,
        resigned=False,
    )


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (100, 40)])
def test_a_42_card_pile_keeps_its_top_cards_in_view(columns: int, rows: int) -> None:
    view = tall_pile_view()
    screen = Screen(
        title="Solitaire Arena - Swiss - seed 156 - offline",
        boards=(("", view),),
        moves=view.moves_made,
        clock="12:01",
        status="Your move: e.g. 3 5, 3f, wf or d; 'moves' lists them, 'help rules' explains.",
        messages=("3 6 -> t3t6",),
    )
    lines = compose(screen, width=columns, height=rows)
    shown = on_terminal(lines, columns, rows)
    assert shown[0].startswith("Solitaire Arena")
    assert "237 moves" in shown[0]
    column = [row[10:15].strip() for row in shown]  # t3's cells
    start = column.index("t3") + 1
    marker = column[start]
    assert marker.startswith("…")  # what is left out is counted, above the cards shown
    cards = []
    for row, cell in zip(shown[start + 1 :], column[start + 1 :], strict=True):
        if not cell or row.startswith("…N:"):
            break
        cards.append(cell)
    pile = [card_text(c) for c in view.tableau[2]]
    assert int(marker[1:]) + len(cards) == 42
    assert cards == pile[-len(cards) :]  # the tail, in order, down to the playable top card
    assert len(cards) >= 8
    text = "\n".join(shown)
    assert "…N: N more cards lie under the ones shown" in text
    assert "3 6 -> t3t6" in text  # the last message still shows
    assert len(lines) < rows


def test_a_compressed_pile_shows_its_last_cards_in_order() -> None:
    view = tall_pile_view()
    lines = render_board(view, rows=14)
    assert len(lines) == 14
    cells = [line[10:15].strip() for line in lines[4:13]]
    assert cells[0] == f"…{42 - 8}"
    assert cells[1:] == [card_text(c) for c in view.tableau[2][-8:]]


def racers(n: int) -> tuple[Racer, ...]:
    names = ["ann", "bob", "山田太郎さん", "dörte🙂"][:n]
    return tuple(
        Racer(name, 10 - i, 30 + i, RacerState.PLAYING, me=i == 0, place=i + 1)
        for i, name in enumerate(names)
    )


def watch_all(n: int, **extra: object) -> Screen:
    view = swiss_after_d()
    labels = [f"{r.place}. {r.name}" for r in racers(n)]
    fields: dict[str, object] = {
        "title": "Solitaire Arena - watching room abc123 - everyone",
        "boards": tuple((label, view) for label in labels),
        "clock": "03:10",
        "racers": racers(n),
        "status": "Watching live.",
        "messages": ("Type a racer's number or name to follow one, 'all' for everyone.",),
    }
    fields.update(extra)
    return Screen(**fields)  # type: ignore[arg-type]


def test_watching_4_racers_at_80x24_fits_with_every_board_labelled() -> None:
    lines = compose(watch_all(4), width=80, height=24)
    shown = on_terminal(lines, 80, 24)
    assert shown[0].startswith("Solitaire Arena - watching room abc123")  # no scrolling
    for label in ("1. ann", "2. bob", "3. 山田太郎さん", "4. dörte🙂"):
        assert any(row.startswith(label) for row in shown), label
    # The panel in its one place, right of the boards: its rows start in one column.
    title_row = next(row for row in shown if row.rstrip().endswith("Racers"))
    col = title_row.index("Racers")
    numbered = [
        row[col : col + 3] for row in shown if row[col : col + 3] in (" 1 ", " 2 ", " 3 ", " 4 ")
    ]
    assert numbered == [" 1 ", " 2 ", " 3 ", " 4 "]
    assert col > 40
    assert "Watching live." in shown


def test_watching_3_racers_at_100x40_shows_every_board_and_the_results() -> None:
    screen = watch_all(
        3,
        status="Race over: time is up.",
        messages=("Results: 1. ann (10), 2. bob (9), 3. 山田太郎さん (8)",),
    )
    lines = compose(screen, width=100, height=40)
    shown = on_terminal(lines, 100, 40)
    text = "\n".join(shown)
    assert shown[0].startswith("Solitaire Arena - watching")
    for label in ("== 1. ann", "== 2. bob", "== 3. 山田太郎さん"):
        assert label in text
    assert "Results: 1. ann (10), 2. bob (9), 3. 山田太郎さん (8)" in text
    assert len(lines) < 40


def test_more_racers_than_fit_are_listed_as_more() -> None:
    lines = compose(watch_all(4), width=80, height=14)
    text = "\n".join(lines)
    assert re.search(r"^\+\d more: type a racer's number to see it", text, re.MULTILINE)
    assert len(lines) < 14


def test_the_panel_lines_up_wide_names_by_display_width() -> None:
    panel = render_panel(racers(4), title="Racers", color=False)
    assert all(visible_width(line) <= PANEL_WIDTH for line in panel)
    # The "fnd" column ends in the same display column on every line, wide names included.
    ends = {
        visible_width(line[: line.index(f" {r.cards:>3} ") + 4])
        for r, line in zip(racers(4), panel[2:], strict=True)
    }
    assert len(ends) == 1
    assert panel[4].startswith(" 3  山田太郎…    8")  # cut to 10 columns, the count lined up


def test_an_away_racer_is_shown_with_the_time_away() -> None:
    away = (Racer("ann", 3, 10, RacerState.PLAYING, away_ms=12_400), Racer("bob", 1, 2))
    panel = render_panel(away, title="Racers", color=False)
    assert "ann — disconnected 0:12" in panel
    assert panel[2].endswith("away")


def test_the_panel_numbers_racers_from_the_start() -> None:
    panel = render_panel(
        (Racer("ann", 3, 10), Racer("bob", 1, 2, RacerState.RESIGNED)), title="R", color=False
    )
    assert panel[2].startswith(" 1  ann")
    assert panel[3].startswith(" 2  bob")


def test_height_drops_old_messages_before_anything_else() -> None:
    screen = race_screen(swiss_after_d(), messages=("m1", "m2", "m3"))
    full = compose(screen, width=80)
    assert "m1" in full
    assert "m3" in full
    short = compose(screen, width=80, height=16)
    assert "m1" not in short
    assert "m3" in short
    assert any("t9" in line for line in short)


def test_compact_board_is_three_lines_within_the_board_area() -> None:
    lines = render_compact("2. bob", swiss_after_d())
    assert lines[0] == "2. bob: 0/52, 1 move, playing"
    assert lines[1].startswith("  stock 26  waste 3♣")
    assert lines[2] == "  tops Q♠  Q♦  K♦  9♣  5♠  3♠  J♥  4♦  7♥"
    assert all(visible_width(line) <= 80 - PANEL_WIDTH - 2 for line in lines)


def test_fit_and_clock_helpers() -> None:
    assert fit("\x1b[31mhello\x1b[0m world", 3) == "\x1b[31mhel\x1b[0m"
    assert fit("山田太郎", 5) == "山田"
    assert format_clock(None) == "--:--"
    assert format_clock(65_000) == "01:05"
    assert format_clock(3_725_000) == "1:02:05"
    assert IS_RED["9H"]


@settings(max_examples=60, deadline=None)
@given(st.one_of(swiss_positions(hidden=False), quadrennial_positions(hidden=False)))
def test_the_panel_keeps_its_column_whatever_the_cards(state: GameState) -> None:
    """A `10♥` on a pile or ten cards up do not push the race panel a column to the right."""
    lines = compose(race_screen(public_view(state)), width=80, height=40)
    [heading] = [line for line in lines if "#  name" in line]
    assert visible_width(heading[: heading.index("#  name")]) == 48


def test_the_header_keeps_two_spaces_before_the_moves_and_clock() -> None:
    title = "Solitaire Arena - Friday evening blitz of the club - race 12 - room f6ub79u3"
    [header, *_] = compose(race_screen(swiss_after_d(), title=title), width=80, height=24)
    assert header.endswith("…  1 move  clock 01:05")
    assert visible_width(header) == 80
