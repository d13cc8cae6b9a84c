"""Cards as two-character codes ("TH"): RULES.md, "Cards and codes".

Codes stay plain strings everywhere; the lookup tables below make rank, suit and colour checks
dictionary hits, because the rules engine runs them millions of times.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from shared.errors import ClientError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
RED_SUITS = frozenset("DH")
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

# The ordered deck every shuffle starts from: clubs, diamonds, hearts, spades, each Ace to King.
FULL_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARDS = frozenset(FULL_DECK)

RANK_OF: dict[str, int] = {c: RANKS.index(c[0]) + 1 for c in FULL_DECK}
SUIT_INDEX: dict[str, int] = {c: SUITS.index(c[1]) for c in FULL_DECK}
IS_RED: dict[str, bool] = {c: c[1] in RED_SUITS for c in FULL_DECK}


class BadCard(ClientError):
    """A card code or deck that is not valid."""

    code = "bad_card"


def parse_card(text: str) -> str:
    """The canonical code of a card written leniently ("th", "10h", " AS ")."""
    if not isinstance(text, str):
        raise BadCard(f"a card code must be a string, not {type(text).__name__}")
    code = text.strip().upper()
    if code.startswith("10") and len(code) == 3:
        code = "T" + code[2]
    if code not in CARDS:
        raise BadCard(
            f"{text!r} is not a card: write rank then suit, "
            f"rank in {RANKS} (or 10), suit in {SUITS}"
        )
    return code


def rank(card: str) -> int:
    """Rank 1 (Ace) to 13 (King)."""
    return RANK_OF[card]


def suit(card: str) -> str:
    """The suit letter: C, D, H or S."""
    return card[1]


def is_red(card: str) -> bool:
    """Diamonds and hearts are red; clubs and spades are black."""
    return IS_RED[card]


def validate_deck(deck: Iterable[str]) -> tuple[str, ...]:
    """The deck as a tuple of canonical codes, checked to hold each of the 52 cards once."""
    cards = tuple(parse_card(c) for c in deck)
    if len(cards) != 52 or len(set(cards)) != 52:
        missing = sorted(CARDS - set(cards), key=FULL_DECK.index)
        twice = sorted((c for c, n in Counter(cards).items() if n > 1), key=FULL_DECK.index)
        raise BadCard(
            f"a deck holds the 52 cards once each; got {len(cards)} cards"
            + (f", missing {' '.join(missing)}" if missing else "")
            + (f", repeated {' '.join(twice)}" if twice else "")
        )
    return cards
