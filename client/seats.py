"""Seats kept on disk: each seat's resume token, so a new run takes the seat back after a crash
or Ctrl-C, within the server's grace (docs/protocol.md, "Resuming").

One small JSON file per (server, room, name) in the XDG state directory
(`$XDG_STATE_HOME/solitaire/`, else `~/.local/state/solitaire/`), the directory mode 0700 and
each file 0600: a token is as good as the seat. Files are written whole and renamed into place,
so a crash never leaves half a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

SOLO = "solo"
RACE = "race"
# A seat older than this is surely gone (the server's grace is a minute by default): ignore it.
STALE_MS = 6 * 3600 * 1000


def state_dir(env: Mapping[str, str]) -> Path:
    """Where the client keeps its state (XDG Base Directory specification)."""
    base = env.get("XDG_STATE_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "solitaire"


@dataclass(frozen=True)
class Seat:
    """A seat this user holds: where, as whom, and the token that takes it back."""

    server: str
    room: str
    player: str | None
    name: str
    token: str
    kind: str
    saved_at: int


class SeatStore:
    """The seat files of one state directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def _where(server: str, name: str) -> str:
        # Two players on one machine (two terminals, two names) keep two seats.
        return hashlib.sha256(f"{server}\n{name}".encode()).hexdigest()[:16]

    def _path(self, server: str, room: str, name: str) -> Path:
        safe = "".join(c for c in room.lower() if c.isalnum())[:64] or "room"
        return self.directory / f"seat-{self._where(server, name)}-{safe}.json"

    def save(self, seat: Seat) -> None:
        """Write (or replace) the seat's file, readable by this user only."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._path(seat.server, seat.room, seat.name)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(seat), handle)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)

    def load(self, server: str, room: str, name: str, now_ms: int) -> Seat | None:
        """The seat ``name`` holds in ``room`` on ``server``, unless none or it is stale."""
        return self._read(self._path(server, room, name), now_ms)

    def _read(self, path: Path, now_ms: int) -> Seat | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            seat = Seat(**data)
        except (OSError, ValueError, TypeError):
            return None
        if now_ms - seat.saved_at > STALE_MS:
            self._remove(path)
            return None
        return seat

    def latest(self, server: str, name: str, kind: str, now_ms: int) -> Seat | None:
        """The most recent seat of a kind (a solo game, say) ``name`` holds on ``server``."""
        seats = [
            seat
            for path in sorted(self.directory.glob(f"seat-{self._where(server, name)}-*.json"))
            if (seat := self._read(path, now_ms)) is not None and seat.kind == kind
        ]
        return max(seats, key=lambda seat: seat.saved_at, default=None)

    def forget(self, server: str, room: str, name: str) -> None:
        """The seat is done with (the game ended, or the player left it)."""
        self._remove(self._path(server, room, name))

    @staticmethod
    def _remove(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()
