"""What the player sees, as state: the board's view, racers, clock, status and messages.

Every mode (offline, solo on a server, race, watch, replay) updates one of these and asks it for
a `Screen`; composing and drawing it is the screen and terminal modules' business.
"""

from __future__ import annotations

import textwrap
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from client.screen import Racer, Screen, format_clock

MESSAGE_LINES = 6


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
    _board_cache: tuple[Any, bool, str] | None = None

    def say(self, text: str, width: int = 80) -> None:
        """Add a message below the board, wrapped to the screen's width."""
        for line in textwrap.wrap(text, width=width) or [""]:
            self.messages.append(line)

    def clear_messages(self) -> None:
        """Forget old messages, e.g. after a successful move."""
        self.messages.clear()

    def board_text(self) -> str | None:
        """The rendered board (or boards, each under its label), re-rendered only on change."""
        if self.boards and self.show_board:
            from shared import render_board

            return "\n".join(
                f"== {label} ==\n" + render_board(view, color=self.color)
                for label, view in self.boards
            )
        if self.view is None or not self.show_board:
            return None
        cached = self._board_cache
        if cached is not None and cached[0] is self.view and cached[1] == self.color:
            return cached[2]
        from shared import render_board

        text = render_board(self.view, color=self.color)
        self._board_cache = (self.view, self.color, text)
        return text

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
            status = f"Get ready: the race starts in {seconds}..."
        return Screen(
            title=self.title,
            board=self.board_text(),
            clock=self.clock_text(now_ms),
            moves=None,
            racers=tuple(self.racers.values()),
            panel_title=self.panel_title,
            status=status,
            messages=tuple(self.messages),
            error=self.error,
        )


def ranked(racers: dict[str, Racer]) -> dict[str, Racer]:
    """Racers in race order: finished by time, then by cards on foundations (DESIGN.md)."""

    def key(item: tuple[str, Racer]) -> tuple[int, int, int, str]:
        racer = item[1]
        if racer.rank is not None:
            return (0, racer.rank, 0, item[0])
        if racer.finished_ms is not None:
            return (1, racer.finished_ms, 0, item[0])
        return (2, -racer.cards, racer.moves, item[0])

    return dict(sorted(racers.items(), key=key))


def game_status(view: Any, *, who: str = "You") -> str:
    """One line saying how a game stands, from its public view."""
    if view is None:
        return ""
    if getattr(view, "won", False):
        return f"{who} won in {view.moves_made} moves!"
    if getattr(view, "resigned", False):
        return f"{who} resigned with {view.foundation_count} cards on the foundations."
    if getattr(view, "over", False):
        return f"No legal move left: game over with {view.foundation_count} cards on foundations."
    return ""
