"""Offline play end to end in a pseudo-terminal: type moves, see the board change and reasons."""

from __future__ import annotations

import re

import pexpect
import pytest

from shared import IllegalMove, apply_move, new_game, parse_move, public_view
from tests.client.pty_driver import finish, spawn, type_line, words

pytestmark = pytest.mark.e2e  # every test here starts a process


def reason_of(variant: str, seed: int, moves: list[str], text: str) -> str:
    """The core's own reason for refusing ``text`` after ``moves``: what the screen must show."""
    state = new_game(variant, seed=seed)
    for move in moves:
        state = apply_move(state, move)
    with pytest.raises(IllegalMove) as refused:
        apply_move(state, parse_move(text, public_view(state)))
    return refused.value.reason


def test_offline_game_in_a_terminal() -> None:
    child = spawn("play", "--offline", "--seed", "1", "--no-color")
    try:
        child.expect("seed 1 - offline")
        child.expect("Stock: 27")
        child.expect("t1   t2")
        child.expect("Your move")
        type_line(child, "moves")
        child.expect("Legal moves: d t1t3 t6t8 t7t1 t8t5")
        type_line(child, "d")
        child.expect("Stock: 26")
        child.expect("Waste: 3♣")
        type_line(child, "t1f")
        # The core's reason, with the card as the board shows it and the move said once.
        assert reason_of("swiss", 1, ["d"], "t1f") == (
            "t1f: QS cannot go to its foundation, which takes a Two"
        )
        child.expect(re.escape("t1f: Q♠ cannot go to its foundation, which takes a Two"))
        child.expect("Stock: 26")  # the board is still there, unchanged
        type_line(child, "7 1")  # the friendly form of t7t1
        child.expect("7 1 -> t7t1")
        child.expect("2 moves")
        type_line(child, "undo")
        child.expect("Took back the last move")
        child.expect(r"\b1 move\b")
        type_line(child, "help")
        child.expect("Moves: d deals a card")
        type_line(child, "resign")
        child.expect(re.escape("Resign this game? Type 'y' to resign"))
        type_line(child, "y")
        child.expect("You resigned")
        child.expect(
            words("Next: 'new' for another deal, 'replay' to see this game again, 'quit'.")
        )
        type_line(child, "quit")
        assert finish(child) == 0
    finally:
        child.close(force=True)


def test_offline_colour_and_no_color() -> None:
    child = spawn("play", "--offline", "--seed", "1", "--variant", "quadrennial")
    try:
        child.expect("Quadrennial")
        child.expect("\x1b\\[31m")  # red cards in colour on a terminal
        type_line(child, "q")
        child.expect(re.escape("Quit now and this game is gone"))
        type_line(child, "y")
        assert finish(child) == 0
    finally:
        child.close(force=True)
    child = spawn("play", "--offline", "--seed", "1", "--variant", "quadrennial", "--no-color")
    try:
        child.expect("r1")
        index = child.expect(["\x1b\\[31m", "Your move"])
        assert index == 1
        type_line(child, "quit")
        type_line(child, "y")
        assert finish(child) == 0
    finally:
        child.close(force=True)


def test_end_of_input_ends_the_game() -> None:
    child = spawn("play", "--offline", "--seed", "3", "--no-color")
    try:
        child.expect("Your move")
        child.sendeof()
        assert finish(child) == 0
    finally:
        child.close(force=True)
    assert not isinstance(child.exitstatus, type(pexpect.TIMEOUT))


def test_offline_replay_steps_both_ways(tmp_path) -> None:
    moves = tmp_path / "game.moves"
    moves.write_text("d\n7 1\n")
    child = spawn("replay", "--offline", "--seed", "1", "--moves", str(moves), "--no-color")
    try:
        child.expect("Stock: 27")
        child.expect(r"step 0/2 \(the deal\)")
        type_line(child, "n")
        child.expect(r"step 1/2 \(d\)")
        type_line(child, "n")
        child.expect("2 moves")
        child.expect(r"step 2/2 \(t7t1\)")
        type_line(child, "p")
        child.expect(r"\b1 move\b")
        child.expect(r"step 1/2 \(d\)")
        type_line(child, "p")
        type_line(child, "p")
        child.expect("This is the start")
        type_line(child, "q")
        assert finish(child) == 0
    finally:
        child.close(force=True)
