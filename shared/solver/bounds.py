"""DEAD_CARDS: a bound that proves a Swiss position lost, from where its cards lie.

RULES.md, Swiss: a card leaves the place it lies in only from the top (a pile's run, the
waste's top), to its foundation (which must hold the card before it: "build up by suit from a
Two", 2 ... K A) or onto a tableau card that takes it ("opposite colour, one rank higher", an
Ace also on a King or an empty pile). Every card must leave to win. So a card can leave only
once (a) every card above it in its pile or the waste has left (for a move onto another card,
only those above the first break above it: the run between moves with it), and (b) one of its
ways out is open: its foundation predecessor has left (or is on the foundation), or a card it
may go on is on a foundation, has left its own place, or is in a pile with everything above it
gone, or (an Ace) some pile can be emptied. Stock cards have nothing above them: each is
dealt onto the waste's top. Cards that left before may come back and cover things again, but
that only delays; the conditions above are necessary, so the least set of cards closed under
them holds every card that can ever leave. A card outside it never reaches its foundation:
the position is lost.
"""

from __future__ import annotations

from shared.cards import FULL_DECK, IS_RED, RANK_OF, SUIT_INDEX

Tableau = tuple[tuple[str, ...], ...]

_ORDER = "23456789TJQKA"  # RULES.md, Swiss, Foundations
_POS: dict[str, int] = {c: _ORDER.index(c[0]) for c in FULL_DECK}
_SUIT: dict[str, int] = dict(SUIT_INDEX)
# _PRED[c]: the card its foundation holds just before c; None for a Two (it starts one).
_PRED: dict[str, str | None] = {
    c: (None if _POS[c] == 0 else _ORDER[_POS[c] - 1] + c[1]) for c in FULL_DECK
}


def _takes(b: str, a: str) -> bool:
    ra, rb = RANK_OF[a], RANK_OF[b]
    return IS_RED[a] != IS_RED[b] and (rb == (ra - 2) % 13 + 1 or (ra == 13 and rb == 1))


# _PARENTS[c]: the cards c may be placed on (two, four for an Ace: the Twos and the Kings).
_PARENTS: dict[str, tuple[str, ...]] = {
    b: tuple(a for a in FULL_DECK if _takes(b, a)) for b in FULL_DECK
}
_ACE = frozenset(c for c in FULL_DECK if c[0] == "A")


def has_dead_card(
    tab: Tableau, waste: tuple[str, ...], stock: tuple[str, ...], counts: tuple[int, ...]
) -> bool:
    """True when some card can provably never leave where it lies (see the module docstring).

    `stock` lists the cards still to be dealt, `counts` the cards on each foundation."""
    # Per loose card: everything above it, and what must leave for a move onto another card.
    above: dict[str, tuple[str, ...]] = {}
    blocking: dict[str, tuple[str, ...]] = {}
    for pile in tab:
        brk = len(pile)  # the index of the lowest card above a break, scanning down
        for k in range(len(pile) - 1, -1, -1):
            above[pile[k]] = pile[k + 1 :]
            blocking[pile[k]] = pile[brk:]
            if k and not _takes(pile[k], pile[k - 1]):
                brk = k
    in_tableau = frozenset(above)
    for k, card in enumerate(waste):
        above[card] = blocking[card] = waste[k + 1 :]
    for card in stock:
        above[card] = blocking[card] = ()
    gone: set[str] = {c for c in FULL_DECK if _POS[c] < counts[_SUIT[c]]}
    pending = list(above)
    while pending:
        empty = any(all(c in gone for c in pile) for pile in tab)
        still = []
        for card in pending:
            if _can_leave(card, gone, above, blocking, in_tableau, empty):
                gone.add(card)
            else:
                still.append(card)
        if len(still) == len(pending):
            return True
        pending = still
    return False


def _can_leave(
    card: str,
    gone: set[str],
    above: dict[str, tuple[str, ...]],
    blocking: dict[str, tuple[str, ...]],
    in_tableau: frozenset[str],
    empty: bool,
) -> bool:
    pred = _PRED[card]
    if (pred is None or pred in gone) and all(c in gone for c in above[card]):
        return True
    if not all(c in gone for c in blocking[card]):
        return False
    if card in _ACE and empty:
        return True
    for parent in _PARENTS[card]:
        if parent in gone or (parent in in_tableau and all(c in gone for c in above[parent])):
            return True
    return False


def buried(waste: tuple[str, ...]) -> bool:
    """The bound's case for a card just dealt: the waste's top card is not an Ace, and its
    foundation predecessor and both cards it may go on lie below it in the waste, so none of
    its ways out opens before it leaves. Cheap enough to test after every deal."""
    card = waste[-1]
    pred = _PRED[card]
    if pred is None or card in _ACE:
        return False
    below = waste[:-1]
    return pred in below and all(p in below for p in _PARENTS[card])
