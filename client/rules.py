"""The rules of the two games for players: docs/rules.md, shipped inside the package.

`solitaire rules [GAME]` prints them and `help rules` shows them in a game, so the rules travel
with an installed wheel rather than living only in the repository.
"""

from __future__ import annotations

from importlib import resources

_TITLES = {"swiss": "## Swiss", "quadrennial": "## Quadrennial"}


def rules_text() -> str:
    """The whole text of docs/rules.md."""
    return resources.files("client").joinpath("rules.md").read_text(encoding="utf-8")


def _sections(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("## ") and current:
            parts.append("\n".join(current).strip() + "\n")
            current = []
        current.append(line)
    if current:
        parts.append("\n".join(current).strip() + "\n")
    return parts


def rules_for(variant: str | None) -> str:
    """The introduction, one game's rules (or both games') and the race rules."""
    text = rules_text()
    if variant is None:
        return text
    other = _TITLES["quadrennial" if variant == "swiss" else "swiss"]
    return "\n".join(part for part in _sections(text) if not part.startswith(other))


def plain(text: str) -> str:
    """Markdown marks a terminal would show literally (`code`, **bold**, # headings) removed."""
    lines = []
    for line in text.splitlines():
        if line.startswith("#"):
            line = line.lstrip("#").strip().upper()
        lines.append(line.replace("**", "").replace("`", ""))
    return "\n".join(lines) + "\n"
