"""Reading a player's move: friendly human input ("3 5", "w f", "fs 2") resolved to one
canonical move given a position, or IllegalMove saying why it cannot be.

The notation itself (`Move`, `parse_canonical`, `format_move`) lives in shared/notation.py, below
the rules engine; it is re-exported here for code that imported it from this module.
"""

from __future__ import annotations

import re

from shared.errors import IllegalMove
from shared.game import apply_move, legal_moves
from shared.notation import Move, format_move, parse_canonical
from shared.state import GameState
from shared.swiss import ACCEPTS, run_length
from shared.views import PublicView, hidden_state

__all__ = ["Move", "format_move", "parse_canonical", "parse_move"]

_TOKEN = re.compile(r"x[0-9]+|t?[1-9]|r[1-8]|w|f[cdhs]|f(?:ound(?:ation)?s?)?")
_WORDS = {
    "d": "d",
    "deal": "d",
    "draw": "d",
    "stock": "d",
    "redeal": "redeal",
    "turn": "redeal",
}


def _tokens(text: str) -> list[str] | None:
    """Pile tokens of friendly input ("t3 t5", "3-5", "fs 2", "t3t5x3"), or None."""
    compact = re.sub(r"[\s,>\-]+|\bto\b", "", text)
    tokens = []
    pos = 0
    while pos < len(compact):
        m = _TOKEN.match(compact, pos)
        if m is None:
            return None
        tokens.append(m.group())
        pos = m.end()
    return tokens


def parse_move(text: str, position: GameState | PublicView) -> str:
    """One canonical move from friendly input, given the position it is meant for.

    Accepts the canonical form and friendlier ones: "3 5", "t3 t5", "w f", "3f", "r5", "fs 2",
    "deal", upper case. When several run lengths fit, IllegalMove lists the candidates; when
    the move is not legal, IllegalMove says why.
    """
    state = hidden_state(position) if isinstance(position, PublicView) else position
    legal = legal_moves(state)
    variant = state.variant

    def resolve(move: str) -> str:
        if move in legal:
            return move
        try:
            apply_move(state, move)
        except IllegalMove as exc:
            raise IllegalMove(f"{move}: {exc.reason}") from None
        raise IllegalMove(f"{move} is not legal here")  # pragma: no cover - legal is exact

    if not isinstance(text, str) or not text.strip():
        raise IllegalMove("no move given")
    lowered = " ".join(text.strip().lower().split())
    if lowered in _WORDS:
        return resolve(_WORDS[lowered])
    if lowered in legal:
        return lowered  # canonical and legal: taken literally ("t3t5" is one card)
    tokens = _tokens(lowered)
    count = None
    if tokens and tokens[-1].startswith("x"):
        count = int(tokens.pop()[1:])
    if not tokens or len(tokens) > 2 or any(t.startswith("x") for t in tokens):
        raise IllegalMove(
            f"cannot read {text!r} as a move: try e.g. '3 5', 't3 t5', 'w f', '3f', 'd'"
        )
    digit_pile = "r" if variant == "quadrennial" else "t"
    piles = [digit_pile + t if t.isdigit() else t for t in tokens]
    if len(piles) == 1:
        if variant == "quadrennial" and piles[0][0] in "rw":
            piles.append("f")
        else:
            raise IllegalMove(f"{text!r}: say where to, e.g. '{tokens[0]} 5' or '{tokens[0]} f'")
    src, dst = piles
    if src.startswith("f") and len(src) != 2:
        raise IllegalMove(f"{text!r}: name the foundation to take from: fc, fd, fh or fs")
    if dst.startswith("f"):
        dst = "f"
    if count is not None:
        return resolve(f"{src}{dst}" + (f"x{count}" if count > 1 else ""))
    if src[0] == "t" and dst[0] == "t":
        prefix = src + dst
        fits = sorted(
            (mv for mv in legal if mv == prefix or mv.startswith(prefix + "x")),
            key=lambda mv: parse_canonical(mv).n,
        )
        if len(fits) > 1:
            raise IllegalMove(
                f"{len(fits)} runs fit: {' or '.join(fits)}; say which (e.g. {fits[-1]})"
            )
        if fits:
            return fits[0]
        if variant == "swiss" and prefix not in legal:
            _explain_no_run(state, int(src[1]) - 1, int(dst[1]) - 1)
    return resolve(src + dst)


def _explain_no_run(state: GameState, i: int, j: int) -> None:
    """IllegalMove naming the run on t<i> and what t<j> would take (friendly "3 5" input)."""
    pile, target = state.tableau[i], state.tableau[j]
    if not pile:
        raise IllegalMove(f"t{i + 1} is empty")
    top = target[-1] if target else None
    takes = sorted(ACCEPTS[top], key=lambda c: "CDHS".index(c[1]))
    where = f"{top} on t{j + 1}" if top else f"empty t{j + 1}"
    wants = "an Ace" if top is None else " or ".join(takes)
    run = pile[len(pile) - run_length(pile) :]
    cards = " ".join(run)
    what = f"the run {cards} on t{i + 1}" if len(run) > 1 else f"{cards} from t{i + 1}"
    raise IllegalMove(f"nothing of {what} fits on {where}, which takes {wants}")
