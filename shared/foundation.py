"""Building a card onto its suit's foundation: the one step both variants share.

The variants differ only in the order a foundation is built (Swiss from a Two to the Ace,
Quadrennial from the Ace to the King), passed in as each suit's sequence of cards.
"""

from __future__ import annotations

from shared.cards import SUIT_INDEX
from shared.errors import IllegalMove

Foundations = tuple[tuple[str, ...], ...]


def build_on(
    foundations: Foundations, card: str, sequences: tuple[tuple[str, ...], ...], first: str
) -> Foundations:
    """The foundations with ``card`` on its suit's pile; IllegalMove naming what the pile takes.

    ``sequences[s]`` lists suit s's cards in building order; ``first`` names its first card
    for the message ("a Two", "an Ace")."""
    s = SUIT_INDEX[card]
    pile = foundations[s]
    if len(pile) == 13 or sequences[s][len(pile)] != card:
        takes = sequences[s][len(pile)] if len(pile) < 13 else "nothing more"
        want = takes if pile else first
        raise IllegalMove(f"{card} cannot go to its foundation, which takes {want}")
    piles = list(foundations)
    piles[s] = (*pile, card)
    return tuple(piles)
