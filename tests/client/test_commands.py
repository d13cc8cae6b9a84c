"""Typed lines: command words are commands, everything else is a move for shared.parse_move."""

from __future__ import annotations

import pytest

from client.commands import HELP_TEXT, Kind, parse_command


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
        ("back", Kind.BACK),
        ("me", Kind.BACK),
        (" ME ", Kind.BACK),
        ("watch", Kind.WATCH),
        ("watch bob", Kind.WATCH),
        ("Rematch", Kind.REMATCH),
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


@pytest.mark.parametrize(
    ("line", "arg"),
    [
        ("watch", ""),
        ("  WATCH  ", ""),
        ("watch Bob", "Bob"),
        ("watch   2", "2"),
        ("Watch all", "all"),
        ("watch Mary Ann", "Mary Ann"),
    ],
)
def test_watch_keeps_whom_as_typed(line: str, arg: str) -> None:
    command = parse_command(line)
    assert command.kind is Kind.WATCH
    assert command.arg == arg


def test_words_starting_like_watch_are_still_moves() -> None:
    assert parse_command("watchful").kind is Kind.MOVE
    assert parse_command("w f").kind is Kind.MOVE
    assert parse_command("wt7").kind is Kind.MOVE


def test_help_mentions_watching_and_going_back() -> None:
    assert "watch NAME" in HELP_TEXT
    assert "back" in HELP_TEXT
