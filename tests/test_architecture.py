"""The house rule that keeps the core reusable: only ui/ and app_pages/ may import streamlit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dashboard"
CORE_MODULES = sorted(f"dashboard.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem != "__init__")


def test_core_modules_found() -> None:
    assert {"dashboard.corpus", "dashboard.filters", "dashboard.analytics.analysis"} <= set(CORE_MODULES)


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
