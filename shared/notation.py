"""Move notation: RULES.md, "Move notation". Canonical strings at every boundary.

`parse_canonical` turns a canonical move into a small tuple the rules engine works on (cached:
the set of distinct moves is small); `format_move` is its inverse. Nothing here needs a
position, so the rules modules build on it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from shared.cards import SUITS
from shared.errors import IllegalMove


class Move(NamedTuple):
    """A parsed move. src: "d", "redeal", "t", "r", "w" or "f"; dst: "t", "f" or ""."""

    src: str
    si: int  # source pile index (0-based; suit index for "f"), -1 when none
    dst: str
    di: int  # destination tableau index (0-based), -1 when none or "f"
    n: int  # cards moved (1 except for tableau runs)


DEAL = Move("d", -1, "", -1, 0)
REDEAL = Move("redeal", -1, "", -1, 0)

_CANONICAL = re.compile(r"(t[1-9]|r[1-8]|w|f[cdhs])(t[1-9]|f)(?:x([1-9][0-9]*))?")


def parse_canonical(move: str) -> Move:
    """The parsed form of a canonical move; IllegalMove saying what is wrong otherwise."""
    if type(move) is not str:
        raise IllegalMove(f"a move is a string, not {type(move).__name__}")
    return parse_str(move)


@lru_cache(maxsize=4096)
def parse_str(move: str) -> Move:
    """parse_canonical of a str, cached: the rules engine calls it directly once it has
    checked the type, a function call less per move."""
    if move == "d":
        return DEAL
    if move == "redeal":
        return REDEAL
    m = _CANONICAL.fullmatch(move)
    if m is None:
        raise IllegalMove(
            f"{move!r} is not a move: write d, redeal, or source then destination "
            "(t1..t9, r1..r8, w, fc/fd/fh/fs to t1..t9 or f), e.g. t3t5, wf, t3t5x4"
        )
    src, dst, count = m.groups()
    n = 1
    if count is not None:
        n = int(count)
        if not (src[0] == "t" and dst[0] == "t"):
            raise IllegalMove(f"{move!r}: only tableau-to-tableau moves take a run length")
        if n < 2:
            raise IllegalMove(f"{move!r}: write {src}{dst} to move one card (x<n> needs n >= 2)")
    if src == dst:
        raise IllegalMove(f"{move!r}: source and destination are the same pile")
    kind = src[0]
    si = -1 if kind == "w" else (SUITS.index(src[1].upper()) if kind == "f" else int(src[1]) - 1)
    if kind == "f" and dst == "f":
        raise IllegalMove(f"{move!r}: a foundation card cannot go to a foundation")
    di = -1 if dst == "f" else int(dst[1]) - 1
    return Move(kind, si, dst[0], di, n)


def format_move(move: Move) -> str:
    """The canonical string of a parsed move (inverse of parse_canonical)."""
    if move.src in ("d", "redeal"):
        return move.src
    if move.src == "w":
        src = "w"
    elif move.src == "f":
        src = "f" + SUITS[move.si].lower()
    else:
        src = f"{move.src}{move.si + 1}"
    dst = "f" if move.dst == "f" else f"t{move.di + 1}"
    return f"{src}{dst}" + (f"x{move.n}" if move.n > 1 else "")
