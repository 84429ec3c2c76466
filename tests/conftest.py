"""Shared fixtures: where the seeds and the real corpora are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEEDS_DIR = REPO / "seeds"
CORPORA_DIR = REPO.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    return SEEDS_DIR


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The real public corpora next to the repo; tests that need them skip where they are absent."""
    if not CORPORA_DIR.is_dir():
        pytest.skip(
            f"real corpora not found at {CORPORA_DIR} (they live in ../shared/corpora, outside the repo)"
        )
    return CORPORA_DIR
