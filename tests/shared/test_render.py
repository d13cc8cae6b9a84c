"""Text rendering of a board: a pure function of a PublicView, at most 80 columns, compared
against fixed strings (plain and with ANSI colour) for both variants."""

from __future__ import annotations

from shared import PublicView, apply_move, new_game, public_view, render_board, resign
from tests.shared.positions import quad, swiss

R, X = "\x1b[31m", "\x1b[0m"


def _swiss_position() -> PublicView:
    state = new_game("swiss", seed=42)
    for move in ["t6f", "t9t1", "d", "d"]:
        state = apply_move(state, move)
    return public_view(state)


def _quad_position() -> PublicView:
    state = new_game("quadrennial", seed=42)
    for move in ["r7f", "d", "d"]:
        state = apply_move(state, move)
    return public_view(state)


SWISS_PLAIN = """\
Swiss solitaire                                                         moves 4
Stock: 25 cards   Waste: 2♠ (2 cards)
Foundations: ♣ --    ♦ 2♦    ♥ --    ♠ --    (1/52)

  t1   t2   t3   t4   t5   t6   t7   t8   t9
  K♦   A♥   9♠   7♦   4♥   6♣   7♠   2♣   --
  A♣   Q♦   9♥   4♦   6♦   7♥   3♦   10♠
            8♥   Q♠   Q♥   J♦   5♦
                 10♦  4♣
                      K♥
"""

SWISS_COLOUR = f"""\
Swiss solitaire                                                         moves 4
Stock: 25 cards   Waste: 2♠ (2 cards)
Foundations: ♣ --    ♦ {R}2♦{X}    ♥ --    ♠ --    (1/52)

  t1   t2   t3   t4   t5   t6   t7   t8   t9
  {R}K♦{X}   {R}A♥{X}   9♠   {R}7♦{X}   {R}4♥{X}   6♣   7♠   2♣   --
  A♣   {R}Q♦{X}   {R}9♥{X}   {R}4♦{X}   {R}6♦{X}   {R}7♥{X}   {R}3♦{X}   10♠
            {R}8♥{X}   Q♠   {R}Q♥{X}   {R}J♦{X}   {R}5♦{X}
                 {R}10♦{X}  4♣
                      {R}K♥{X}
"""

QUAD_PLAIN = """\
Quadrennial solitaire                                                   moves 3
Stock: 41 cards   Waste: 4♠ (2 cards)   Redeals left: 2
Foundations: ♣ --    ♦ A♦    ♥ --    ♠ --    (1/52)

  r1   r2   r3   r4   r5   r6   r7   r8
  J♣   8♣   3♥   10♦  K♣   7♥   6♠   8♠
"""

QUAD_COLOUR = f"""\
Quadrennial solitaire                                                   moves 3
Stock: 41 cards   Waste: 4♠ (2 cards)   Redeals left: 2
Foundations: ♣ --    ♦ {R}A♦{X}    ♥ --    ♠ --    (1/52)

  r1   r2   r3   r4   r5   r6   r7   r8
  J♣   8♣   {R}3♥{X}   {R}10♦{X}  K♣   {R}7♥{X}   6♠   8♠
"""


def test_swiss_plain() -> None:
    assert render_board(_swiss_position()) == SWISS_PLAIN


def test_swiss_colour() -> None:
    assert render_board(_swiss_position(), color=True) == SWISS_COLOUR


def test_quadrennial_plain() -> None:
    assert render_board(_quad_position()) == QUAD_PLAIN


def test_quadrennial_colour() -> None:
    assert render_board(_quad_position(), color=True) == QUAD_COLOUR


def test_plain_has_no_escape_codes_and_fits_80_columns() -> None:
    for text in (render_board(_swiss_position()), render_board(_quad_position())):
        assert "\x1b" not in text
        assert max(len(line) for line in text.splitlines()) <= 80


def test_empty_reserve_and_finished_states() -> None:
    over = quad([None, "9D", None, "9S", None, "8D", "8H", "8S"], waste=["2C"], redeals_left=0)
    text = render_board(public_view(over))
    assert "  r1   r2   r3   r4   r5   r6   r7   r8\n  --   9♦   --   9♠   --" in text
    assert "Redeals left: 0" in text
    assert text.endswith("\nGame over: no legal move left.\n")
    won = public_view(
        apply_move(swiss([["AC"]], found={"C": 12, "D": 13, "H": 13, "S": 13}), "t1f")
    )
    text = render_board(won)
    assert "(52/52)" in text
    assert "  --   --   --   --   --   --   --   --   --" in text
    assert text.endswith("\nWon: all 52 cards are on the foundations.\n")


def test_resigned_and_empty_waste() -> None:
    text = render_board(public_view(resign(new_game("swiss", seed=1))))
    assert "Waste: empty" in text
    assert text.endswith("\nResigned.\n")
