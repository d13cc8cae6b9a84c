"""`shared` is pure (docs/architecture.md): it imports nothing from asyncio, websockets, redis
or the server and client packages, and reads no clock."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import shared

SHARED = Path(shared.__file__).resolve().parent
ROOT = SHARED.parent
FORBIDDEN = ("asyncio", "websockets", "redis", "server", "client")
MODULES = sorted(f"shared.{p.stem}" for p in SHARED.glob("*.py") if p.stem != "__init__")


@pytest.mark.e2e
def test_importing_every_module_loads_nothing_forbidden() -> None:
    """In a fresh interpreter, import all of shared and look at sys.modules."""
    code = (
        "import json, sys\n"
        f"for name in {['shared', *MODULES]!r}:\n"
        "    __import__(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN]
    assert bad == []
    assert set(MODULES) <= set(loaded)


def test_sources_import_nothing_forbidden_and_read_no_clock() -> None:
    """Scan every source file of shared: no forbidden import, no time/datetime clock."""
    for path in SHARED.glob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top not in FORBIDDEN, f"{path.name} imports {name}"
                assert top not in ("time", "datetime"), f"{path.name} reads a clock via {name}"
