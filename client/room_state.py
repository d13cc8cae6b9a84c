"""What a network client knows of its room, folded from the server's messages.

The room's state (docs/protocol.md `room`), each racer's progress and name, the public games
followed (with the same `shared` fold the server uses) and the ranking. Pure: no connection, no
screen, no clock; `RoomView` decides what each change means for the player.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from client.text import racer_name
from shared.errors import ClientError
from shared.views import public_fold_event

DONE = frozenset({"won", "over", "resigned", "timed_out"})
"""Progress statuses of a game that is over."""


@dataclass
class Track:
    """One game as this client follows it: the last stream version folded, and its view."""

    version: int = 0
    view: Any = None
    events: list[dict[str, Any]] = field(default_factory=list)


class Fold(enum.Enum):
    """What a `game_event` did to its game."""

    APPLIED = "applied"
    STALE = "stale"  # already folded (a duplicate, or older than the snapshot)
    GAP = "gap"  # an event is missing before it: a fresh snapshot is needed


@dataclass
class RoomState:
    """One room as folded from `room`, `joined`, `progress`, `game`, `game_event` and `finished`."""

    room_id: str | None = None
    me: str | None = None  # my player id, once seated
    room: dict[str, Any] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    progress: dict[str, dict[str, Any]] = field(default_factory=dict)
    games: dict[str, Track] = field(default_factory=dict)
    ranking: list[dict[str, Any]] | None = None
    finished: dict[str, Any] | None = None  # the `finished` message: its seed, once revealed
    finish_reason: str = ""
    open_seed: bool = False
    left: str | None = None  # the room this client moved out of: its messages are not folded

    def fold_room(self, room: dict[str, Any]) -> bool:
        """A `room` message's state; False (nothing folded) when it is another room's."""
        room_id = str(room.get("id", "")).lower()
        if room_id == self.left or (self.room_id is not None and room_id != self.room_id.lower()):
            return False
        self.room = room
        self.open_seed = bool(room.get("open_seed", self.open_seed))
        players = room.get("players", [])
        for player in players:
            pid = player["player"]
            self.names[pid] = racer_name(player["name"], player.get("bot"))
            self.progress[pid] = {**self.progress.get(pid, {}), **player}
        current = {player["player"] for player in players}
        for gone in set(self.progress) - current:
            if self.progress[gone].get("status") == "waiting":
                del self.progress[gone]
        return True

    def fold_joined(self, msg: dict[str, Any]) -> None:
        self.room_id = msg["room"]
        if msg.get("player"):
            self.me = msg["player"]

    def fold_progress(self, msg: dict[str, Any]) -> None:
        player = msg["player"]
        self.progress[player] = {**self.progress.get(player, {}), **msg}

    def fold_game(self, msg: dict[str, Any]) -> None:
        """A `game` snapshot replaces what was followed of that game; an ArenaError (and nothing
        changed) if its events do not fold."""
        track = Track()
        for event in msg["events"]:
            track.view = public_fold_event(track.view, event)
        track.version = msg["version"]
        track.events = list(msg["events"])
        self.games[msg["player"]] = track

    def fold_game_event(self, msg: dict[str, Any]) -> Fold:
        """One `game_event`, folded only if it is the next of its game; an ArenaError if it does
        not fold."""
        track = self.games.setdefault(msg["player"], Track())
        if msg["version"] <= track.version:
            return Fold.STALE
        if msg["version"] != track.version + 1:
            return Fold.GAP
        track.view = public_fold_event(track.view, msg["event"])
        track.version = msg["version"]
        track.events.append(msg["event"])
        return Fold.APPLIED

    def fold_finished(self, msg: dict[str, Any]) -> None:
        self.finished = msg
        self.ranking = msg["ranking"]
        self.finish_reason = msg["reason"]
        for rank in msg["ranking"]:
            self.progress[rank["player"]] = {**self.progress.get(rank["player"], {}), **rank}
            self.names.setdefault(rank["player"], racer_name(rank["name"], rank.get("bot")))

    def new_game(self) -> None:
        """Forget the games, progress and results (a new solo game in a new room)."""
        self.games.clear()
        self.progress.clear()
        self.ranking = self.finished = None

    def forget_room(self) -> None:
        """No seat and no room (the seat kept on disk was not given back, the room closed, or
        its race is over and a rematch follows): a late message of it is not folded."""
        self.left = self.room_id.lower() if self.room_id else None
        self.me = self.room_id = None
        self.games.clear()
        self.progress.clear()
        self.names.clear()
        self.room = {}
        self.ranking = self.finished = None
        self.finish_reason = ""

    # -- derived -------------------------------------------------------------------------------

    @property
    def my_view(self) -> Any:
        """My game's current view, or None before it starts."""
        track = self.games.get(self.me or "")
        return track.view if track else None

    def my_version(self) -> int:
        track = self.games.get(self.me or "")
        return track.version if track else 0

    def my_events(self) -> list[dict[str, Any]]:
        track = self.games.get(self.me or "")
        return list(track.events) if track else []

    def time_limit(self, at: int, ends_at: int | None) -> int | None:
        """The player's own time limit in a race from ``at`` to ``ends_at``: half of it for a
        tournament racer who went berserk (their `berserk`, in the room or told since)."""
        if not ends_at:
            return None
        return (ends_at - at) // (2 if self.my_progress().get("berserk") else 1)

    def my_progress(self) -> dict[str, Any]:
        return self.progress.get(self.me or "", {})

    def out_of_time(self) -> bool:
        """Whether the player's clock ended their game: said by their progress, or by their
        game's last event (the two travel separately)."""
        events = self.my_events()
        last = events[-1] if events else {}
        clocked = last.get("type") == "resigned" and last.get("reason") == "clock"
        return clocked or self.my_progress().get("status") == "timed_out"

    def player_id(self, who: str, order: list[str]) -> str:
        """A racer's id from a name, a player id, or a number: the line of the racers panel
        (``order``, as on screen), or the join order while there is no panel."""
        players = self.room.get("players", [])
        order = order or [p["player"] for p in players]
        if who.isdigit() and 1 <= int(who) <= len(order):
            return order[int(who) - 1]
        for player in players:
            shown = racer_name(player["name"], player.get("bot"))
            if who in (player["name"], shown, player["player"]):
                return player["player"]
        folded = [p["player"] for p in players if p["name"].casefold() == who.casefold()]
        if len(folded) == 1:
            return folded[0]
        names = ", ".join(p["name"] for p in players) or "none yet"
        raise ClientError(f"no player {who!r} in this room (players: {names})")
