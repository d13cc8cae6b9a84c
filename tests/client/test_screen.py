"""The screen as a pure function: fixed-width frames for both variants, with and without colour."""

from __future__ import annotations

from client.screen import (
    Racer,
    RacerState,
    Screen,
    compose,
    fit,
    format_clock,
    frame_bytes,
    strip_ansi,
    visible_width,
)
from shared import apply_move, new_game, public_view, render_board

# Boards as shared.render_board drew them (swiss seed 1 after "d", quadrennial seed 7), fixed
# here so these tests pin the screen layer; the board itself is the core's, tested there.
SWISS_BOARD = (
    "Swiss solitaire                                                         moves 1\n"
    "Stock: 26 cards   Waste: 3♣ (1 card)\n"
    "Foundations: ♣ --    ♦ --    ♥ --    ♠ --    (0/52)\n"
    "\n"
    "  t1   t2   t3   t4   t5   t6   t7   t8   t9\n"
    "  Q♠   9♥   6♣   4♠   5♦   9♠   7♠   2♥   7♥\n"
    "       Q♦   Q♣   K♠   8♣   10♠  8♦   4♦\n"
    "            K♦   2♦   K♣   K♥   J♥\n"
    "                 9♣   6♥   3♠\n"
    "                      5♠\n"
)
R, X = "\x1b[31m", "\x1b[0m"
SWISS_BOARD_COLOR = (
    SWISS_BOARD.replace("9♥", f"{R}9♥{X}")
    .replace("5♦", f"{R}5♦{X}")
    .replace("2♥", f"{R}2♥{X}")
    .replace("7♥", f"{R}7♥{X}")
    .replace("Q♦", f"{R}Q♦{X}")
    .replace("8♦", f"{R}8♦{X}")
    .replace("4♦", f"{R}4♦{X}")
    .replace("K♦", f"{R}K♦{X}")
    .replace("2♦", f"{R}2♦{X}")
    .replace("K♥", f"{R}K♥{X}")
    .replace("J♥", f"{R}J♥{X}")
    .replace("6♥", f"{R}6♥{X}")
)
QUAD_BOARD = (
    "Quadrennial solitaire                                                   moves 0\n"
    "Stock: 44 cards   Waste: empty   Redeals left: 2\n"
    "Foundations: ♣ --    ♦ --    ♥ --    ♠ --    (0/52)\n"
    "\n"
    "  r1   r2   r3   r4   r5   r6   r7   r8\n"
    "  8♥   2♦   10♣  4♥   8♦   5♥   9♠   7♥\n"
)
QUAD_BOARD_COLOR = QUAD_BOARD.replace(
    "  8♥   2♦   10♣  4♥   8♦   5♥   9♠   7♥",
    f"  {R}8♥{X}   {R}2♦{X}   10♣  {R}4♥{X}   {R}8♦{X}   {R}5♥{X}   9♠   {R}7♥{X}",
)


RACERS = (
    Racer("ann", 12, 40, RacerState.PLAYING, me=True),
    Racer("bob", 52, 130, RacerState.WON, finished_ms=125_000, rank=1),
    Racer("carolinemaxi", 3, 9, RacerState.RESIGNED),
)


def race_screen(board: str) -> Screen:
    return Screen(
        title="Solitaire Arena - Swiss - race - room abc123",
        board=board,
        clock="01:05",
        racers=RACERS,
        status="Your move",
        messages=("played d",),
        error="t1f: not legal",
    )


SWISS_RACE = """\
Solitaire Arena - Swiss - race - room abc123                         clock 01:05
Swiss solitaire   moves 1                        Racers
Stock: 26 cards   Waste: 3♣ (1 card)              # name     fnd  mvs state
Foundations: ♣ --   ♦ --   ♥ --   ♠ --   (0/52)   - *ann      12   40 playing
                                                  1  bob      52  130 02:05
  t1   t2   t3   t4   t5   t6   t7   t8   t9      -  caroli~   3    9 resigned
  Q♠   9♥   6♣   4♠   5♦   9♠   7♠   2♥   7♥
       Q♦   Q♣   K♠   8♣   10♠  8♦   4♦
            K♦   2♦   K♣   K♥   J♥
                 9♣   6♥   3♠
                      5♠

Your move
played d
t1f: not legal"""


def test_swiss_race_frame_puts_the_panel_beside_the_board() -> None:
    lines = compose(race_screen(SWISS_BOARD))
    assert "\n".join(lines) == SWISS_RACE


def test_swiss_race_frame_in_colour_is_the_plain_frame_plus_escapes() -> None:
    lines = compose(race_screen(SWISS_BOARD_COLOR), color=True)
    assert [strip_ansi(line) for line in lines] == SWISS_RACE.split("\n")
    assert lines[0] == (
        "\x1b[1mSolitaire Arena - Swiss - race - room abc123\x1b[0m"
        "                         clock 01:05"
    )
    assert lines[3].endswith("\x1b[1m - *ann      12   40 playing\x1b[0m")
    assert lines[4].endswith("\x1b[32m 1  bob      52  130 02:05\x1b[0m")
    assert lines[5].endswith("\x1b[2m -  caroli~   3    9 resigned\x1b[0m")
    assert lines[12] == "\x1b[33mYour move\x1b[0m"
    assert lines[14] == "\x1b[31mt1f: not legal\x1b[0m"
    assert "3♣ (1 card)" in lines[2]  # clubs are black: no escape around the waste card
    assert "\x1b[31m9♥\x1b[0m" in lines[6]
    assert all(visible_width(line) <= 80 for line in lines)


