"""The top-level API of `shared`: the names other parts code against exist and do what the
contract (docs/architecture.md) says."""

from __future__ import annotations

import shared

REQUIRED = {
    "deal_deck",
    "DEAL_VERSION",
    "new_game",
    "GameState",
    "legal_moves",
    "apply_move",
    "is_won",
    "is_over",
    "foundation_count",
    "parse_move",
    "start_event",
    "move_event",
    "resign_event",
    "fold",
    "fold_event",
    "public_view",
    "PublicView",
    "public_event",
    "public_fold",
    "public_fold_event",
    "public_legal_moves",
    "render_board",
    "solve",
    "Solution",
}


def test_every_exported_name_exists() -> None:
    for name in shared.__all__:
        assert hasattr(shared, name), name


def test_required_names_are_exported() -> None:
    assert set(shared.__all__) >= REQUIRED


def test_all_has_no_duplicates() -> None:
    assert len(shared.__all__) == len(set(shared.__all__))
