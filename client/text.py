"""Text as a terminal shows it: display widths (wcwidth), cards as on the board, plurals, ASCII.

Names come from other players and may be wide (CJK, emoji): every column the client lays out is
measured with wcwidth, never with ``len``.
"""

from __future__ import annotations

import re
import textwrap

from wcwidth import wcswidth, wcwidth

from shared.cards import SUIT_SYMBOLS

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A card code standing alone in a sentence ("TS", "KH", "2C"): never inside a word or a move.
_CARD_CODE = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK])([CDHS])(?![A-Za-z0-9])")


def strip_ansi(text: str) -> str:
    """The text without ANSI sequences."""
    return _ANSI.sub("", text)


def char_width(char: str) -> int:
    """Columns one character takes; control and unknown characters count as none."""
    return max(0, wcwidth(char))


def width(text: str) -> int:
    """Columns a line takes on the terminal, ANSI sequences excluded."""
    plain = strip_ansi(text)
    measured = wcswidth(plain)
    if measured >= 0:
        return measured
    return sum(char_width(char) for char in plain)


def cut(text: str, columns: int, *, ellipsis: str = "") -> str:
    """Plain text cut to at most ``columns`` columns, ending in ``ellipsis`` when cut."""
    if width(text) <= columns:
        return text
    room = columns - width(ellipsis)
    out: list[str] = []
    used = 0
    for char in text:
        step = char_width(char)
        if used + step > room:
            break
        out.append(char)
        used += step
    return "".join(out) + (ellipsis if columns >= width(ellipsis) else "")


def ljust(text: str, columns: int) -> str:
    """Pad on the right to ``columns`` display columns."""
    return text + " " * max(0, columns - width(text))


def rjust(text: str, columns: int) -> str:
    """Pad on the left to ``columns`` display columns."""
    return " " * max(0, columns - width(text)) + text


def racer_name(name: str, bot: int | None = None) -> str:
    """A racer's name as every line of the terminal shows it: a bot's as its first name and
    level (``Ada bot2`` for the server's ``Ada (bot 2)``), the same in the race panel, the
    results and the messages."""
    if not bot:
        return name
    return f"{name.split(' ', 1)[0]} bot{bot}"


def hang(head: str, tail: str, columns: int, *, indent: int) -> list[str]:
    """``head`` then ``tail`` on one line when it fits in ``columns``; else ``tail`` wrapped at
    words on the lines below, ``indent`` columns in (a table row's last column goes on)."""
    if not tail or width(head) + 2 + width(tail) <= columns:
        return [f"{head}  {tail}" if tail else head]
    room = max(10, columns - indent)
    return [head, *(" " * indent + line for line in textwrap.wrap(tail, room))]


def card_text(card: str) -> str:
    """A card as the board shows it: "10♠", "K♥"."""
    return ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOLS[card[1]]


def cards_as_shown(text: str) -> str:
    """A server or rules message with its card codes written as on the board ("TS" -> "10♠")."""
    return _CARD_CODE.sub(lambda m: card_text(m.group(1) + m.group(2)), text)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """'1 card', '2 cards'."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


_ASCII = str.maketrans(
    {
        "♣": "c",
        "♦": "d",
        "♥": "h",
        "♠": "s",
        "…": "...",
        "—": "-",
        "\u00d7": "x",
        "·": ".",
        "→": "->",
        "└": "`",
    }
)


def to_ascii(text: str) -> str:
    """The text for a terminal that cannot show Unicode: suits as letters, other marks spelt
    out, anything left that is not ASCII as '?'."""
    return text.translate(_ASCII).encode("ascii", errors="replace").decode("ascii")


def can_encode(encoding: str | None, sample: str = "♣♦♥♠…—") -> bool:
    """Whether a stream with ``encoding`` can show the suits and marks the screen uses."""
    try:
        sample.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
