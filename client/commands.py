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
    RULES = "rules"
    NEW = "new"
    REPLAY = "replay"
    YES = "yes"
    HINT = "hint"
    REMATCH = "rematch"
    BOT = "bot"


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
    "rules": Kind.RULES,
    "help rules": Kind.RULES,
    "? rules": Kind.RULES,
    "new": Kind.NEW,
    "replay": Kind.REPLAY,
    "hint": Kind.HINT,
    "rematch": Kind.REMATCH,
    "h": Kind.HINT,
    "y": Kind.YES,
    "yes": Kind.YES,
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
    if first.lower() == "bot" and (not rest or rest.isdigit()):
        return Command(Kind.BOT, text.lower(), rest)
    kind = _KEYWORDS.get(text.lower())
    if kind is None or (kind in _REPLAY_ONLY and not replay):
        return Command(Kind.MOVE, text)
    return Command(kind, text.lower())


_HELP_COMMANDS = (
    "Commands: moves (the legal moves now), hint (one worth trying), help rules (how to play), "
    "resign, quit; "
    "start (in a race lobby); bot or bot LEVEL (in the lobby of a race you created: a bot "
    "of level 1 to 5 takes a seat, 3 by default); undo (offline); in a race once your game is "
    "done: watch (every "
    "racer), watch NAME or watch N (one racer, by name or panel number), back or me (your board); "
    "once the race is over: rematch (race the same players again, on a new deal)."
)
HELP_TEXTS = {
    "swiss": (
        "Moves: d deals a card; t3t5 or 3 5 moves t3's top card onto t5, t3t5x4 a run of 4; "
        "t3f or 3f puts t3's top card on its foundation; wf the waste's top card, wt7 onto t7; "
        "fst2 takes the spades foundation's top card back onto t2. " + _HELP_COMMANDS
    ),
    "quadrennial": (
        "Moves: d deals a card; r5f or 5 puts r5's card on its foundation; wf the waste's top "
        "card; redeal turns the waste over once the stock is empty (twice per game). "
        + _HELP_COMMANDS
    ),
}
HELP_TEXT = HELP_TEXTS["swiss"]

PROMPT_HINTS = {
    "swiss": "Your move: e.g. 3 5, 3f, wf or d; 'moves' lists them, 'help rules' explains.",
    "quadrennial": "Your move: e.g. 5 (r5 to its foundation), wf, d or redeal; 'moves' lists "
    "them, 'help rules' explains.",
}

# Input the core reads badly: a bare foundation with no pile. What to type instead.
BARE_F_HINTS = {
    "swiss": "'f' alone is not a move: 3f puts t3's top card on its foundation, wf the waste's, "
    "and fst2 takes the spades foundation's top card back onto t2.",
    "quadrennial": "'f' alone is not a move: 5f (or 5) puts r5's card on its foundation, wf the "
    "waste's top card.",
}


def help_text(variant: str | None) -> str:
    """The in-game help for a variant (both variants' moves when unknown yet)."""
    return HELP_TEXTS.get(variant or "swiss", HELP_TEXT)


def prompt_hint(variant: str | None) -> str:
    """The status line while a game is on: the moves of this variant."""
    return PROMPT_HINTS.get(variant or "swiss", PROMPT_HINTS["swiss"])


WATCH_FIRST = "finish or resign your game to watch the others"

REPLAY_HELP_TEXT = "Replay: n (or Enter) next move, p previous move, a number jumps there, q quit."


def confirm_texts(*, online: bool, race: bool) -> dict[Kind, str]:
    """What `quit` and `resign` ask before they end a live game."""
    if online:
        quit_text = (
            "Quit now and you resign this game"
            + (": the race goes on without you" if race else "")
            + ". Type 'y' to quit and resign, anything else to keep playing."
            + (" (Ctrl-C leaves without resigning: your seat is kept for a while.)" if race else "")
        )
    else:
        quit_text = (
            "Quit now and this game is gone (offline games are not saved). Type 'y' to quit, "
            "anything else to keep playing."
        )
    return {
        Kind.QUIT: quit_text,
        Kind.RESIGN: "Resign this game? Type 'y' to resign, anything else to keep playing.",
    }
