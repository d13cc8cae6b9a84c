"""Move notation (RULES.md, "Move notation"): canonical parsing and formatting, and the
friendly parser for human input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared import (
    IllegalMove,
    apply_move,
    format_move,
    new_game,
    parse_canonical,
    parse_move,
    public_view,
)
from shared.notation import Move
from tests.shared.positions import quad, swiss

CANONICAL = [
    "d",
    "redeal",
    "t3f",
    "wt7",
    "r5f",
    "wf",
    "fst2",
    "fct9",
    "t3t5",
    "t3t5x4",
    "t9t1x52",
]


@pytest.mark.parametrize("move", CANONICAL)
def test_canonical_round_trip(move: str) -> None:
    """RULES.md, Move notation: each canonical move parses and formats back to itself."""
    assert format_move(parse_canonical(move)) == move


def test_parsed_fields() -> None:
    assert parse_canonical("t3t5x4") == Move("t", 2, "t", 4, 4)
    assert parse_canonical("fht2") == Move("f", 2, "t", 1, 1)
    assert parse_canonical("r8f") == Move("r", 7, "f", -1, 1)
    assert parse_canonical("wf") == Move("w", -1, "f", -1, 1)


@pytest.mark.parametrize(
    "move",
    [
        "",
        "D",
        "t3 t5",
        "T3T5",
        "t0t5",
        "t10f",
        "r9f",
        "t3t3",
        "t3t5x1",
        "t3t5x0",
        "t3t5x04",
        "wt5x2",
        "fsf",
        "ft2",
        "f",
        "t3",
        "w",
        "xyz",
        "wr1",
    ],
)
def test_malformed_moves_are_refused_with_a_reason(move: str) -> None:
    """RULES.md, Move notation: lower case, no spaces, only the listed piles."""
    with pytest.raises(IllegalMove) as info:
        parse_canonical(move)
    assert info.value.reason
    assert info.value.code == "illegal_move"


def test_non_string_move_is_refused() -> None:
    with pytest.raises(IllegalMove, match="string"):
        parse_canonical(35)  # type: ignore[arg-type]


def test_apply_move_refuses_malformed_moves() -> None:
    with pytest.raises(IllegalMove, match="not a move"):
        apply_move(new_game("swiss", seed=1), "t3 t5")


# --- Friendly parser -----------------------------------------------------------------------

# t1: 9H 8S (a two-card run), t2: TC, t3 empty, waste 7D on top.
SWISS = swiss([["9H", "8S"], ["TC"], [], ["8C"]], waste=["AH", "7D"], stock=["2C"])


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("t1t2x2", "t1t2x2"),
        ("1 2", "t1t2x2"),
        ("t1 t2", "t1t2x2"),
        ("t1t2", "t1t2x2"),  # one card does not fit, the only run that does is meant
        ("T1 T2", "t1t2x2"),
        ("1-2", "t1t2x2"),
        ("1 > 2", "t1t2x2"),
        ("1 to 2", "t1t2x2"),
        ("12", "t1t2x2"),
        ("w 1", "wt1"),
        ("W T1", "wt1"),
        ("wt1", "wt1"),
        ("d", "d"),
        ("deal", "d"),
        (" D ", "d"),
        ("w 4", "wt4"),
    ],
)
def test_friendly_input_resolves_to_canonical(text: str, move: str) -> None:
    assert parse_move(text, SWISS) == move


def test_friendly_works_on_public_views_too() -> None:
    assert parse_move("1 2", public_view(SWISS)) == "t1t2x2"
    assert parse_move("d", public_view(SWISS)) == "d"


def test_foundation_inputs() -> None:
    state = swiss([["3H"], ["6S"]], waste=["2C"], found={"H": 1, "D": 4})
    assert parse_move("w f", state) == "wf"
    assert parse_move("W F", state) == "wf"
    assert parse_move("1f", state) == "t1f"
    assert parse_move("1 found", state) == "t1f"
    assert parse_move("fd 2", state) == "fdt2"
    assert parse_move("FD T2", state) == "fdt2"


def test_explicit_run_length() -> None:
    assert parse_move("1 2 x2", SWISS) == "t1t2x2"
    assert parse_move("t1t2 x2", SWISS) == "t1t2x2"


def test_two_run_lengths_fit_lists_both() -> None:
    """RULES.md, Move notation: when two runs fit, friendly input must say which (the shared
    conformance position swiss-two_run_lengths_fit)."""
    data = Path(__file__).resolve().parent.parent / "data" / "conformance"
    case = json.loads((data / "swiss-two_run_lengths_fit.json").read_text())[0]
    state = new_game("swiss", deck=case["deck"])
    for move in case["moves"]:
        state = apply_move(state, move)
    with pytest.raises(IllegalMove, match=r"2 runs fit: t2t8 or t2t8x3"):
        parse_move("2 8", state)
    assert parse_move("t2t8x3", state) == "t2t8x3"
    assert parse_move("2 8 x3", state) == "t2t8x3"
    assert parse_move("t2t8", state) == "t2t8"  # canonical input is taken literally
    with pytest.raises(IllegalMove, match="2 runs fit"):
        parse_move("t2 t8", state)
    assert parse_move("2 1", state) == "t2t1x3"  # only one length fits there


def test_illegal_friendly_move_says_why() -> None:
    """A refused friendly move names the run and what the destination takes."""
    with pytest.raises(
        IllegalMove, match="nothing of TC from t2 fits on 8S on t1, which takes 7D or 7H"
    ):
        parse_move("2 1", SWISS)
    with pytest.raises(
        IllegalMove, match="the run 9H 8S on t1 fits on empty t3, which takes an Ace"
    ):
        parse_move("1 3", SWISS)
    with pytest.raises(IllegalMove, match="t3 is empty"):
        parse_move("3 1", SWISS)
    with pytest.raises(IllegalMove, match="TC from t2 fits on empty t3, which takes an Ace"):
        parse_move("t2t3", SWISS)
    with pytest.raises(IllegalMove, match="only an Ace"):
        parse_move("t2t3x1", SWISS)  # an explicit length keeps the rules' own reason
    with pytest.raises(IllegalMove, match="waste is empty"):
        parse_move("w f", swiss([["3H"]]))


@pytest.mark.parametrize("text", ["", "   ", "hello", "1", "1 2 3", "f 2", "x3"])
def test_unreadable_input_is_refused(text: str) -> None:
    with pytest.raises(IllegalMove):
        parse_move(text, SWISS)


def test_quadrennial_friendly_inputs() -> None:
    state = quad(["AC", "9D", "2H", "9S", "8C", "8D", "8H", "8S"], waste=["AD"], stock=["2C"])
    assert parse_move("1", state) == "r1f"
    assert parse_move("r1", state) == "r1f"
    assert parse_move("R1 F", state) == "r1f"
    assert parse_move("1 f", state) == "r1f"
    assert parse_move("w", state) == "wf"
    assert parse_move("deal", state) == "d"
    with pytest.raises(IllegalMove, match="takes an Ace"):
        parse_move("3", state)
    with pytest.raises(IllegalMove, match="redeal only when the stock is empty"):
        parse_move("redeal", state)
