"""The forked fold of a bulk rebuild: a child process decodes and folds part of the games.

Kept apart from ``server.rooms`` because it is process plumbing (fork, pipe, pickle), not room
logic: the manager decides what goes to the child and folds it with its own method.
"""

from __future__ import annotations

import os
import pickle
import traceback
from collections.abc import Callable
from typing import Any

from server.race import Progress
from server.room import Game, Room
from shared.state import GameState

PARALLEL_FOLD_MIN_EVENTS = 20_000  # below this a forked child costs more than it saves

Folded = tuple[GameState | None, int, list[bytes], Progress, dict[Any, int]]
"""What the child sends back of one game: state, version, public events, progress, cids."""


def fold_in_child(
    fold: Callable[[Room, Game, Any], None], work: list[tuple[Room, Game, Any]]
) -> tuple[int, int]:
    """Fork a child that folds ``work`` (``fold`` decodes and folds one game's raw events) and
    pickles each game's result to a pipe.

    Returns (pid, read end). The child has what was read already (the fork copies it), touches
    no socket and leaves with ``os._exit``: nothing of the parent's connections or loop runs twice.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return pid, read_fd
    code = 1  # pragma: no cover (the child's coverage is not collected)
    try:  # pragma: no cover
        os.close(read_fd)
        folded: list[Folded] = []
        for room, game, raw in work:
            fold(room, game, raw)
            folded.append((game.state, game.version, game.public, game.progress, game.cids))
        with os.fdopen(write_fd, "wb") as pipe:
            pickle.dump(folded, pipe, pickle.HIGHEST_PROTOCOL)
        code = 0
    except BaseException:  # pragma: no cover
        traceback.print_exc()
    finally:
        os._exit(code)


def child_results(pid: int, read_fd: int) -> list[Folded] | None:
    """What the child folded, or None if it failed (the caller folds those games itself)."""
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return None
    try:
        results: list[Folded] = pickle.loads(data)
    except Exception:
        return None
    return results
