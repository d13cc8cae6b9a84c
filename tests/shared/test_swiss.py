"""Example tests of every Swiss rule, each citing its section of RULES.md."""

from __future__ import annotations

import pytest

from shared import (
    IllegalMove,
    apply_move,
    deal_deck,
    is_over,
    is_won,
    legal_moves,
    new_game,
    resign,
)
from tests.shared.positions import swiss


def test_layout_pile_sizes_and_stock_top() -> None:
    """RULES.md, How a deck is laid out, Swiss: piles of 1 2 3 4 5 4 3 2 1 dealt pile by pile,
    bottom to top; deck[25] is the stock's top, the first card dealt."""
    deck = deal_deck("swiss", 7)
    state = new_game("swiss", deck=deck)
    assert [len(p) for p in state.tableau] == [1, 2, 3, 4, 5, 4, 3, 2, 1]
    assert state.tableau[0] == (deck[0],)
    assert state.tableau[1] == (deck[1], deck[2])
    assert state.tableau[4] == tuple(deck[10:15])
    assert state.tableau[8] == (deck[24],)
    assert len(state.stock) == 27
    after = apply_move(state, "d")
    assert after.waste == (deck[25],)
    assert apply_move(after, "d").waste == (deck[25], deck[26])


def test_start_waste_and_foundations_empty() -> None:
    """RULES.md, Swiss: all tableau cards face up, waste empty, four foundations empty."""
    state = new_game("swiss", seed="start")
    assert state.waste == ()
    assert state.foundations == ((), (), (), ())
    assert state.reserve == ()
    assert state.redeals_left == 0


# --- Foundations ---------------------------------------------------------------------------


def test_any_two_starts_a_foundation() -> None:
    """RULES.md, Swiss, Foundations: any Two may start an empty foundation."""
    state = swiss([["2D"], ["2S"]], waste=["2H"])
    assert {"t1f", "t2f", "wf"} <= legal_moves(state)
    assert apply_move(state, "t1f").foundations[1] == ("2D",)


def test_ace_does_not_start_a_foundation() -> None:
    """RULES.md, Swiss, Foundations: build up from a Two, so an Ace cannot start one."""
    state = swiss([["AD"]])
    assert "t1f" not in legal_moves(state)
    with pytest.raises(IllegalMove, match="takes a Two"):
        apply_move(state, "t1f")


def test_foundation_builds_up_by_suit() -> None:
    """RULES.md, Swiss, Foundations: up by suit, 2 3 4 ... ; another suit or rank is refused."""
    state = swiss([["3C"], ["3D"], ["4C"]], found={"C": 1})
    assert "t1f" in legal_moves(state)
    assert "t2f" not in legal_moves(state)
    assert "t3f" not in legal_moves(state)
    assert apply_move(state, "t1f").foundations[0] == ("2C", "3C")


def test_king_then_ace_completes_foundation() -> None:
    """RULES.md, Swiss, Foundations: ... Q K A; complete at 13 cards with the Ace on top."""
    state = swiss([["AH"]], found={"H": 12})
    assert "t1f" in legal_moves(state)
    after = apply_move(state, "t1f")
    assert after.foundations[2][-1] == "AH"
    assert len(after.foundations[2]) == 13


def test_complete_foundation_takes_nothing() -> None:
    """RULES.md, Swiss, Foundations: a foundation is complete at 13 cards."""
    state = swiss([["2H"]], found={"H": 13})
    with pytest.raises(IllegalMove):
        apply_move(state, "t1f")


# --- Tableau ------------------------------------------------------------------------------


def test_down_in_alternating_colours() -> None:
    """RULES.md, Swiss, Tableau: opposite colour, one rank lower."""
    state = swiss([["9H"], ["8S"], ["8D"], ["7S"]])
    legal = legal_moves(state)
    assert "t2t1" in legal  # black 8 on red 9
    assert "t3t1" not in legal  # red on red
    assert "t4t1" not in legal  # two ranks lower
    with pytest.raises(IllegalMove, match="opposite colour"):
        apply_move(state, "t3t1")


def test_ace_on_two() -> None:
    """RULES.md, Swiss, Tableau: ranks are cyclic, so an Ace goes on a Two."""
    state = swiss([["2H"], ["KC", "AS"]])
    assert "t2t1" in legal_moves(state)
    assert apply_move(state, "t2t1").tableau[0] == ("2H", "AS")


def test_king_on_ace() -> None:
    """RULES.md, Swiss, Tableau: around the corner, a King goes on an Ace."""
    state = swiss([["AD"], ["3H", "KS"]])
    assert "t2t1" in legal_moves(state)
    assert apply_move(state, "t2t1").tableau[0] == ("AD", "KS")


