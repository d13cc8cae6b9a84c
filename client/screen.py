"""The whole screen as a pure function: boards, race panel, clock, status line and messages.

A frame always fits the terminal it is given: tall piles are compressed, many boards drawn
compact, old messages dropped; when even that cannot fit, the frame says how big the window must
be instead of cutting things off. The race panel always sits right of the board.
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from client import board as boards
from client.text import char_width, cut, plural, strip_ansi
from client.text import width as display_width

__all__ = [
    "Racer",
    "RacerState",
    "Screen",
    "compose",
    "fit",
    "format_clock",
    "frame_bytes",
    "strip_ansi",
    "visible_width",
]

WIDTH = 80
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
RESET = "\x1b[0m"
PANEL_WIDTH = 32
GAP = 2
NAME_COLUMNS = 10


def visible_width(text: str) -> int:
    """Columns a line takes on the terminal, ANSI sequences excluded, wide characters as two."""
    return display_width(text)


def fit(text: str, columns: int) -> str:
    """Cut a plain or coloured line to ``columns`` columns, keeping escape sequences intact."""
    if display_width(text) <= columns:
        return text
    from client.text import _ANSI

    out: list[str] = []
    used = 0
    pos = 0
    while pos < len(text):
        match = _ANSI.match(text, pos)
        if match:
            out.append(match.group())
            pos = match.end()
            continue
        step = char_width(text[pos])
        if used + step > columns:
            break
        out.append(text[pos])
        used += step
        pos += 1
    result = "".join(out)
    return result + RESET if "\x1b[" in result else result


def pad(text: str, columns: int) -> str:
    """Pad a (possibly coloured) line with spaces to ``columns`` columns."""
    return text + " " * max(0, columns - display_width(text))


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


def format_away(ms: int) -> str:
    """How long a racer has been away: 0:12, 1:05."""
    seconds = max(0, ms) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


class RacerState(enum.Enum):
    """Where a racer stands, as the race panel shows it."""

    WAITING = "waiting"
    PLAYING = "playing"
    WON = "finished"
    OVER = "stuck"
    RESIGNED = "resigned"
    LEFT = "left"
    TIME_UP = "time up"


@dataclass(frozen=True)
class Racer:
    """One line of the race panel; ``place`` is the number shown (and typed to watch them)."""

    name: str
    cards: int = 0
    moves: int = 0
    state: RacerState = RacerState.PLAYING
    finished_ms: int | None = None
    rank: int | None = None
    me: bool = False
    place: int | None = None
    away_ms: int | None = None
    reached_ms: int | None = None
    bot: int = 0  # a bot's level (docs/bots.md); 0 for a person


@dataclass(frozen=True)
class Screen:
    """Everything one frame shows. ``boards``: (label, view) pairs; one unlabelled board is the
    player's own."""

    title: str
    boards: tuple[tuple[str, Any], ...] = ()
    clock: str | None = None
    moves: int | None = None
    racers: tuple[Racer, ...] = ()
    panel_title: str = "Racers"
    status: str = ""
    messages: tuple[str, ...] = field(default_factory=tuple)
    error: str | None = None
    body: tuple[str, ...] = ()  # lines shown where the boards go when there are none


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color and text else text


def panel_name(racer: Racer) -> str:
    """A racer's name in the panel's column; a bot's keeps its mark whatever its length
    (``Hazel bot4``): every view says who is a bot."""
    if racer.bot:  # as racer_name writes it, the first name cut when it is long
        mark = f" bot{racer.bot}"
        first = racer.name.split(" ", 1)[0]
        return cut(first, NAME_COLUMNS - len(mark), ellipsis="…") + mark
    return cut(racer.name, NAME_COLUMNS, ellipsis="…")


