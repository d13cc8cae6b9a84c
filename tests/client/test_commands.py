"""Typed lines: command words are commands, everything else is a move for shared.parse_move."""

from __future__ import annotations

import pytest

from client.commands import Kind, parse_command


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("moves", Kind.MOVES),
        ("  MOVES ", Kind.MOVES),
        ("help", Kind.HELP),
        ("?", Kind.HELP),
        ("resign", Kind.RESIGN),
        ("quit", Kind.QUIT),
        ("q", Kind.QUIT),
        ("exit", Kind.QUIT),
        ("undo", Kind.UNDO),
        ("start", Kind.START),
        ("", Kind.EMPTY),
        ("   ", Kind.EMPTY),
    ],
)
def test_command_words(line: str, kind: Kind) -> None:
    assert parse_command(line).kind is kind


@pytest.mark.parametrize(
    ("line", "text"),
    [("t3t5", "t3t5"), ("3 5", "3 5"), ("  w   f ", "w f"), ("d", "d"), ("T3T5x4", "T3T5x4")],
)
def test_anything_else_is_a_move_with_spaces_normalised(line: str, text: str) -> None:
    command = parse_command(line)
    assert command.kind is Kind.MOVE
    assert command.text == text


def test_replay_words_are_moves_outside_a_replay() -> None:
    assert parse_command("n").kind is Kind.MOVE
    assert parse_command("p").kind is Kind.MOVE
    assert parse_command("n", replay=True).kind is Kind.NEXT
    assert parse_command("p", replay=True).kind is Kind.PREVIOUS
