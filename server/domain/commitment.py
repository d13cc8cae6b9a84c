"""The commit-reveal of a room's deal (docs/protocol.md, "Fairness")."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def commitment(secret: str, salt: str) -> str:
    """hex SHA-256 of ``secret + ":" + salt``."""
    return hashlib.sha256(f"{secret}:{salt}".encode()).hexdigest()


def deck_secret(deck: Iterable[str]) -> str:
    """The committed text of a room created from an explicit deck."""
    return " ".join(deck)
