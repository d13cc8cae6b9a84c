"""What the player sees, as state: the board's view, racers, clock, status and messages.

Every mode (offline, solo on a server, race, watch, replay) updates one of these and asks it for
a `Screen`; composing and drawing it is the screen and terminal modules' business.
"""

from __future__ import annotations

import textwrap
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from client.screen import Racer, RacerState, Screen, fit, format_clock
from client.text import plural

MESSAGE_LINES = 6


class Pager:
    """A long text shown over the board a page at a time (Enter: next page, q: close)."""

    def __init__(self, title: str, text: str) -> None:
        self.title = title
        self.text = text
        self.top = 0

    def _wrapped(self, columns: int) -> list[str]:
        """The text reflowed to the window: paragraphs and list items wrapped, blank lines kept."""
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                text = " ".join(paragraph)
                indent = "  " if text.startswith("- ") else ""
                out.extend(textwrap.wrap(text, width=max(10, columns), subsequent_indent=indent))
                paragraph.clear()

        for raw in self.text.splitlines():
            line = raw.strip()
            if not line:
                flush()
                out.append("")
            elif line.startswith("- ") or line.isupper():
                flush()
                paragraph.append(line)
            else:
                paragraph.append(line)
        flush()
        return out

    def _page_rows(self, rows: int) -> int:
        return max(1, rows - 3)  # the title, the hint and the prompt

    def lines(self, columns: int, rows: int) -> list[str]:
        """This page's frame."""
        text = self._wrapped(columns)
        size = self._page_rows(rows)
        page = text[self.top : self.top + size]
        end = self.top + len(page)
        more = end < len(text)
        hint = (
            f"-- lines {self.top + 1}-{end} of {len(text)}: Enter for more, q to close --"
            if more
            else "-- the end: Enter or q to close; then type a move --"
        )
        return [fit(line, columns) for line in (self.title, *page, hint)]

    def advance(self, columns: int, rows: int) -> bool:
        """The next page; False at the last one (the pager then closes)."""
        total = len(self._wrapped(columns))
        size = self._page_rows(rows)
        if self.top + size >= total:
            return False
        self.top += size
        return True


