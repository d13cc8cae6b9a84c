"""Example tests of every Quadrennial rule, each citing its section of RULES.md."""

from __future__ import annotations

import pytest

from shared import IllegalMove, apply_move, deal_deck, is_over, is_won, legal_moves, new_game
from tests.shared.positions import quad

FULL_RESERVE = ["9C", "9D", "9H", "9S", "8C", "8D", "8H", "8S"]


def test_layout_reserve_and_stock_top() -> None:
    """RULES.md, How a deck is laid out, Quadrennial: deck[0..7] go to r1..r8; the other 44
    form the stock with deck[8] on top."""
    deck = deal_deck("quadrennial", 7)
    state = new_game("quadrennial", deck=deck)
    assert state.reserve == tuple(deck[:8])
    assert len(state.stock) == 44
    assert apply_move(state, "d").waste == (deck[8],)
    assert state.redeals_left == 2
    assert state.tableau == ()


def test_ace_starts_a_foundation() -> None:
    """RULES.md, Quadrennial, Foundations: any Ace may start an empty foundation; a Two may not."""
    state = quad(["AH", "2C", *FULL_RESERVE[2:]], stock=["3C"])
    legal = legal_moves(state)
    assert "r1f" in legal
    assert "r2f" not in legal
    with pytest.raises(IllegalMove, match="takes an Ace"):
        apply_move(state, "r2f")


def test_foundation_builds_up_by_suit_to_the_king() -> None:
    """RULES.md, Quadrennial, Foundations: up by suit from the Ace to the King."""
    state = quad(["KD", "QD", *FULL_RESERVE[2:]], found={"D": 11}, stock=["2C", "3C"])
    assert legal_moves(state) >= {"r2f"}
    assert "r1f" not in legal_moves(state)
    after = apply_move(apply_move(state, "r2f"), "r1f")
    assert after.foundations[1][-1] == "KD"
    assert len(after.foundations[1]) == 13


def test_nothing_is_built_on_the_reserve() -> None:
    """RULES.md, Quadrennial: nothing is ever built on the reserve piles; cards go only to the
    foundations (the notation has no reserve destination at all)."""
    state = quad(FULL_RESERVE, waste=["7H"], stock=["2C"])
    for move in ("wr1", "r1r2", "r2t1", "wt1"):
        with pytest.raises(IllegalMove):
            apply_move(state, move)


def test_waste_top_to_foundation() -> None:
    """RULES.md, Quadrennial: cards move one at a time from a reserve pile or the waste top."""
    state = quad(FULL_RESERVE, waste=["3C", "AS"], stock=["2C"])
    assert "wf" in legal_moves(state)
    after = apply_move(state, "wf")
    assert after.waste == ("3C",)
    assert after.foundations[3] == ("AS",)


def test_foundation_cards_never_move_again() -> None:
    """RULES.md, Quadrennial: foundation cards never move again."""
    state = quad(FULL_RESERVE, found={"S": 3}, stock=["2C"])
    assert not any(m.startswith("f") for m in legal_moves(state))
    with pytest.raises(IllegalMove, match="no moves off the foundations"):
        apply_move(state, "fst1")


def test_refill_after_a_reserve_card_plays() -> None:
    """RULES.md, Quadrennial, standing refill rule: an emptied reserve pile takes the stock's
    top card at once."""
    state = quad(["AC", *FULL_RESERVE[1:]], stock=["7C", "5D"])
    after = apply_move(state, "r1f")
    assert after.reserve[0] == "5D"
    assert after.stock == ("7C",)


def test_reserve_empty_only_while_stock_empty() -> None:
    """RULES.md, Quadrennial, standing refill rule: a reserve pile is empty only while the stock
    is empty; dealing never leaves one empty while cards remain."""
    state = quad(["AC", *FULL_RESERVE[1:]], waste=["4H"])
    after = apply_move(state, "r1f")
    assert after.reserve[0] is None
    assert "r1f" not in legal_moves(after)


