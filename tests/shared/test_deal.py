"""Seeded deals (docs/deals.md, RULES.md "Seeds and deals"): pinned test vectors, so the
algorithm can never change silently, and the properties of the shuffle."""

from __future__ import annotations

import hashlib
import random

import pytest

from shared import (
    DEAL_VERSION,
    FULL_DECK,
    BadSeed,
    UnknownVariant,
    canonical_seed,
    deal_deck,
    new_game,
)
from shared.deal import _words

# Generated once by the version-1 implementation; they pin it across releases and platforms.
DECKS = {
    ("swiss", 1): "QS 9H QD 6C QC KD 4S KS 2D 9C 5D 8C KC 6H 5S 9S TS KH 3S 7S 8D JH 2H 4D 7H "
    "3C TH 2S JC 7D 3H QH TD 7C 8H 5C JD AD TC 6D AC AS 2C JS 4H 5H 4C 9D AH 8S 3D 6S",
    ("swiss", 42): "KD AH QD 9S 9H 8H 7D 4D QS TD 4H 6D QH 4C KH 6C 7H JD 2D 7S 3D 5D 2C TS AC "
    "5S 2S JH 3S 3H AS KC 6S AD JC JS KS 6H 9C 8D QC 4S 3C 8S 8C TH 5C 5H TC 9D 7C 2H",
    ("swiss", "arena"): "9D 9H JS KD 3D KH 9C 2S QH 8S 8H 6D 7S TS 4S 6S 2C 7H 3H 8C AC 7C 5H JH "
    "5S 4D 5D 8D AH QC 9S 7D 3S TD AS 6H JC QS TH KS 6C JD AD QD KC 2D 5C 3C 4H 4C 2H TC",
    ("quadrennial", 1): "2D 2C AH TC 6H 4D 9S KS 6C 3C KH 3H TD JH JC AC QS 7D JD 9C 5C 9H 2S QD "
    "7S 7H 6D 8S 2H 5H 6S QH 5S 4H 9D JS 7C 5D 4C 3S TH AS TS 4S QC 8D KD KC AD 8C 8H 3D",
    ("quadrennial", 42): "JC 8C 3H TD KC 7H AD 8S 6S 9S 4S QD 6C QC TH 5S TS 5C 5D JS AH QS 2D 6H "
    "2S 4D 9H 7S 3D KD 9D 2C KH 8D 7D KS JH JD 3S AC 7C 9C 2H 3C 5H 8H 4H TC AS QH 4C 6D",
    ("quadrennial", "arena"): "JS 8C 5S KC 4S JC 3H 9S 4C 9C QH 8H TD AH 2S 2D 3C QS 3S 5D 6C 5C "
    "6H 4H 7C 7H QD 2C 6D 6S AD AS 2H 9D TS 4D 7S 7D 5H QC JH AC KS 8D JD KD 3D KH 9H 8S TH TC",
}

SWISS_LAYOUTS = {
    1: (["QS", "9H QD", "6C QC KD", "4S KS 2D 9C", "5D 8C KC 6H 5S", "9S TS KH 3S", "7S 8D JH",
         "2H 4D", "7H"], "3C"),
    42: (["KD", "AH QD", "9S 9H 8H", "7D 4D QS TD", "4H 6D QH 4C KH", "6C 7H JD 2D", "7S 3D 5D",
          "2C TS", "AC"], "5S"),
    "arena": (["9D", "9H JS", "KD 3D KH", "9C 2S QH 8S", "8H 6D 7S TS 4S", "6S 2C 7H 3H",
               "8C AC 7C", "5H JH", "5S"], "4D"),
}  # fmt: skip

QUAD_LAYOUTS = {
    1: ("2D 2C AH TC 6H 4D 9S KS", "6C"),
    42: ("JC 8C 3H TD KC 7H AD 8S", "6S"),
    "arena": ("JS 8C 5S KC 4S JC 3H 9S", "4C"),
}


def test_deal_version_is_one() -> None:
    """docs/deals.md: this is version 1; a change needs a new number and new vectors."""
    assert DEAL_VERSION == 1


