"""The layout says what the server is: a folder per feature, and a file's name never repeats
its folder's (a prefix doing a folder's job is how eighteen ``tournament_*`` files began)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINGS = ("race", "accounts", "daily", "bots", "challenges", "matchmaking", "tournaments")


def test_no_file_starts_with_its_folders_name() -> None:
    found = [
        str(path.relative_to(ROOT))
        for package in ("server", "client")
        for path in (ROOT / package).rglob("*.py")
        if path.stem != "__init__" and path.stem.startswith(path.parent.name)
    ]
    assert not found, f"files named after their folder: {found}"


def test_every_wing_has_its_pure_domain_and_its_services() -> None:
    for wing in WINGS:
        for layer in ("domain", "services"):
            assert (ROOT / "server" / wing / layer / "__init__.py").exists(), (wing, layer)


def test_the_check_would_see_a_prefixed_file(tmp_path: Path) -> None:
    """The walk above finds the kind of file it forbids."""
    folder = tmp_path / "tournament"
    folder.mkdir()
    (folder / "tournament_join.py").write_text("")
    assert [p.stem for p in folder.rglob("*.py") if p.stem.startswith(p.parent.name)]