QUAD_SOLO = """\
Solitaire Arena - Quadrennial - seed 7 - offline                     clock 00:00
Quadrennial solitaire                                                   moves 0
Stock: 44 cards   Waste: empty   Redeals left: 2
Foundations: ♣ --    ♦ --    ♥ --    ♠ --    (0/52)

  r1   r2   r3   r4   r5   r6   r7   r8
  8♥   2♦   10♣  4♥   8♦   5♥   9♠   7♥

Your move"""


def quad_screen(board: str) -> Screen:
    return Screen(
        title="Solitaire Arena - Quadrennial - seed 7 - offline",
        board=board,
        clock="00:00",
        status="Your move",
    )


def test_quadrennial_solo_frame_without_colour() -> None:
    assert "\n".join(compose(quad_screen(QUAD_BOARD))) == QUAD_SOLO


def test_quadrennial_solo_frame_in_colour_paints_red_cards() -> None:
    lines = compose(quad_screen(QUAD_BOARD_COLOR), color=True)
    assert [strip_ansi(line) for line in lines] == QUAD_SOLO.split("\n")
    assert lines[6] == (
        "  \x1b[31m8♥\x1b[0m   \x1b[31m2♦\x1b[0m   10♣  \x1b[31m4♥\x1b[0m   \x1b[31m8♦\x1b[0m"
        "   \x1b[31m5♥\x1b[0m   9♠   \x1b[31m7♥\x1b[0m"
    )


QUAD_RACE_BELOW = """\
Solitaire Arena - Quadrennial                                        clock 00:00
Quadrennial solitaire                                                   moves 0
Stock: 44 cards   Waste: empty   Redeals left: 2
Foundations: ♣ --    ♦ --    ♥ --    ♠ --    (0/52)

  r1   r2   r3   r4   r5   r6   r7   r8
  8♥   2♦   10♣  4♥   8♦   5♥   9♠   7♥

Racers
 # name     fnd  mvs state
 - *ann      12   40 playing

Go!"""


def test_panel_goes_below_a_board_too_wide_to_share_the_line() -> None:
    screen = Screen(
        title="Solitaire Arena - Quadrennial",
        board=QUAD_BOARD,
        clock="00:00",
        racers=RACERS[:1],
        status="Go!",
    )
    wide_board = QUAD_BOARD.replace("(0/52)", "(0/52)" + " " * 2 + "x" * 10)
    lines = compose(screen, width=80)
    assert lines[1].endswith("Racers")  # fits beside at 80 columns
    below = compose(
        Screen(title=screen.title, board=wide_board, clock="00:00", racers=RACERS[:1], status="Go!")
    )
    expected = QUAD_RACE_BELOW.replace("(0/52)", "(0/52)  xxxxxxxxxx")
    assert "\n".join(below) == expected


def test_height_drops_old_messages_first() -> None:
    screen = Screen(
        title="t", board="b1\nb2\nb3", status="s", messages=("m1", "m2", "m3"), error="e"
    )
    assert compose(screen) == ["t", "b1", "b2", "b3", "", "s", "m1", "m2", "m3", "e"]
    assert compose(screen, height=9) == ["t", "b1", "b2", "b3", "", "s", "m3", "e"]
    assert compose(screen, height=6) == ["t", "b1", "b2", "s", "e"]


def test_every_line_fits_in_the_width() -> None:
    screen = Screen(title="x" * 100, board="y" * 100, status="z" * 100, messages=("w" * 90,))
    assert all(visible_width(line) <= 80 for line in compose(screen))
    assert all(visible_width(line) <= 40 for line in compose(screen, width=40))


def test_fit_keeps_escapes_and_resets_colour() -> None:
    assert fit("\x1b[31mabcdef\x1b[0m", 3) == "\x1b[31mabc\x1b[0m"
    assert fit("abc", 5) == "abc"


def test_format_clock() -> None:
    assert format_clock(None) == "--:--"
    assert format_clock(0) == "00:00"
    assert format_clock(65_999) == "01:05"
    assert format_clock(3_600_000 + 61_000) == "1:01:01"
    assert format_clock(-5) == "00:00"


def test_frame_overwrites_in_place_without_clearing_the_screen() -> None:
    frame = frame_bytes(["ab", "c"], "> t3")
    assert frame == "\x1b[Hab\x1b[K\r\nc\x1b[K\r\n> t3\x1b[K\x1b[J"
    assert "\x1b[2J" not in frame


def test_real_boards_of_both_variants_compose_within_80_columns() -> None:
    views = [
        public_view(apply_move(new_game("swiss", seed=1), "d")),
        public_view(new_game("quadrennial", seed=7)),
    ]
    for view in views:
        for color in (False, True):
            board = render_board(view, color=color)
            lines = compose(race_screen(board), color=color)
            assert all(visible_width(line) <= 80 for line in lines)
            plain = "\n".join(strip_ansi(line) for line in lines)
            for racer in ("*ann", "bob", "caroli~"):
                assert racer in plain
            for row in strip_ansi(board).split("\n")[4:]:
                assert row.strip() in plain