def test_stream_vector() -> None:
    """docs/deals.md, step 3: SHA-256 counter mode, big-endian 32-bit words."""
    block = hashlib.sha256(b"swiss:1:42:0").hexdigest()
    assert block == "784fd6af022fc476a4c3c947991c0be116a8165efbd012ae338a5f4bbddd992c"
    words = _words(b"swiss:1:42")
    assert [next(words) for _ in range(4)] == [2018498223, 36684918, 2764294471, 2568752097]


@pytest.mark.parametrize(("variant", "seed"), list(DECKS))
def test_deck_vectors(variant: str, seed: int | str) -> None:
    """RULES.md, Seeds and deals: the same variant and seed give the same deck everywhere."""
    assert deal_deck(variant, seed) == DECKS[variant, seed].split()


@pytest.mark.parametrize("seed", list(SWISS_LAYOUTS))
def test_swiss_layout_vectors(seed: int | str) -> None:
    """RULES.md, How a deck is laid out, Swiss, on the pinned decks."""
    piles, first_dealt = SWISS_LAYOUTS[seed]
    state = new_game("swiss", seed=seed)
    assert [" ".join(p) for p in state.tableau] == piles
    assert state.stock[-1] == first_dealt
    assert len(state.stock) == 27


@pytest.mark.parametrize("seed", list(QUAD_LAYOUTS))
def test_quadrennial_layout_vectors(seed: int | str) -> None:
    """RULES.md, How a deck is laid out, Quadrennial, on the pinned decks."""
    reserve, first_dealt = QUAD_LAYOUTS[seed]
    state = new_game("quadrennial", seed=seed)
    assert " ".join(state.reserve) == reserve  # type: ignore[arg-type]
    assert state.stock[-1] == first_dealt
    assert len(state.stock) == 44


def test_int_and_decimal_string_seeds_are_the_same_deal() -> None:
    """docs/deals.md, step 1: an integer seed is its decimal text."""
    assert deal_deck("swiss", 42) == deal_deck("swiss", "42")
    assert deal_deck("quadrennial", -7) == deal_deck("quadrennial", "-7")
    assert canonical_seed(42) == "42"


def test_string_seeds_are_taken_exactly() -> None:
    """docs/deals.md, step 1: no trimming or case folding of string seeds."""
    assert deal_deck("swiss", "Arena") != deal_deck("swiss", "arena")
    assert deal_deck("swiss", " 42") != deal_deck("swiss", "42")


def test_variant_is_part_of_the_key() -> None:
    assert deal_deck("swiss", 42) != deal_deck("quadrennial", 42)


def test_every_deal_is_a_full_deck() -> None:
    for seed in range(50):
        assert sorted(deal_deck("swiss", seed)) == sorted(FULL_DECK)


def test_independent_of_random_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """RULES.md, Seeds and deals: not dependent on Python's random.shuffle."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the deal must not use the random module")

    expected = DECKS["swiss", 42].split()
    monkeypatch.setattr(random, "shuffle", refuse)
    monkeypatch.setattr(random, "random", refuse)
    monkeypatch.setattr(random, "randrange", refuse)
    assert deal_deck("swiss", 42) == expected


def test_shuffle_is_not_grossly_biased() -> None:
    """Each card lands in the first position about equally often (a gross-bias guard, with a
    deterministic sample: 2,600 deals, 50 expected per card; bounds are ~6 sigma wide)."""
    counts: dict[str, int] = {}
    for seed in range(2600):
        first = deal_deck("quadrennial", seed)[0]
        counts[first] = counts.get(first, 0) + 1
    assert set(counts) == set(FULL_DECK)
    assert max(counts.values()) < 95
    assert min(counts.values()) > 12


@pytest.mark.parametrize("seed", [True, 1.5, None, b"42", [1]])
def test_bad_seeds_are_refused(seed: object) -> None:
    with pytest.raises(BadSeed):
        deal_deck("swiss", seed)  # type: ignore[arg-type]


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(UnknownVariant, match="swiss, quadrennial"):
        deal_deck("klondike", 1)
