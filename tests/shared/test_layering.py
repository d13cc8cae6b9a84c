"""The modules of `shared` import one another one way only (docs/architecture.md, "Layers of the
game core"): no cycle, counting imports inside functions and under TYPE_CHECKING too, since a
cycle hidden in a function is still two modules that need each other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import shared

SHARED = Path(shared.__file__).resolve().parent
ROOT = SHARED.parent
MODULES = sorted(f"shared.{p.stem}" for p in SHARED.glob("*.py") if p.stem != "__init__")


def _module_of(path: Path) -> str:
    return "shared" if path.stem == "__init__" else f"shared.{path.stem}"


def _targets(node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The modules of `shared` an import statement loads ("shared" is the package itself)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "shared"]
    base = node.module or ""
    if node.level:
        base = "shared" + (f".{base}" if base else "")
    if base.split(".")[0] != "shared":
        return []
    if base != "shared":
        return [base]
    # `from shared import x`: a submodule when x is one, else a name of the package's __init__.
    return [f"shared.{a.name}" if f"shared.{a.name}" in known else "shared" for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """Each module of `shared` (and the package) to the modules of `shared` it imports."""
    paths = sorted(SHARED.glob("*.py"))
    known = {_module_of(p) for p in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        name = _module_of(path)
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.update(t for t in _targets(node, known) if t != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The checker itself: a three-module cycle and a two-module one are both reported."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "a"}, "f": {"a"}}
    assert sorted(cycles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_the_graph_sees_imports_inside_functions_and_type_checking() -> None:
    """An import inside a function or under TYPE_CHECKING is an edge like any other."""
    src = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from shared.views import PublicView\n"
        "def f():\n    from shared import swiss\n    import shared.game\n"
        "from shared import parse_move\n"
    )
    known = {"shared", "shared.views", "shared.swiss", "shared.game"}
    edges = {
        t
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for t in _targets(node, known)
    }
    assert edges == {"shared.views", "shared.swiss", "shared.game", "shared"}


def test_shared_has_no_import_cycle() -> None:
    graph = import_graph()
    assert set(MODULES) <= set(graph)
    assert cycles(graph) == []


def test_no_module_imports_the_package_itself() -> None:
    """shared/__init__.py imports every public module, so a module importing it is a cycle."""
    graph = import_graph()
    assert [m for m, edges in graph.items() if "shared" in edges] == []


@pytest.mark.e2e
@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """`python -c "import shared.X"` works for every X, whichever is imported first."""
    subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, check=True)
