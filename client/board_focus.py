"""What the board area and the race panel show: the player's own board, or the watched ones.

A racer whose game is done (or whose race is over) may watch the others; a spectator always
does. The panel lists the racers in order, and the boards follow its order and numbers; the
times it shows are the server's, put on this client's clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.race_panel import done_status, racers, watched_boards
from client.room_state import RoomState
from client.session import Session


class BoardFocus:
    """Whose boards the board area shows: ``focus`` (the watched player, or None for all) and
    ``watching_others`` (a racer looking at the others' boards instead of their own)."""

    def __init__(
        self,
        session: Session,
        state: RoomState,
        *,
        spectator: bool,
        solo: bool,
        offset_ms: Callable[[], int],
    ) -> None:
        self.session = session
        self.state = state
        self.spectator = spectator
        self.solo = solo
        self._offset_ms = offset_ms  # server clock minus this client's
        self.focus: str | None = None
        # A racer whose game is done may look at the others' boards instead of their own.
        self.watching_others = False

    def watch_back(self) -> None:
        """Back to the racer's own board."""
        self.watching_others = False
        self.focus = None
        self.session.boards = ()
        self.session.view = self.state.my_view

    def done_status(self, progress: dict[str, Any]) -> str:
        """The status line once this racer's game is done and the race goes on."""
        return done_status(self.state, progress)

    def refresh_panel(self) -> None:
        """The race panel; hidden in a room of one."""
        if (len(self.state.progress) <= 1 or self.solo) and not self.spectator:
            self.session.racers = {}
            return
        started = self.session.clock_start_ms
        started_at = started + self._offset_ms() if started is not None else None
        self.session.racers = racers(self.state, started_at=started_at)

    def show_watched(self) -> None:
        """The watched board(s), in panel order."""
        self.refresh_panel()
        order = list(self.session.racers)
        self.session.boards = watched_boards(self.state, order, self.focus)

    def player_id(self, who: str) -> str:
        """A racer's id from a name, a player id, or their number in the panel."""
        return self.state.player_id(who, list(self.session.racers))

    def local(self, server_ms: int | None) -> int | None:
        """A server time on this client's clock."""
        return None if server_ms is None else server_ms - self._offset_ms()