def test_ace_on_king() -> None:
    """RULES.md, Swiss, Tableau: in addition, an Ace may be placed on a King."""
    state = swiss([["KD"], ["3H", "AC"]])
    assert "t2t1" in legal_moves(state)
    assert apply_move(state, "t2t1").tableau[0] == ("KD", "AC")


def test_ace_on_king_needs_other_colour() -> None:
    """RULES.md, Swiss, Tableau: colours must differ, also for an Ace on a King."""
    state = swiss([["KD"], ["3H", "AH"]])
    assert "t2t1" not in legal_moves(state)


def test_queen_on_king_but_not_king_on_queen() -> None:
    """RULES.md, Swiss, Tableau: one rank lower only, never one higher."""
    state = swiss([["KD"], ["QS"], ["QC"], ["KH"]])
    legal = legal_moves(state)
    assert "t2t1" in legal
    assert "t4t3" not in legal


# --- Runs ---------------------------------------------------------------------------------


def test_run_of_any_length_moves_as_a_unit() -> None:
    """RULES.md, Swiss, Tableau: a run moves as a unit, of any length."""
    run = ["QD", "JS", "TH", "9C", "8D", "7S", "6H", "5C", "4D", "3S", "2H", "AC", "KD", "AS"]
    state = swiss([run, ["KS"]])
    # Every suffix is a run; KS accepts QD (the bottom of the whole run), so x14 fits.
    assert "t1t2x14" in legal_moves(state)
    after = apply_move(state, "t1t2x14")
    assert after.tableau[0] == ()
    assert after.tableau[1] == ("KS", *run)


def test_run_stops_at_a_card_that_does_not_follow() -> None:
    """RULES.md, Swiss, Tableau: a run is the top card and the cards below it that follow the
    rule; a card out of sequence ends it."""
    state = swiss([["9C", "7H", "6S"], ["8C"], ["8S"]])
    assert "t1t2x2" in legal_moves(state)  # 7H 6S onto 8C
    assert "t1t3x3" not in legal_moves(state)
    with pytest.raises(IllegalMove, match="not a run"):
        apply_move(state, "t1t2x3")


def test_two_run_lengths_fit_the_same_pile() -> None:
    """RULES.md, Swiss, Tableau: runs of any length with cyclic ranks, so two lengths of one
    run may fit the same destination; each is its own legal move."""
    # t1 bottom to top: 2S AH KC, a run of three (AH on 2S, KC on AH around the corner).
    state = swiss([["2S", "AH", "KC"], ["AD"], ["3H"]])
    legal = legal_moves(state)
    assert {"t1t2", "t1t3x3", "t1t4x2"} <= legal  # KC on AD; 2S on 3H; AH heads a run to empty
    assert "t1t3" not in legal
    # t1: 2H AS KD AC (Ace on King at the top). 2D takes AC alone and AS KD AC.
    both = swiss([["2H", "AS", "KD", "AC"], ["2D"]])
    assert {"t1t2", "t1t2x3"} <= legal_moves(both)
    assert "t1t2x2" not in legal_moves(both)


def test_run_length_must_be_explicit_and_canonical() -> None:
    """RULES.md, Move notation: t<i>t<j>x<n> for n >= 2; t3t5 moves one card."""
    state = swiss([["9H", "8S"], ["TC"]])
    assert apply_move(state, "t1t2x2").tableau[1] == ("TC", "9H", "8S")
    with pytest.raises(IllegalMove, match="x<n> needs n >= 2"):
        apply_move(state, "t1t2x1")


# --- Empty piles --------------------------------------------------------------------------


def test_empty_pile_takes_an_ace() -> None:
    """RULES.md, Swiss: an empty tableau pile may be filled only by an Ace."""
    state = swiss([["5C", "AH"], [], ["4D", "KS"]])
    legal = legal_moves(state)
    assert "t1t2" in legal
    assert "t3t2" not in legal
    with pytest.raises(IllegalMove, match="only an Ace"):
        apply_move(state, "t3t2")


def test_empty_pile_takes_a_run_headed_by_an_ace() -> None:
    """RULES.md, Swiss: ... or by a run whose bottom card is an Ace."""
    state = swiss([["5C", "AH", "KS", "AD"], []])
    legal = legal_moves(state)
    # Suffixes: [AD], [KS AD], [AH KS AD]: only those whose bottom is an Ace.
    assert "t1t2" in legal
    assert "t1t2x3" in legal
    assert "t1t2x2" not in legal
    assert apply_move(state, "t1t2x3").tableau[1] == ("AH", "KS", "AD")


def test_waste_ace_to_empty_pile() -> None:
    """RULES.md, Swiss: the waste top goes to a tableau pile; an empty one takes an Ace."""
    state = swiss([["9C"]], waste=["AH"])
    assert "wt2" in legal_moves(state)
    assert apply_move(state, "wt2").tableau[1] == ("AH",)


