"""Every class of the product's packages stays small enough to be read as one job."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "server", "client")
MAX_CLASS_LINES = 250


def oversized_classes() -> list[str]:
    """Each class over the limit as `path:line Name (N lines)`, from `class` to its last line."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    assert node.end_lineno is not None
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_CLASS_LINES:
                        where = path.relative_to(ROOT)
                        found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_the_walk_sees_every_package() -> None:
    """A walk that found no module would pass for the wrong reason."""
    for package in PACKAGES:
        assert list((ROOT / package).rglob("*.py")), package


def test_no_class_is_over_the_limit() -> None:
    found = oversized_classes()
    assert not found, f"classes over {MAX_CLASS_LINES} lines:\n" + "\n".join(found)