def render_panel(racers: Sequence[Racer], *, title: str, color: bool) -> list[str]:
    """The race panel: number, name, cards on foundations, moves and state, in ranking order;
    then a line for each racer who is away."""
    lines = [_paint(cut(title, PANEL_WIDTH), BOLD, color)]
    lines.append(f"{'#':>2}  {'name':<{NAME_COLUMNS}} {'fnd':>3} {'mvs':>4} state")
    for i, racer in enumerate(racers, 1):
        number = racer.rank if racer.rank is not None else (racer.place or i)
        name = ("*" if racer.me else " ") + panel_name(racer)
        if racer.state is RacerState.WON and racer.finished_ms is not None:
            state = format_clock(racer.finished_ms)
        elif racer.away_ms is not None and racer.state is RacerState.PLAYING:
            state = "away"
        else:
            state = racer.state.value
        text = (
            f"{number:>2} {pad(name, NAME_COLUMNS + 1)} {racer.cards:>3} {racer.moves:>4} {state}"
        )
        line = fit(text, PANEL_WIDTH)
        if racer.state is RacerState.WON:
            line = _paint(line, GREEN, color)
        elif racer.state in (RacerState.RESIGNED, RacerState.LEFT, RacerState.OVER):
            line = _paint(line, DIM, color)
        elif racer.me:
            line = _paint(line, BOLD, color)
        lines.append(line)
    for racer in racers:
        if racer.away_ms is not None and racer.state is RacerState.PLAYING:
            away = (
                f"{cut(racer.name, 14, ellipsis='…')} — disconnected {format_away(racer.away_ms)}"
            )
            lines.append(_paint(fit(away, PANEL_WIDTH), YELLOW, color))
    return lines


def _header(screen: Screen, columns: int, color: bool) -> str:
    right_parts = []
    if screen.moves is not None:
        right_parts.append(plural(screen.moves, "move"))
    if screen.clock is not None:
        right_parts.append(f"clock {screen.clock}")
    right = "  ".join(right_parts)
    gap = "  " if right else ""  # as between the right's parts: "room f6ub79u3  0 moves"
    room = columns - display_width(right) - len(gap)
    title = cut(screen.title, max(0, room), ellipsis="…")
    line = pad(_paint(title, BOLD, color), room) + gap + right
    return fit(line, columns)


def _label(label: str, view: Any) -> str:
    state = boards.game_state_word(view)
    done = "" if state == "playing" else f", {state}"
    return f"== {label} — {plural(view.moves_made, 'move')}{done} =="


def _boards_full(items: Sequence[tuple[str, Any]], color: bool, rows: int | None) -> list[str]:
    out: list[str] = []
    for label, view in items:
        if label:
            out.append(_label(label, view))
        out.extend(
            boards.render_board(
                view, color=color, rows=None if rows is None else rows - bool(label)
            )
        )
    return out


MORE_HINT = "type a racer's number to see it"


def _fit_boards(items: Sequence[tuple[str, Any]], rows: int, color: bool) -> list[str] | None:
    """The boards in at most ``rows`` rows, or None when they cannot fit at all."""
    if not items:
        return []
    labelled = [int(bool(label)) for label, _ in items]
    full = sum(boards.full_rows(v) + lab for (_, v), lab in zip(items, labelled, strict=True))
    if full <= rows:
        return _boards_full(items, color, None)
    each = rows // len(items)
    if all(boards.min_rows(v) + lab <= each for (_, v), lab in zip(items, labelled, strict=True)):
        return _boards_full(items, color, each)
    if len(items) == 1:
        return None
    # Many boards: three lines each, and as many as fit.
    shown = len(items) if 3 * len(items) <= rows else (rows - 1) // 3
    if shown < 1:
        return None
    out: list[str] = []
    for label, view in items[:shown]:
        out.extend(boards.render_compact(label or "you", view, color=color))
    if shown < len(items):
        out.append(f"+{len(items) - shown} more: {MORE_HINT}")
    return out


def _min_rows(items: Sequence[tuple[str, Any]]) -> int:
    if not items:
        return 0
    if len(items) == 1:
        label, view = items[0]
        return boards.min_rows(view) + bool(label)
    return 4  # one compact board and the "more" line