# --- Waste and foundation cards -----------------------------------------------------------


def test_waste_top_to_foundation_or_tableau() -> None:
    """RULES.md, Swiss: the top card of the waste may go to a foundation or a tableau pile."""
    state = swiss([["4S"]], waste=["3C", "3H"], found={"H": 1})
    legal = legal_moves(state)
    assert {"wf", "wt1"} <= legal
    after = apply_move(state, "wf")
    assert after.waste == ("3C",)
    assert after.foundations[2] == ("2H", "3H")


def test_foundation_card_back_to_tableau() -> None:
    """RULES.md, Swiss: the top card of a foundation may go back to a tableau pile."""
    state = swiss([["6S"]], found={"H": 4})  # 2H 3H 4H 5H
    assert "fht1" in legal_moves(state)
    after = apply_move(state, "fht1")
    assert after.tableau[0] == ("6S", "5H")
    assert after.foundations[2] == ("2H", "3H", "4H")


def test_ace_from_complete_foundation_to_empty_pile_two_or_king() -> None:
    """RULES.md, Swiss: an Ace from a foundation goes onto an empty pile, or onto a Two or a
    King of the other colour."""
    state = swiss([["2D"], ["KH"], ["2C"], ["KS"], ["9D"]], found={"S": 13})
    legal = legal_moves(state)
    assert {"fst1", "fst2", "fst6"} <= legal
    assert "fst3" not in legal  # same colour Two
    assert "fst4" not in legal  # same colour King
    assert "fst5" not in legal
    assert apply_move(state, "fst6").foundations[3][-1] == "KS"


def test_foundation_card_not_to_foundation() -> None:
    """RULES.md, Move notation: f as a destination only; fs is a source of tableau moves."""
    with pytest.raises(IllegalMove):
        apply_move(swiss([], found={"S": 3}), "fsf")


# --- Stock --------------------------------------------------------------------------------


def test_deal_at_any_time() -> None:
    """RULES.md, Swiss: the stock deals one card at any time while it has cards (the seed's
    "when no moves are available" is advice)."""
    state = swiss([["3H"], ["2S"]], stock=["9D", "8C"])
    assert "t2t1" in legal_moves(state)
    assert "d" in legal_moves(state)
    after = apply_move(state, "d")
    assert after.waste == ("8C",)
    assert after.stock == ("9D",)


def test_one_pass_only() -> None:
    """RULES.md, Swiss: one pass only, no redeal."""
    state = swiss([["3H"]], waste=["9D", "8C"])
    assert "d" not in legal_moves(state)
    assert "redeal" not in legal_moves(state)
    with pytest.raises(IllegalMove, match="one pass"):
        apply_move(state, "d")
    with pytest.raises(IllegalMove, match="no redeal"):
        apply_move(state, "redeal")


def test_reserve_moves_are_not_swiss() -> None:
    """RULES.md, Move notation: r1..r8 are Quadrennial piles."""
    with pytest.raises(IllegalMove, match="no reserve"):
        apply_move(swiss([["3H"]]), "r1f")


# --- End of the game ----------------------------------------------------------------------


def test_won_with_all_cards_on_foundations() -> None:
    """RULES.md, Swiss: won when all 52 cards are on the foundations."""
    state = swiss([["AC"]], found={"C": 12, "D": 13, "H": 13, "S": 13})
    assert not is_won(state)
    after = apply_move(state, "t1f")
    assert is_won(after)
    assert is_over(after)
    assert legal_moves(after) == set()


def test_over_when_no_legal_move() -> None:
    """RULES.md, Swiss: the game is over (lost) when no legal move is left."""
    state = swiss([["9H"], ["9D"]], waste=["5C"])
    assert legal_moves(state) == set()
    assert is_over(state)
    assert not is_won(state)


def test_resign() -> None:
    """RULES.md, Swiss: a player may also resign; nothing is legal afterwards."""
    state = new_game("swiss", seed=3)
    gone = resign(state)
    assert gone.resigned
    assert is_over(gone)
    assert not is_won(gone)
    assert legal_moves(gone) == set()
    with pytest.raises(IllegalMove, match="resigned"):
        apply_move(gone, "d")
    with pytest.raises(IllegalMove):
        resign(gone)


def test_apply_leaves_the_given_state_unchanged() -> None:
    """apply_move returns a new state (docs/architecture.md)."""
    state = new_game("swiss", seed=11)
    before = (state.tableau, state.stock, state.waste, state.moves_made)
    after = apply_move(state, "d")
    assert (state.tableau, state.stock, state.waste, state.moves_made) == before
    assert after.moves_made == 1
