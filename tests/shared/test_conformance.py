"""Every conformance position (tests/data/conformance, copied from ../shared/conformance):
the engine reaches it from the deck and agrees on the exact legal moves, won and over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import (
    apply_move,
    fold,
    is_over,
    is_won,
    legal_moves,
    move_event,
    new_game,
    public_event,
    public_fold,
    public_legal_moves,
    public_view,
    start_event,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "conformance"


def _cases() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for path in sorted(DATA.glob("*.json")):
        for k, case in enumerate(json.loads(path.read_text())):
            cases.append((f"{path.stem}[{k}]", case))
    return cases


CASES = _cases()


def test_conformance_data_is_present() -> None:
    """The copied data holds every file of the shared suite (21 files, 3 cases each)."""
    assert len(list(DATA.glob("*.json"))) == 21
    assert len(CASES) == 63


@pytest.mark.parametrize(("name", "case"), CASES, ids=[n for n, _ in CASES])
def test_conformance_case(name: str, case: dict[str, Any]) -> None:
    state = new_game(case["variant"], deck=case["deck"])
    for move in case["moves"]:
        assert move in legal_moves(state), f"{name}: {move} should be legal"
        state = apply_move(state, move)
    assert sorted(legal_moves(state)) == case["legal"], name
    assert is_won(state) is case["won"]
    assert is_over(state) is case["over"]


@pytest.mark.parametrize(("name", "case"), CASES[::4], ids=[n for n, _ in CASES[::4]])
def test_conformance_case_through_events(name: str, case: dict[str, Any]) -> None:
    """The same positions folded from events, privately and publicly."""
    state = new_game(case["variant"], deck=case["deck"])
    events = [start_event(case["variant"], case["deck"], at=0)]
    for i, move in enumerate(case["moves"], start=1):
        events.append(move_event(state, move, at=i))
        state = apply_move(state, move)
    assert fold(events) == state
    view = public_fold(public_event(e) for e in events)
    assert view == public_view(state)
    assert sorted(public_legal_moves(view)) == case["legal"]
    assert view.won is case["won"]
    assert view.over is case["over"]