def _board_width(items: Sequence[tuple[str, Any]]) -> int:
    return max((boards.board_width(view) for _, view in items), default=0)


def too_small(columns: int, rows: int, need_columns: int, need_rows: int) -> list[str]:
    """The frame in a window too small to show the game: what size it needs."""
    text = (
        f"Window too small: needs at least {need_columns}x{need_rows}, this one is "
        f"{columns}x{rows}. Make it bigger, or type 'quit'."
    )
    return textwrap.wrap(text, width=max(10, columns))[: max(1, rows - 1)]


def compose(
    screen: Screen, *, color: bool = False, width: int = WIDTH, height: int | None = None
) -> list[str]:
    """The frame's lines, none wider than ``width`` columns, no trailing spaces.

    With ``height`` the frame and a prompt line fit in ``height`` rows: boards compress, old
    messages go, and a window too small for the game gets a notice saying the size it needs.
    """
    columns = width
    header = _header(screen, columns, color)
    panel = (
        render_panel(screen.racers, title=screen.panel_title, color=color) if screen.racers else []
    )
    status = [
        _paint(line, YELLOW, color)
        for line in textwrap.wrap(screen.status, width=columns, break_on_hyphens=False)
    ]
    messages = [line for m in screen.messages for line in _wrap(m, columns)]
    error = [
        _paint(line, RED, color)
        for line in textwrap.wrap(screen.error or "", width=columns, break_on_hyphens=False)
    ]
    board_columns = _board_width(screen.boards)
    side = bool(panel) and (board_columns == 0 or board_columns + GAP + PANEL_WIDTH <= columns)
    if screen.body and not screen.boards:
        rows = None if height is None else height - 4 - len(status) - len(error)
        body_left = list(screen.body[: None if rows is None else max(1, rows)])
        side, panel = False, []
    elif height is None:
        body_left = _boards_full(screen.boards, color, None)
    else:
        need_columns = max(board_columns + (GAP + PANEL_WIDTH if panel else 0), 20)
        # Header, blank line, status, error, the prompt, and the newest message if any.
        fixed = 2 + len(status) + len(error) + 1 + min(1, len(messages))
        rows = height - fixed
        body = _fit_boards(screen.boards, rows, color)
        need_rows = fixed + max(_min_rows(screen.boards), len(panel))
        if body is None or columns < need_columns or len(panel) > rows:
            notice = too_small(columns, height, need_columns, need_rows)
            # What was said last still shows (a question to answer, say), room permitting.
            last = error or (_wrap(screen.messages[-1], columns) if screen.messages else [])
            lines = (notice + last)[: max(1, height - 1)]
            return [fit(line, columns) for line in lines]
        body_left = body
        side = bool(panel)
    lines = [header]
    area = columns - GAP - PANEL_WIDTH if side else columns
    left = [fit(line, area) for line in body_left]
    if side:
        # The board's own width, not its widest line now: a `10♥` or a 10th card up must not
        # move the panel a column as the game goes on.
        widest = max((display_width(line) for line in left), default=0)
        left_width = max(min(board_columns, area), widest)
        for i in range(max(len(left), len(panel))):
            lhs = left[i] if i < len(left) else ""
            rhs = panel[i] if i < len(panel) else ""
            lines.append(pad(lhs, left_width) + " " * GAP + rhs if rhs else lhs)
    else:
        lines.extend(left)
        if panel:
            if left:
                lines.append("")
            lines.extend(panel)
    lines.append("")
    if height is not None:
        spare = height - 1 - len(lines) - len(status) - len(error)
        messages = messages[len(messages) - max(0, spare) :] if spare < len(messages) else messages
    lines.extend(status + messages + error)
    return [fit(line, columns).rstrip() for line in lines]


def _wrap(text: str, columns: int) -> list[str]:
    return textwrap.wrap(text, width=columns, break_on_hyphens=False) or [""]


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
