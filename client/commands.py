"""What a typed line means: a client command (`moves`, `help`, `resign`, ...) or a move.

Moves stay as the text typed here; turning friendly input into a canonical move needs the board
and is `shared.parse_move`'s job, so that the client accepts exactly what the core documents.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(enum.Enum):
    """Every kind of line a player can type."""

    EMPTY = "empty"
    MOVE = "move"
    MOVES = "moves"
    HELP = "help"
    RESIGN = "resign"
    QUIT = "quit"
    UNDO = "undo"
    START = "start"
    NEXT = "next"
    PREVIOUS = "previous"
    WATCH = "watch"
    BACK = "back"


_KEYWORDS: dict[str, Kind] = {
    "moves": Kind.MOVES,
    "legal": Kind.MOVES,
    "?": Kind.HELP,
    "help": Kind.HELP,
    "resign": Kind.RESIGN,
    "quit": Kind.QUIT,
    "exit": Kind.QUIT,
    "q": Kind.QUIT,
    "undo": Kind.UNDO,
    "u": Kind.UNDO,
    "start": Kind.START,
    "next": Kind.NEXT,
    "n": Kind.NEXT,
    "prev": Kind.PREVIOUS,
    "previous": Kind.PREVIOUS,
    "p": Kind.PREVIOUS,
    "b": Kind.PREVIOUS,
    "back": Kind.BACK,
    "me": Kind.BACK,
}

# Words that only mean something in some modes; elsewhere they are read as (probably bad) moves.
_REPLAY_ONLY = {Kind.NEXT, Kind.PREVIOUS}


@dataclass(frozen=True)
class Command:
    """One parsed input line: its kind, for moves the text as typed (trimmed), and for `watch`
    whom to watch (a name or panel number as typed; empty for everyone)."""

    kind: Kind
    text: str = ""
    arg: str = ""


def parse_command(line: str, *, replay: bool = False) -> Command:
    """Classify a typed line; anything that is not a command word is a move for the core."""
    text = " ".join(line.strip().split())
    if not text:
        return Command(Kind.EMPTY)
    first, _, rest = text.partition(" ")
    if first.lower() == "watch":
        # Names keep their case: the server's names are case-sensitive.
        return Command(Kind.WATCH, text, rest)
    kind = _KEYWORDS.get(text.lower())
    if kind is None or (kind in _REPLAY_ONLY and not replay):
        return Command(Kind.MOVE, text)
    return Command(kind, text.lower())


HELP_TEXT = (
    "Moves: d deal, redeal (Quadrennial), t3t5 / 3 5 pile to pile, t3t5x4 a run of 4, "
    "t3f / 3f to a foundation, wf / w f waste to foundation, wt7 waste to pile, fst2 foundation "
    "back to a pile, r5f reserve to foundation. Commands: moves (legal moves), help, resign, quit; "
    "start (in a race lobby); undo (offline); in a race once your game is done: watch (every "
    "racer), watch NAME or watch N (one racer, by name or panel line), back or me (your board)."
)

WATCH_FIRST = "finish or resign your game to watch the others"

REPLAY_HELP_TEXT = "Replay: n (or Enter) next move, p previous move, q quit."
