"""Shared fixtures: where the seeds and the real corpora are."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEEDS_DIR = REPO / "seeds"
CORPORA_DIR = REPO.parent / "shared" / "corpora"


@pytest.fixture(autouse=True)
def _no_real_repository_checks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the user's repository cache or can reach a real API: the cache is a fresh
    temporary file and every API base a closed local port, unless a test points them elsewhere."""
    cache = tmp_path / "repository-cache" / "repositories.sqlite"
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE", str(cache))
    for variable in ("GITHUB_API_URL", "GITLAB_API_URL", "HF_ENDPOINT", "CODEBERG_API_URL"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")
    for variable in ("GITHUB_TOKEN", "GITLAB_TOKEN", "HF_TOKEN", "CODEBERG_TOKEN"):
        monkeypatch.delenv(variable, raising=False)


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


@pytest.fixture(scope="session", autouse=True)
def private_disk_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every app the tests start keeps its disk cache in a fresh folder, never in the user's own.

    Small corpora (the seeds) are not kept behind the page (``PAPER_DASHBOARD_CACHE_SMALL=0``): an
    entry finished halfway through the run would switch later tests to it at a random test and start a
    build child in each. `test_diskcache` turns it on where it tests it.

    Topics are found in LSA (``PAPER_DASHBOARD_TOPIC_SPACE=lsa``, the operator's setting), as for a
    corpus above 2,000 papers: the suite's hundreds of synthetic corpora would each pay the sentence
    embedding's encoding (a 2,000-paper upload: about 4 CPU-minutes). The tests marked
    ``default_topics`` (`tests/search/test_topicspace.py`, the app's Topics page in
    `tests/ui/test_topic_space_app.py`) run the default, where it is the embedding.
    """
    folder = tmp_path_factory.mktemp("analysis-cache")
    settings = {
        "PAPER_DASHBOARD_CACHE_DIR": str(folder),
        "PAPER_DASHBOARD_CACHE_SMALL": "0",
        "PAPER_DASHBOARD_TOPIC_SPACE": "lsa",
    }
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    yield folder
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def _default_topics_where_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked ``default_topics`` runs the topics' default space (`private_disk_cache` says why
    the others run LSA)."""
    if request.node.get_closest_marker("default_topics") is not None:
        monkeypatch.delenv("PAPER_DASHBOARD_TOPIC_SPACE", raising=False)


@pytest.fixture(autouse=True)
def _library_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test, and every server it starts, keeps its library in a fresh temporary file."""
    path = tmp_path_factory.mktemp("library") / "library.sqlite"
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", str(path))
    return path


# Marks that say a test takes long: the files holding them go first, the more of these marks the earlier.
HEAVY_MARKS = ("browser", "corpora", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heavy files first, each file's tests together and in their order.

    pytest-xdist (``--dist loadfile --no-loadscope-reorder``, pyproject.toml) hands out files in this
    order as workers free up. By default it hands out the files with the most tests first, which put
    the one-test files that run longest (twenty browser sessions, two collections of the suite) at the
    end, where one worker ran them while the other had nothing left to do.
    """
    weight: dict[str, int] = {}
    for item in items:
        marks = {mark.name for mark in item.iter_markers()} & set(HEAVY_MARKS)
        weight[item.nodeid.split("::")[0]] = max(weight.get(item.nodeid.split("::")[0], 0), len(marks))
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])  # stable: keeps the order within
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(BROWSER_RERUN)


# A real-browser test that fails runs once more before it fails the suite. These tests drive a Streamlit
# server and Chromium through timed waits, and a CI machine can be three times slower than a laptop
# while the other worker drives its own browser: two stops' CI runs each lost one such test to a wait
# (docs/operations/reliability.md). A rerun shows as ``R`` and in the ``-ra`` summary, so it is seen;
# a test that fails twice fails the run. Tests without a browser never rerun.
BROWSER_RERUN = pytest.mark.flaky(reruns=1, reruns_delay=5)
