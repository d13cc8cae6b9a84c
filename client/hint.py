"""`hint` in solo practice: a move from the player's position, the solver's when it proves a
line within the budget, otherwise shared.solver.good_move's (labelled a heuristic's).

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
from shared import GameState
from shared.solver import Hint, hint

HINT_MAX_NODES = 10_000
"""Positions the solver may expand per hint, as the server's default budget: under a second of
CPU in 99 % of positions of random Swiss games (docs/winnability.md, "Hints")."""


def hint_text(answer: Hint) -> str:
    """What the player reads for a hint: the solver's move with its line, or the heuristic's,
    labelled as such, with what the solver established."""
    solution = answer.solution
    if answer.move is None:
        return "Hint: the game is won." if solution.status == "won" else "Hint: no move is left."
    if not answer.heuristic:
        return (
            f"Hint: {answer.move} (a win in {len(solution.moves)} moves from here, "
            f"found in {solution.nodes:,} nodes)"
        )
    return _heuristic_text(answer.move, str(solution.status), solution.max_nodes)


def _heuristic_text(move: str, status: str, max_nodes: int) -> str:
    if status == "unwinnable":
        why = "no move wins from here (the solver searched every line); try undo, or"
        return f"Hint: {why} a good move: {move}."
    return (
        f"Hint: no winning line proved within {max_nodes:,} nodes; a good move: {move} "
        "(a heuristic's)."
    )


def suggestion_text(answer: Mapping[str, Any]) -> str:
    """What the player reads for the server's `suggestion` (docs/protocol.md)."""
    move = answer["move"]
    if move is None:
        return "Hint: the game is won." if answer["status"] == "won" else "Hint: no move is left."
    if answer["status"] == "won" and not answer.get("heuristic", False):
        return f"Hint: {move} (a winning line, found in {answer['nodes']:,} nodes)"
    return _heuristic_text(move, answer["status"], answer["max_nodes"])


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
        answer = await asyncio.to_thread(hint, state, max_nodes=max_nodes)
        text = hint_text(answer)
        app.session.say(text)
        app.log(text)
        return True

    return handle
