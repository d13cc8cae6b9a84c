"""`hint` in solo practice: the solver's next move from the player's position, budgeted.

Offline the client holds the whole position and solves it in a thread, so the screen keeps
refreshing; online the server solves (it alone sees the stock) and only in solo rooms (in a
race a hint would be an unfair aid).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from client.app import App
from client.commands import Command, Kind
from client.play import hint as heuristic_hint
from shared import GameState, Solution, solve

HINT_MAX_NODES = 20_000
"""Positions the solver may expand per hint: about a second of search in Swiss."""


def hint_text(solution: Solution, fallback: str | None = None) -> str:
    """What the player reads for the solver's answer; ``fallback`` is a plain suggestion from
    the position when the solver found no winning line."""
    if solution.status == "won":
        if solution.next_move is None:
            return "Hint: the game is won."
        return (
            f"Hint: {solution.next_move} (a win in {len(solution.moves)} moves from here, "
            f"found in {solution.nodes:,} nodes)"
        )
    if solution.status == "unwinnable":
        return "Hint: no move wins from here (the solver searched every line); try undo."
    text = f"Hint: no winning line found within {solution.max_nodes:,} nodes"
    return f"{text}; try {fallback} ('moves' lists every legal move)." if fallback else text + "."


def suggestion_text(answer: Mapping[str, Any]) -> str:
    """What the player reads for the server's `suggestion` (docs/protocol.md)."""
    if answer["status"] == "won":
        if answer["move"] is None:
            return "Hint: the game is won."
        return f"Hint: {answer['move']} (a winning line, found in {answer['nodes']:,} nodes)"
    if answer["status"] == "unwinnable":
        return "Hint: no move wins from here (the solver searched every line)."
    return f"Hint: no winning line found within {answer['max_nodes']:,} nodes."


def is_hint(command: Command) -> bool:
    """`hint` at the prompt; offline the hook answers it before the public-view heuristic."""
    return command.kind is Kind.HINT


def hint_command(
    app: App, position: Callable[[], GameState], *, max_nodes: int = HINT_MAX_NODES
) -> Callable[[Command], Awaitable[bool]]:
    """A play_loop `extra` handler answering `hint` for the position `position()` returns."""

    async def handle(command: Command) -> bool:
        if not is_hint(command):
            return False
        state = position()
        solution = await asyncio.to_thread(solve, state, max_nodes=max_nodes)
        view = app.session.view
        text = hint_text(solution, heuristic_hint(view) if view is not None else None)
        app.session.say(text)
        app.log(text)
        return True

    return handle
