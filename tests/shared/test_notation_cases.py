"""The notation cases both move readers share (tests/data/notation_cases.json): the core's
parse_move reads each input as recorded; the page's port runs the same file in Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import IllegalMove, parse_move
from shared.views import PublicView

CASES_PATH = Path(__file__).resolve().parents[1] / "data" / "notation_cases.json"
CASES: dict[str, Any] = json.loads(CASES_PATH.read_text(encoding="utf-8"))


def view_of(board: dict[str, Any]) -> PublicView:
    """A recorded position as the public view the client parses moves against."""
    return PublicView(
        board["variant"],
        tuple(tuple(pile) for pile in board["tableau"]),
        tuple(board["reserve"]),
        board["stock_count"],
        tuple(board["waste"]),
        tuple(tuple(f) for f in board["foundations"]),
        board["redeals_left"],
        board["moves_made"],
        board["won"],
        board["over"],
        board["resigned"],
    )


def read(text: str, board: dict[str, Any]) -> dict[str, str]:
    try:
        return {"move": parse_move(text, view_of(board))}
    except IllegalMove as error:
        return {"error": error.reason}


def test_the_cases_cover_both_variants_moves_and_refusals() -> None:
    variants = {CASES["positions"][c["position"]]["variant"] for c in CASES["cases"]}
    assert variants == {"swiss", "quadrennial"}
    outcomes = {next(k for k in c if k in ("move", "error")) for c in CASES["cases"]}
    assert outcomes == {"move", "error"}
    assert any("runs fit" in c.get("error", "") for c in CASES["cases"])


@pytest.mark.parametrize("position", sorted(CASES["positions"]))
def test_parse_move_reads_every_case_as_recorded(position: str) -> None:
    board = CASES["positions"][position]
    cases = [c for c in CASES["cases"] if c["position"] == position]
    assert cases
    for case in cases:
        expected = {k: case[k] for k in ("move", "error") if k in case}
        assert read(case["input"], board) == expected, case["input"]
