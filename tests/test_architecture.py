"""The house rules that keep the core reusable and the floors honest.

Only ui/ and app_pages/ import streamlit; no two modules import each other through any chain (no
circles); nothing imports a floor above its own (the import-linter layers contract in pyproject.toml);
no module takes another package's ``_private`` name.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "dashboard"
STREAMLIT_PACKAGES = ("dashboard.ui", "dashboard.app_pages")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = sorted(_module_name(path) for path in PACKAGE.rglob("*.py") if path.stem != "__main__")
CORE_MODULES = [m for m in MODULES if not m.startswith(STREAMLIT_PACKAGES)]


def test_core_modules_found() -> None:
    expected = {"dashboard.corpus", "dashboard.filters", "dashboard.analytics.analysis", "dashboard.sources"}
    assert expected <= set(CORE_MODULES)
    assert not any(m.startswith(STREAMLIT_PACKAGES) for m in CORE_MODULES)


def test_core_never_imports_streamlit() -> None:
    # A fresh interpreter, so nothing imported by other tests hides the answer.
    code = (
        "import importlib, sys\n"
        f"for name in {CORE_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m == 'streamlit' or m.startswith('streamlit.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", f"a core module imports streamlit: {result.stdout[:300]}"


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), i.e. the import circles."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for other in edges.get(module, []):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(edges):
        if module not in order:
            visit(module)
    return found


@pytest.mark.parametrize("type_checking", [True, False], ids=["with TYPE_CHECKING imports", "at run time"])
def test_no_import_circles(type_checking: bool) -> None:
    graph = grimp.build_graph("dashboard", cache_dir=None, exclude_type_checking_imports=not type_checking)
    assert _circles(graph) == []


def test_a_circle_is_found_when_there_is_one() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert _circles(graph) == [["a.x", "a.y"]]


def _package_of(module: str) -> str:
    """The concern a module belongs to: ``dashboard.index`` for ``dashboard.index.build``; a top-level
    module (``dashboard.filters``) is its own."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _private_names_taken(path: Path) -> list[str]:
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # local name -> the dashboard module it is
    taken = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dashboard"):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and _package_of(node.module) != _package_of(module):
                    taken.append(f"{module}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            if private and _package_of(bound[node.value.id]) != _package_of(module):
                taken.append(f"{module}: {node.value.id}.{node.attr}")
    return taken


def test_no_private_name_is_taken_across_packages() -> None:
    taken = [line for path in sorted(PACKAGE.rglob("*.py")) for line in _private_names_taken(path)]
    assert taken == []


def test_a_private_name_taken_across_packages_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "dashboard" / "ui" / "page.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from dashboard.index.format import _secret\nfrom dashboard.ui.data import _mine\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "dashboard")
    assert _private_names_taken(fake) == ["dashboard.ui.page: from dashboard.index.format import _secret"]


def test_the_floors_contract_holds() -> None:
    """import-linter's contracts of pyproject.toml (the floors, and streamlit only in the app's layer)."""
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout
