"""The suite names its tests the same way every time it is collected.

pytest-xdist's workers each collect the whole suite and stop the run, before any test, when the names
differ. A CI run stopped so: two test parameters were gzip data, named after their bytes, and a gzip
header holds the time it was written; the two workers collected a second apart. This collects the
suite twice, seconds apart, in fresh interpreters (as the workers do) and compares the names.

The collections run with ``--assert=plain``: rewriting every test module's asserts was half of a
collection's time (where bytecode is not written, as here, it is redone each time), and it changes no
test's name: the modules are still imported and parametrized in full.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COLLECT = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"]
COLLECT += ["--assert=plain"]  # the docstring says why

pytestmark = pytest.mark.slow  # two collections of the whole suite: scheduled among the heavy files


def collected() -> list[str]:
    result = subprocess.run(
        COLLECT,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_two_collections_seconds_apart_name_the_same_tests() -> None:
    started = time.monotonic()
    first = collected()
    time.sleep(max(0.0, 1.5 - (time.monotonic() - started)))  # at least one tick of a seconds clock
    second = collected()
    assert len(first) > 1000  # the whole suite, not an empty or failed collection
    changed = sorted(set(first) ^ set(second))
    assert not changed, changed[:10]
