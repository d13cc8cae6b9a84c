"""Cards and codes: RULES.md, "Cards and codes"."""

from __future__ import annotations

import pytest

from shared import FULL_DECK, BadCard, parse_card, validate_deck
from shared.cards import is_red, rank, suit


@pytest.mark.parametrize(
    ("text", "code"),
    [("TH", "TH"), ("th", "TH"), ("10H", "TH"), ("10h", "TH"), (" as ", "AS"), ("2c", "2C")],
)
def test_parse_is_case_insensitive_and_accepts_10(text: str, code: str) -> None:
    """RULES.md, Cards and codes: case-insensitive, 10H accepted, output upper 2-char."""
    assert parse_card(text) == code


@pytest.mark.parametrize("text", ["", "1H", "11H", "TX", "HT", "AHS", "joker", "10"])
def test_bad_codes_are_refused(text: str) -> None:
    with pytest.raises(BadCard, match="not a card"):
        parse_card(text)


def test_non_string_is_refused() -> None:
    with pytest.raises(BadCard, match="string"):
        parse_card(10)  # type: ignore[arg-type]


def test_52_cards_no_jokers() -> None:
    """RULES.md, Cards and codes: 52 cards, ranks A..K, suits C D H S."""
    assert len(FULL_DECK) == len(set(FULL_DECK)) == 52
    assert FULL_DECK[0] == "AC"
    assert FULL_DECK[-1] == "KS"


def test_colours_ranks_suits() -> None:
    """RULES.md, Cards and codes: diamonds and hearts red, clubs and spades black."""
    assert is_red("5D")
    assert is_red("QH")
    assert not is_red("5C")
    assert not is_red("KS")
    assert rank("AS") == 1
    assert rank("TD") == 10
    assert rank("KH") == 13
    assert suit("9C") == "C"


def test_validate_deck() -> None:
    """RULES.md, Cards and codes: a deck is the 52 codes, each once."""
    assert validate_deck([c.lower() for c in FULL_DECK]) == FULL_DECK
    with pytest.raises(BadCard, match="missing KS"):
        validate_deck(FULL_DECK[:-1])
    with pytest.raises(BadCard, match="repeated AC"):
        validate_deck((*FULL_DECK[:-1], "AC"))
