"""Seeded deals, independent of Python's random module: docs/deals.md is the specification.

Version 1: the seed's canonical text keys a SHA-256 counter-mode byte stream; 32-bit words of
that stream drive a Fisher-Yates shuffle of the ordered deck, with rejection sampling so every
permutation is equally likely. DEAL_VERSION goes into every game's first event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from shared.cards import FULL_DECK
from shared.errors import ClientError
from shared.variants import check_variant

DEAL_VERSION = 1


class BadSeed(ClientError):
    """A seed that is neither an integer nor a string."""

    code = "bad_seed"


def canonical_seed(seed: int | str) -> str:
    """The seed as text: an int is its decimal form, so 42 and "42" are the same deal."""
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise BadSeed(f"a seed is an integer or a string, not {type(seed).__name__}")
    return str(seed) if isinstance(seed, int) else seed


def _words(key: bytes) -> Iterator[int]:
    """Big-endian 32-bit words of SHA-256(key ":" counter), counter = 0, 1, 2, ..."""
    counter = 0
    while True:
        block = hashlib.sha256(key + b":" + str(counter).encode("ascii")).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")
        counter += 1


def deal_deck(variant: str, seed: int | str) -> list[str]:
    """The 52 card codes in deal order for this variant and seed (docs/deals.md)."""
    check_variant(variant)
    key = f"{variant}:{DEAL_VERSION}:{canonical_seed(seed)}".encode()
    words = _words(key)
    deck = list(FULL_DECK)
    for i in range(51, 0, -1):
        span = i + 1
        limit = (1 << 32) - (1 << 32) % span  # largest multiple of span not above 2**32
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % span
        deck[i], deck[j] = deck[j], deck[i]
    return deck
