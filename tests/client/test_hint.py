"""`hint` offline: the solver's next move, or why there is none (client/hint.py)."""

from __future__ import annotations

import re

import pytest

from client.commands import Command, Kind, parse_command
from client.hint import HINT_MAX_NODES, hint_text, is_hint, suggestion_text
from shared import apply_move, new_game, solve
from shared.solver import Hint, Solution, Status, good_move
from tests.client.pty_driver import finish, spawn, type_line


def test_hint_text_for_each_verdict() -> None:
    won = Solution(Status.WON, ("r3f", "d"), 57, 1000)
    assert (
        hint_text(Hint("r3f", won)) == "Hint: r3f (a win in 2 moves from here, found in 57 nodes)"
    )
    assert hint_text(Hint(None, Solution(Status.WON, (), 0, 1000))) == "Hint: the game is won."
    lost = hint_text(Hint("wt1", Solution(Status.UNWINNABLE, (), 12, 1000)))
    assert lost.startswith("Hint: no move wins from here")
    assert lost.endswith("a good move: wt1.")
    unknown = Solution(Status.UNKNOWN, (), 20_000, 20_000)
    assert hint_text(Hint("t3t9", unknown)) == (
        "Hint: no winning line proved within 20,000 nodes; a good move: t3t9 (a heuristic's)."
    )
    assert hint_text(Hint(None, Solution(Status.UNWINNABLE, (), 1, 10))) == "Hint: no move is left."


def test_suggestion_text_labels_the_heuristics_move() -> None:
    line = {"move": "t1f", "heuristic": False, "status": "won", "nodes": 5, "max_nodes": 10}
    assert suggestion_text(line) == "Hint: t1f (a winning line, found in 5 nodes)"
    guess = {**line, "heuristic": True, "status": "unknown"}
    assert suggestion_text(guess) == (
        "Hint: no winning line proved within 10 nodes; a good move: t1f (a heuristic's)."
    )


def test_hint_is_the_word_hint_only() -> None:
    assert is_hint(parse_command("hint"))
    assert is_hint(parse_command("  HINT "))
    assert not is_hint(parse_command("hint me"))
    assert not is_hint(Command(Kind.MOVES, "moves"))


@pytest.mark.e2e
def test_offline_hint_shows_the_solvers_move_and_it_plays() -> None:
    """Quadrennial seed 1: the hint is the solver's first move; typing it plays it, and the
    next hint is the solver's move from there."""
    start = new_game("quadrennial", seed=1)
    first = solve(start, max_nodes=HINT_MAX_NODES).next_move
    assert first is not None
    second = solve(apply_move(start, first), max_nodes=HINT_MAX_NODES).next_move
    child = spawn("play", "--offline", "--seed", "1", "--variant", "quadrennial", "--no-color")
    try:
        child.expect("Your move")
        type_line(child, "hint")
        child.expect(re.escape(f"Hint: {first} (a win in "))
        type_line(child, first)
        child.expect(re.escape(f"played {first}"))
        type_line(child, "hint")
        child.expect(re.escape(f"Hint: {second} (a win in "))
        type_line(child, "quit")
        child.expect("Quit now and this game is gone")  # a live game: it asks first
        type_line(child, "y")
        assert finish(child) == 0
    finally:
        child.close(force=True)


@pytest.mark.e2e
def test_offline_hint_gives_the_heuristics_move_when_the_budget_runs_out() -> None:
    """Swiss seed 3 is not solved within the hint budget (bench.solver leaves it unknown)."""
    assert solve(new_game("swiss", seed=3), max_nodes=HINT_MAX_NODES).status == "unknown"
    child = spawn("play", "--offline", "--seed", "3", "--no-color")
    try:
        child.expect("Your move")
        type_line(child, "hint")
        move = good_move(new_game("swiss", seed=3))
        assert move is not None
        child.expect(re.escape(f"no winning line proved within {HINT_MAX_NODES:,} nodes"))
        child.expect(re.escape(f"a good move: {move}"))
        child.expect("Stock: 27")  # the board is still there
        type_line(child, "quit")
        child.expect("Quit now and this game is gone")
        type_line(child, "y")
        assert finish(child) == 0
    finally:
        child.close(force=True)
