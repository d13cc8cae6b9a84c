"""The whole screen as a pure function: board, race panel, clock, status line and messages.

`shared.render_board` draws the board itself; this module places it with everything around it
in at most 80 columns, so every frame can be tested as a fixed-width string.
"""

from __future__ import annotations

import enum
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

WIDTH = 80
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
RESET = "\x1b[0m"


def visible_width(text: str) -> int:
    """Columns a line takes on the terminal, ANSI sequences excluded."""
    return len(_ANSI.sub("", text))


def strip_ansi(text: str) -> str:
    """The text without ANSI sequences."""
    return _ANSI.sub("", text)


def fit(text: str, width: int) -> str:
    """Cut a plain or coloured line to ``width`` columns, keeping escape sequences intact."""
    if visible_width(text) <= width:
        return text
    out: list[str] = []
    columns = 0
    pos = 0
    while pos < len(text) and columns < width:
        match = _ANSI.match(text, pos)
        if match:
            out.append(match.group())
            pos = match.end()
            continue
        out.append(text[pos])
        columns += 1
        pos += 1
    cut = "".join(out)
    return cut + RESET if "\x1b[" in cut else cut


def pad(text: str, width: int) -> str:
    """Pad a (possibly coloured) line with spaces to ``width`` columns."""
    return text + " " * max(0, width - visible_width(text))


def format_clock(ms: int | None) -> str:
    """Elapsed or remaining time as m:ss, or h:mm:ss past an hour; '--:--' before a start."""
    if ms is None:
        return "--:--"
    seconds = max(0, ms) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes:02d}:{secs:02d}"


class RacerState(enum.Enum):
    """Where a racer stands, as the race panel shows it."""

    WAITING = "waiting"
    PLAYING = "playing"
    WON = "finished"
    OVER = "stuck"
    RESIGNED = "resigned"
    LEFT = "left"


@dataclass(frozen=True)
class Racer:
    """One line of the race panel."""

    name: str
    cards: int = 0
    moves: int = 0
    state: RacerState = RacerState.PLAYING
    finished_ms: int | None = None
    rank: int | None = None
    me: bool = False


@dataclass(frozen=True)
class Screen:
    """Everything one frame shows; the client builds one per change and composes it."""

    title: str
    board: str | None = None
    clock: str | None = None
    moves: int | None = None
    racers: tuple[Racer, ...] = ()
    panel_title: str = "Racers"
    status: str = ""
    messages: tuple[str, ...] = field(default_factory=tuple)
    error: str | None = None


PANEL_WIDTH = 29
GAP = 2
_SPACES = re.compile(r" {4,}")


def squeeze(line: str, width: int) -> str:
    """Shorten a line wider than ``width`` by narrowing its long runs of spaces."""
    if visible_width(line) <= width:
        return line
    return _SPACES.sub("   ", line)


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color and text else text


def render_panel(racers: Sequence[Racer], *, title: str, color: bool) -> list[str]:
    """The race panel: one line per racer with rank, cards on foundations, moves and state."""
    lines = [_paint(fit(title, PANEL_WIDTH), BOLD, color)]
    lines.append(f"{'#':>2} {'name':<8} {'fnd':>3} {'mvs':>4} state")
    for racer in racers:
        rank = f"{racer.rank:>2}" if racer.rank is not None else " -"
        name = racer.name if len(racer.name) <= 7 else racer.name[:6] + "~"
        name = ("*" if racer.me else " ") + name
        if racer.state is RacerState.WON and racer.finished_ms is not None:
            state = format_clock(racer.finished_ms)
        else:
            state = racer.state.value
        line = fit(f"{rank} {name:<8} {racer.cards:>3} {racer.moves:>4} {state}", PANEL_WIDTH)
        if racer.state is RacerState.WON:
            line = _paint(line, GREEN, color)
        elif racer.state in (RacerState.RESIGNED, RacerState.LEFT, RacerState.OVER):
            line = _paint(line, DIM, color)
        elif racer.me:
            line = _paint(line, BOLD, color)
        lines.append(line)
    return lines


def _header(screen: Screen, width: int, color: bool) -> str:
    right_parts = []
    if screen.moves is not None:
        right_parts.append(f"moves {screen.moves}")
    if screen.clock is not None:
        right_parts.append(f"clock {screen.clock}")
    right = "  ".join(right_parts)
    room = width - len(right) - (1 if right else 0)
    title = fit(screen.title, max(0, room))
    line = pad(_paint(title, BOLD, color), room) + (" " + right if right else "")
    return fit(line, width)


def compose(
    screen: Screen, *, color: bool = False, width: int = WIDTH, height: int | None = None
) -> list[str]:
    """The frame's lines, none wider than ``width`` columns, no trailing spaces.

    With ``height``, old messages and then the bottom of the board give way so the frame and a
    prompt line fit: a frame taller than the terminal would scroll and break in-place redraws.
    """
    lines = [_header(screen, width, color)]
    board = screen.board.split("\n") if screen.board else []
    while board and not board[-1].strip():
        board.pop()
    panel = (
        render_panel(screen.racers, title=screen.panel_title, color=color) if screen.racers else []
    )
    room = width - GAP - PANEL_WIDTH
    squeezed = [squeeze(line, room) for line in board]
    board_width = max((visible_width(line) for line in squeezed), default=0)
    if panel and board and board_width <= room:
        rows = max(len(squeezed), len(panel))
        for i in range(rows):
            left = squeezed[i] if i < len(squeezed) else ""
            right = panel[i] if i < len(panel) else ""
            lines.append(pad(left, board_width) + " " * GAP + right if right else left)
    else:
        lines.extend(board)
        if panel:
            if board:
                lines.append("")
            lines.extend(panel)
    lines.append("")
    tail = []
    if screen.status:
        tail.extend(
            _paint(line, YELLOW, color) for line in textwrap.wrap(screen.status, width=width)
        )
    messages = [fit(message, width) for message in screen.messages]
    error = [_paint(line, RED, color) for line in textwrap.wrap(screen.error or "", width=width)]
    if height is not None:
        spare = height - 1 - len(lines) - len(tail) - len(error)
        messages = (
            messages[max(0, len(messages) - max(0, spare)) :] if spare < len(messages) else messages
        )
        if spare < 0:
            lines = lines[: max(1, len(lines) + spare)]
    lines.extend(tail + messages + error)
    return [fit(line, width).rstrip() for line in lines]


# Cursor home, then each line followed by erase-to-end-of-line: the frame overwrites the last one
# in place, so nothing flashes blank between two frames.
HOME = "\x1b[H"
ERASE_LINE = "\x1b[K"
ERASE_BELOW = "\x1b[J"
CLEAR = "\x1b[2J"


def frame_bytes(lines: Sequence[str], prompt: str = "") -> str:
    """The escape sequence that draws ``lines`` over the previous frame, prompt last."""
    body = "".join(f"{line}{ERASE_LINE}\r\n" for line in lines)
    return f"{HOME}{body}{prompt}{ERASE_LINE}{ERASE_BELOW}"