def test_redeal_refills_every_empty_pile_in_order() -> None:
    """RULES.md, Quadrennial, standing refill rule: a redeal refills every empty reserve pile at
    once, r1..r8 in order, from the top of the new stock."""
    state = quad([None, "9D", None, "9S", None, "8D", "8H", "8S"], waste=["2C", "3C", "4C", "5C"])
    after = apply_move(state, "redeal")
    # The waste's bottom card (first dealt) comes out first: 2C to r1, 3C to r3, 4C to r5.
    assert after.reserve == ("2C", "9D", "3C", "9S", "4C", "8D", "8H", "8S")
    assert after.stock == ("5C",)
    assert after.waste == ()
    assert after.redeals_left == 1


def test_deal_at_any_time() -> None:
    """RULES.md, Quadrennial: the stock deals one card to the waste at any time it has cards."""
    state = quad(["AC", *FULL_RESERVE[1:]], stock=["7C", "5D"])
    assert {"d", "r1f"} <= legal_moves(state)
    after = apply_move(state, "d")
    assert after.waste == ("5D",)
    assert after.reserve[0] == "AC"


def test_redeal_keeps_the_order_of_first_deal() -> None:
    """RULES.md, Quadrennial, Redeal: the waste is turned over without shuffling, so the cards
    come out again in the order they were first dealt."""
    state = quad(FULL_RESERVE, stock=["2C", "3C", "4C"])
    for _ in range(3):
        state = apply_move(state, "d")
    assert state.waste == ("4C", "3C", "2C")
    state = apply_move(state, "redeal")
    dealt = []
    for _ in range(3):
        state = apply_move(state, "d")
        dealt.append(state.waste[-1])
    assert dealt == ["4C", "3C", "2C"]


def test_redeal_only_when_stock_empty_and_waste_not() -> None:
    """RULES.md, Quadrennial, Redeal: when the stock is empty and the waste is not."""
    with_stock = quad(FULL_RESERVE, stock=["2C"], waste=["3C"])
    assert "redeal" not in legal_moves(with_stock)
    with pytest.raises(IllegalMove, match="stock is empty"):
        apply_move(with_stock, "redeal")
    no_waste = quad(FULL_RESERVE)
    assert "redeal" not in legal_moves(no_waste)
    with pytest.raises(IllegalMove, match="waste is empty"):
        apply_move(no_waste, "redeal")


def test_two_redeals_three_passes() -> None:
    """RULES.md, Quadrennial, Redeal: two redeals are allowed, three passes in all."""
    state = quad(FULL_RESERVE, stock=["2C"])
    passes = 1
    while True:
        state = apply_move(state, "d")
        if "redeal" not in legal_moves(state):
            break
        state = apply_move(state, "redeal")
        passes += 1
    assert passes == 3
    assert state.redeals_left == 0
    with pytest.raises(IllegalMove, match="no redeal left"):
        apply_move(state, "redeal")


def test_redeal_is_an_explicit_action() -> None:
    """RULES.md, Quadrennial, Redeal: a redeal is an explicit action; d never turns the waste."""
    state = quad(FULL_RESERVE, waste=["2C"])
    assert "d" not in legal_moves(state)
    with pytest.raises(IllegalMove, match="redeal"):
        apply_move(state, "d")


def test_won_with_all_cards_on_foundations() -> None:
    """RULES.md, Quadrennial: won when all 52 cards are on the foundations."""
    state = quad(
        ["KS", None, None, None, None, None, None, None], found={"C": 13, "D": 13, "H": 13, "S": 12}
    )
    after = apply_move(state, "r1f")
    assert is_won(after)
    assert is_over(after)
    assert legal_moves(after) == set()


def test_over_when_no_legal_move() -> None:
    """RULES.md, Quadrennial: over when no legal move is left."""
    state = quad(FULL_RESERVE, waste=["2C"], redeals_left=0)
    assert legal_moves(state) == set()
    assert is_over(state)
    assert not is_won(state)


def test_tableau_moves_are_not_quadrennial() -> None:
    """RULES.md, Move notation: t1..t9 are Swiss piles."""
    with pytest.raises(IllegalMove, match="no tableau"):
        apply_move(quad(FULL_RESERVE, stock=["2C"]), "t1f")
