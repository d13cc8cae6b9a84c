"""Display names: what every other player's terminal will print, so cleaned and measured.

A name reaches other people's screens, so control and format characters (C0, C1, ESC, bidi
overrides, zero-width joiners misused as spacing) are removed, runs of white space become one
space, and the length limit is the width a terminal gives the name (wcwidth), not code points.
Within a room names are unique: a later joiner with a taken name gets " 2", " 3", ... added.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from wcwidth import wcswidth, wcwidth

MAX_NAME_COLUMNS = 20
DEFAULT_NAME = "player"
_DROP = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Whole terminal escape sequences (CSI, OSC, and two-character ESC ones), not just their ESC.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b[@-~]|\x9b[0-?]*[ -/]*[@-~]"
)


def clean_name(raw: str, *, columns: int = MAX_NAME_COLUMNS) -> str:
    """``raw`` as a name safe to print: printable only, one space between words, at most
    ``columns`` wide; ``DEFAULT_NAME`` if nothing printable is left."""
    kept: list[str] = []
    for char in unicodedata.normalize("NFC", _ESCAPES.sub("", raw)):
        if char.isspace():
            kept.append(" ")
        elif unicodedata.category(char) not in _DROP and wcwidth(char) >= 0:
            kept.append(char)
    name = " ".join("".join(kept).split())
    out: list[str] = []
    width = 0
    for char in name:
        w = max(wcwidth(char), 0)
        if width + w > columns:
            break
        out.append(char)
        width += w
    # A combining mark cut off from its base, or trailing space after the cut.
    result = "".join(out).strip()
    return result if result and width_of(result) > 0 else DEFAULT_NAME


def width_of(name: str) -> int:
    """The columns a terminal gives ``name`` (0 for a name with nothing printable)."""
    width = wcswidth(name)
    return max(width, 0)


def unique_name(name: str, taken: Collection[str], *, columns: int = MAX_NAME_COLUMNS) -> str:
    """``name``, or it with the first free suffix " 2", " 3", ... (shortened to still fit)."""
    if name not in taken:
        return name
    for n in range(2, 10_000):
        suffix = f" {n}"
        base = (
            clean_name(name, columns=columns - len(suffix))
            if width_of(name) + len(suffix) > columns
            else name
        )
        candidate = base + suffix
        if candidate not in taken:
            return candidate
    raise ValueError("no free name")  # a room holds at most a few players


def fold_name(name: str) -> str:
    """The form names are unique in: NFKC, then case-folded (``Ann`` and ``ANN`` are one)."""
    return unicodedata.normalize("NFKC", name).casefold()


def seat_account(name: str | None, key: str | None) -> str | None:
    """What a race seat carries as its account, which seats, ratings and archives fold to the
    account's key: its name while that folds to the key (an account never renamed), else the key
    (a moderator renamed it; the seat shows the new name)."""
    if name is None or key is None:
        return name
    return name if fold_name(name) == key else key


BOT_NAMES = ("Ada", "Basil", "Cleo", "Dex", "Echo", "Fern", "Gus", "Hazel", "Iggy", "Juno")


def bot_name(index: int, level: int) -> str:
    """A bot's shown name: a first name and its level, never an account's (it has a space and
    parentheses, which account names may not have)."""
    return f"{BOT_NAMES[index % len(BOT_NAMES)]} (bot {level})"


_BOT_NAME = re.compile(r"^\S+ \(bot ([1-5])\)( \d+)?$")


def bot_level_of_name(name: str) -> int | None:
    """The level in a bot's name (``Ada (bot 3)``, or ``Ada (bot 3) 2`` made unique in a
    room); None for any other name. Accounts may not take such names."""
    found = _BOT_NAME.match(name.strip())
    return int(found.group(1)) if found else None