@dataclass
class Session:
    """Mutable UI state of one run of the client; ``screen`` freezes it into a frame."""

    title: str
    color: bool = False
    view: Any = None  # shared.PublicView
    racers: dict[str, Racer] = field(default_factory=dict)
    panel_title: str = "Racers"
    status: str = ""
    error: str | None = None
    messages: deque[str] = field(default_factory=lambda: deque(maxlen=MESSAGE_LINES))
    clock_start_ms: int | None = None
    clock_end_ms: int | None = None
    time_limit_ms: int | None = None
    show_board: bool = True
    boards: tuple[tuple[str, Any], ...] = ()
    countdown_to_ms: int | None = None
    countdown_hint: str = ""  # what may still be typed before the start (a tournament's berserk)
    # When each away racer's connection went, on this client's clock (the panel counts it up).
    away_since: dict[str, int] = field(default_factory=dict)
    pager: Pager | None = None
    said: int = 0  # messages said so far, to tell the ones said while a move was answered
    body: tuple[str, ...] = ()  # what shows where no board is (a tournament's standings)

    def say(self, text: str) -> None:
        """Add a message below the board (the screen wraps it to its width)."""
        self.messages.append(text)
        self.said += 1

    def say_before(self, text: str, since: int) -> None:
        """Add a message where it belongs in time: before those said since ``said`` was
        ``since`` (the answer to a request came after the news it caused, a countdown say)."""
        if self.messages.maxlen is not None and len(self.messages) == self.messages.maxlen:
            self.messages.popleft()  # a full deque refuses an insert: the oldest goes
        newer = min(self.said - since, len(self.messages))
        self.messages.insert(len(self.messages) - newer, text)
        self.said += 1

    def clear_messages(self, keep_after: int | None = None) -> None:
        """Forget old messages, e.g. after a successful move; with ``keep_after`` (a count from
        ``said``), only those said before it: news that came while a move was waiting for its
        answer (a reconnect, a rival's finish) is not old."""
        if keep_after is None:
            self.messages.clear()
            return
        newer = self.said - keep_after
        kept = list(self.messages)[-newer:] if newer > 0 else []
        self.messages.clear()
        self.messages.extend(kept)

    def shown_boards(self) -> tuple[tuple[str, Any], ...]:
        """The boards on screen: the watched ones, each labelled, or the player's own."""
        if not self.show_board:
            return ()
        if self.boards:
            return self.boards
        return (("", self.view),) if self.view is not None else ()

    def clock_text(self, now_ms: int) -> str | None:
        """Elapsed time since the start, or time left when the race has a limit."""
        if self.clock_start_ms is None:
            return None
        until = self.clock_end_ms if self.clock_end_ms is not None else now_ms
        elapsed = until - self.clock_start_ms
        if self.time_limit_ms is not None and self.clock_end_ms is None:
            return format_clock(self.time_limit_ms - elapsed) + " left"
        return format_clock(elapsed)

    def screen(self, now_ms: int) -> Screen:
        """This moment's frame."""
        status = self.status
        if self.countdown_to_ms is not None and now_ms < self.countdown_to_ms:
            seconds = -(-(self.countdown_to_ms - now_ms) // 1000)
            status = f"Get ready: the race starts in {seconds}... {self.countdown_hint}".rstrip()
        racers = tuple(
            replace(r, away_ms=now_ms - self.away_since[key]) if key in self.away_since else r
            for key, r in self.racers.items()
        )
        return Screen(
            title=self.title,
            boards=self.shown_boards(),
            clock=self.clock_text(now_ms),
            moves=self.view.moves_made if self.view is not None and not self.boards else None,
            racers=racers,
            panel_title=self.panel_title,
            status=status,
            messages=tuple(self.messages),
            error=self.error,
            body=self.body,
        )


def ranked(racers: dict[str, Racer]) -> dict[str, Racer]:
    """Racers in ranking order (DESIGN.md, "Rooms and races"): finished players by finish time,
    the rest by cards on foundations, then by when they reached that count; a racer still
    playing before one who stopped at the same count. Each gets its number, ``place``."""

    def key(item: tuple[str, Racer]) -> tuple[int, int, int, int, str]:
        racer = item[1]
        if racer.rank is not None:
            return (0, racer.rank, 0, 0, racer.name)
        if racer.state is RacerState.WON and racer.finished_ms is not None:
            return (1, racer.finished_ms, 0, 0, racer.name)
        reached = racer.reached_ms if racer.reached_ms is not None else 2**62
        stopped = racer.state not in (RacerState.PLAYING, RacerState.WAITING)
        return (2, -racer.cards, reached, int(stopped), racer.name)

    order = sorted(racers.items(), key=key)
    return {pid: replace(racer, place=i) for i, (pid, racer) in enumerate(order, 1)}


CLOCK = "clock"
"""A ``resigned`` event's reason when the racer's own clock ran out: a timeout."""


def timed_out(event: Any) -> bool:
    """Whether a game event is the server ending a game whose clock ran out."""
    return (
        isinstance(event, dict) and event.get("type") == "resigned" and event.get("reason") == CLOCK
    )


def game_status(view: Any, *, who: str = "You", out_of_time: bool = False) -> str:
    """One line saying how a game stands, from its public view; ``out_of_time``: the clock
    ended it (the view alone reads a resignation)."""
    if view is None:
        return ""
    cards = plural(view.foundation_count, "card")
    if getattr(view, "won", False):
        return f"{who} won in {plural(view.moves_made, 'move')}!"
    if out_of_time:
        return f"{who} ran out of time with {cards} on the foundations."
    if getattr(view, "resigned", False):
        return f"{who} resigned with {cards} on the foundations."
    if getattr(view, "over", False):
        return f"No legal move left: game over with {cards} on the foundations."
    return ""
