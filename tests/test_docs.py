"""The manual's reference pages name everything the code offers.

The collectors live in `docs/gen_reference.py` (which also writes the generated pages); these tests fail
when a URL key, a CLI command or one of its flags, a format's file ending or a column of the paper table
is missing from its page under `docs/reference/`, so a new key or flag cannot ship undocumented.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def _gen_reference() -> ModuleType:
    """docs/gen_reference.py as a module (it is a script beside the docs, not part of the package)."""
    name = "gen_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "gen_reference.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
    return sys.modules[name]


gen = _gen_reference()


def _page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def _code_spans(text: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", text))


@pytest.mark.parametrize("key", gen.url_keys())
def test_every_url_key_is_in_the_reference(key: str) -> None:
    """Each key is named as a code span in the first column of a table row of url-keys.md."""
    first_cells = [line.split("|")[1] for line in _page("url-keys.md").splitlines() if line.startswith("| `")]
    assert any(f"`{key}`" in cell for cell in first_cells), (
        f"URL key {key!r} is missing from docs/reference/url-keys.md"
    )


@pytest.mark.parametrize("command", [command.name for command in gen.commands()])
def test_every_cli_command_and_flag_is_in_the_reference(command: str) -> None:
    """Each command has its own section in cli.md, and that section names every one of its flags."""
    page = _page("cli.md")
    heading = f"## `{command}`"
    assert heading in page, (
        f"CLI command {command!r} is missing from docs/reference/cli.md: run docs/gen_reference.py"
    )
    section = page.split(heading, 1)[1].split("\n## ", 1)[0]
    (found,) = [c for c in gen.commands() if c.name == command]
    missing = [
        option for option in found.options() if not re.search(rf"(`|<code>){re.escape(option)}[ `<]", section)
    ]
    assert not missing, (
        f"{command}: flags {missing} missing from docs/reference/cli.md: run docs/gen_reference.py"
    )


def test_the_cli_reference_lists_commands_that_exist_only() -> None:
    """A command removed from the code does not linger in the reference."""
    documented = set(re.findall(r"^## `([^`]+)`$", _page("cli.md"), flags=re.MULTILINE))
    assert documented == {command.name for command in gen.commands()}


@pytest.mark.parametrize("suffix", sorted(s for s in gen._format_registry() if s))
def test_every_format_is_in_the_reference(suffix: str) -> None:
    """Each file ending a reader accepts is named on formats.md."""
    assert suffix in _code_spans(_page("formats.md")), f"{suffix} is missing from docs/reference/formats.md"


@pytest.mark.parametrize("column", gen.column_names())
def test_every_column_is_in_the_reference(column: str) -> None:
    """Each column `dashboard.schema` declares has a row on columns.md."""
    assert f"| `{column}` |" in _page("columns.md"), (
        f"column {column!r} is missing from docs/reference/columns.md"
    )


def test_every_declared_column_is_documented_in_the_schema_docstring() -> None:
    """columns.md is written from schema.py's docstring: a column declared in code must be described there."""
    described = {name for _, name, _, _ in gen.columns()}
    assert set(gen.column_names()) <= described
