"""Move notation: RULES.md, "Move notation". Canonical strings at every boundary.

`parse_canonical` turns a canonical move into a small tuple the rules engine works on (cached:
the set of distinct moves is small). `parse_move` resolves friendly human input ("3 5",
"w f", "fs 2") to one canonical move given a position, or says why it cannot.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from shared.cards import SUITS
from shared.errors import IllegalMove

if TYPE_CHECKING:
    from shared.state import GameState
    from shared.views import PublicView


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


@lru_cache(maxsize=4096)
def parse_canonical(move: str) -> Move:
    """The parsed form of a canonical move; IllegalMove saying what is wrong otherwise."""
    if not isinstance(move, str):
        raise IllegalMove(f"a move is a string, not {type(move).__name__}")
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


_PILE = r"(?:t?[1-9]|r[1-8]|w|f[cdhs]?|fo?u?n?d?a?t?i?o?n?)"
_FRIENDLY = re.compile(rf"({_PILE})\s*[-> ,]*\s*({_PILE})(?:\s*[x*]\s*([0-9]+))?")


def _pile(token: str, variant: str) -> str:
    """A friendly pile token as canonical ("3" -> "t3"; "f", "found" -> "f")."""
    if token.isdigit():
        return ("r" if variant == "quadrennial" else "t") + token
    if token.startswith("f") and (len(token) == 1 or token[1] not in "cdhs" or len(token) > 2):
        return "f"
    return token


def parse_move(text: str, position: GameState | PublicView) -> str:
    """One canonical move from friendly input, given the position it is meant for.

    Accepts the canonical form and friendlier ones: "3 5", "t3 t5", "w f", "3f", "r5", "fs 2",
    "deal", upper case. When several legal moves fit (two run lengths), IllegalMove lists them.
    """
    # Imported here: the rules import this module for parse_canonical.
    from shared.views import PublicView, public_legal_moves

    if isinstance(position, PublicView):
        legal = public_legal_moves(position)
        variant = position.variant
    else:
        from shared.game import legal_moves

        legal = legal_moves(position)
        variant = position.variant

    raw = text
    text = " ".join(text.strip().lower().split())
    if not text:
        raise IllegalMove("no move given")
    if text in ("d", "deal", "draw", "s", "stock"):
        return _only("d", legal, raw)
    if text in ("redeal", "rd", "turn"):
        return _only("redeal", legal, raw)
    compact = text.replace(" ", "")
    if variant == "quadrennial" and re.fullmatch(r"r?[1-8]", compact):
        return _only(f"r{compact[-1]}f", legal, raw)
    try:
        parse_canonical(compact)
        return _only(compact, legal, raw)
    except IllegalMove:
        pass
    m = _FRIENDLY.fullmatch(text) or _FRIENDLY.fullmatch(compact)
    if m is None:
        raise IllegalMove(
            f"cannot read {raw!r} as a move: try e.g. '3 5', 't3 t5', 'w f', '3f', 'd'"
        )
    src, dst = _pile(m.group(1), variant), _pile(m.group(2), variant)
    if dst.startswith("f"):
        dst = "f"
    if src == "f":
        raise IllegalMove(f"{raw!r}: name the foundation to move from (fc, fd, fh or fs)")
    if m.group(3) is not None:
        n = int(m.group(3))
        return _only(f"{src}{dst}" + (f"x{n}" if n > 1 else ""), legal, raw)
    if src[0] == "t" and dst[0] == "t":
        prefix = src + dst
        fits = sorted(
            (mv for mv in legal if mv == prefix or mv.startswith(prefix + "x")),
            key=lambda mv: parse_canonical(mv).n,
        )
        if len(fits) == 1:
            return fits[0]
        if len(fits) > 1:
            raise IllegalMove(
                f"{len(fits)} runs fit: {' or '.join(fits)}; say which (e.g. {fits[-1]})"
            )
    return _only(src + dst, legal, raw)


def _only(move: str, legal: set[str], raw: str) -> str:
    """The move if it is legal here, else IllegalMove explaining why."""
    if move in legal:
        return move
    try:
        parse_canonical(move)
    except IllegalMove as exc:
        raise IllegalMove(f"{raw!r}: {exc.reason}") from None
    hint = f"; legal here: {', '.join(sorted(legal))}" if legal else "; no move is legal here"
    raise IllegalMove(f"{move} is not legal in this position{hint}")
