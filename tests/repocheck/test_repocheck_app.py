"""The repository check in the app (AppTest) and the `repo` filter: the action asks the local fake
APIs, the columns, chart and lists appear, cached answers show on a fresh load, the filter selects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.repo_api import FakeRepo, World, serving

from dashboard import corpus
from dashboard.filters import Filters
from dashboard.repocheck.columns import with_repo_columns
from dashboard.repocheck.targets import targets_in
from dashboard.ui import keys, repos

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
LINKS = "src/dashboard/app_pages/links.py"


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture(scope="module")
def seed_papers() -> pd.DataFrame:
    return corpus.load([REPO / "seeds"]).papers


@pytest.fixture
def world(seed_papers: pd.DataFrame) -> World:
    """The seeds' repositories: the first is a placeholder, the second gone, the rest live."""
    world = World()
    for i, target in enumerate(targets_in(seed_papers)):
        repo = FakeRepo(target.repo, size=90_000)
        if i == 0:
            repo = FakeRepo(target.repo, files=["README.md"], readme="Code coming soon!")
        elif i == 1:
            repo.status = 404
        world.add_github(repo)
    return world


@pytest.fixture
def env(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    with serving(world) as environment:
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        yield environment


# The page's tables are expanders drawn once opened (below its charts): these tests read two of them.
OPENED = (keys.LINKS_REPOS_OPEN, keys.LINKS_WAITING_OPEN)


def links_page(query: dict[str, Any] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key in OPENED:
        at.session_state[key] = True
    at.switch_page(LINKS)
    return at.run()


def button(at: AppTest, key: str) -> Any:
    return next(b for b in at.button if b.key == key)


def test_nothing_is_asked_on_a_page_load(world: World, env: dict[str, str]) -> None:
    at = links_page()
    assert not at.exception
    assert world.requests == []
    assert "Check repositories (11 to check)" in button(at, "links.check_repositories").label
    repo_table = next(d.value for d in at.dataframe if "repo_state" in d.value.columns)
    assert set(repo_table["repo_state"]) == {"not checked"}
    # The repository shows as "owner/repo" (the whole address was cut after the owner at 1024 px).
    grid = next(d for d in at.dataframe if "repo_state" in d.value.columns)
    config = json.loads(grid.proto.columns)["repository"]
    assert re.fullmatch(config["type_config"]["display_text"], "https://github.com/owner/repo").group(1) == (
        "owner/repo"
    )


def test_check_runs_and_answers_show_as_columns_chart_and_lists(world: World, env: dict[str, str]) -> None:
    at = links_page()
    button(at, "links.check_repositories").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(world.requests) >= 11
    assert any("Checked 11 repositories" in i.value for i in at.info)
    assert "(0 to check)" in button(at, "links.check_repositories").label
    tables = [d.value for d in at.dataframe]
    repo_table = next(t for t in tables if "repo_state" in t.columns)
    assert set(repo_table["repo_state"]) == {"placeholder", "not found", "live"}
    assert repo_table["repo_stars"].notna().any()
    waiting = next(t for t in tables if "what" in t.columns)
    assert "repository: placeholder" in set(waiting["what"])
    assert list(waiting["year"]) == sorted(waiting["year"])
    # The state chart: states per topic by default.
    assert any(getattr(chart, "proto", None) is not None for chart in at.get("plotly_chart"))

    # A new session shows the cached answers at once, without a request.
    world.requests.clear()
    fresh = links_page()
    assert not fresh.exception and world.requests == []
    repo_table = next(d.value for d in fresh.dataframe if "repo_state" in d.value.columns)
    assert "placeholder" in set(repo_table["repo_state"])

    # The sidebar's repository filter goes through Filters and the URL.
    filtered = links_page({"repo": "placeholder"})
    assert not filtered.exception
    assert any("1 of 57 papers" in m.value for m in filtered.sidebar.markdown)
    select = next(s for s in filtered.sidebar.multiselect if s.key == "sidebar.filter.repo")
    assert select.value == ["placeholder"]


def test_switched_off_asks_nothing(
    world: World, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_REPOCHECK", "off")
    at = links_page()
    assert not at.exception
    assert not any(b.key == "links.check_repositories" for b in at.button)
    assert any("switched off" in c.value for c in at.caption)
    assert world.requests == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"repo": "live"}, ["p1"]),
        ({"repo": ["live", "not_found"]}, ["p1", "p3"]),
        ({"repo": "not_checked"}, ["p2"]),
        ({"repo": "soon"}, ["p1", "p2", "p3", "p4"]),  # not a state: dropped with a notice
        ({}, ["p1", "p2", "p3", "p4"]),
    ],
)
def test_repo_filter(query: dict[str, Any], expected: list[str]) -> None:
    papers = pd.DataFrame(
        {
            "id": ["p1", "p2", "p3", "p4"],
            "code_url": ["https://github.com/a/b", "https://gitlab.com/g/p", "", ""],
            "github_repo": ["a/b", "", "c/d", ""],
        }
    )
    answers = pd.DataFrame(
        {
            "key": ["github.com/a/b", "github.com/c/d"],
            "state": ["live", "not_found"],
            "stars": pd.array([5, None], dtype="Int64"),
            "license": ["MIT", ""],
            "pushed_at": ["2024-01-02", ""],
        }
    )
    table = with_repo_columns(papers, answers)
    assert table["repo_state"].tolist() == ["live", "not_checked", "not_found", ""]
    filters, notices = Filters.from_query(query)
    assert table.loc[filters.mask(table).to_numpy(), "id"].tolist() == expected
    assert Filters.from_query(filters.to_query())[0] == filters
    assert bool(notices) == (query.get("repo") == "soon")
    if filters.repo:
        assert "repository: " in filters.describe() and "repo-" in filters.slug()


def test_a_damaged_cache_degrades_the_feature_not_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "damaged.sqlite"
    cache.write_bytes(b"not a database at all" * 200)
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE", str(cache))
    at = links_page()
    assert not at.exception
    assert any("damaged" in w.value and "cannot read" in w.value for w in at.warning)
    assert any("damaged" in c.value for c in at.sidebar.caption)
    repo_table = next(d.value for d in at.dataframe if "repo_state" in d.value.columns)
    assert set(repo_table["repo_state"]) == {"not checked"}


def test_keys_in_view_are_the_keys_of_the_targets_in_view(seed_papers: pd.DataFrame) -> None:
    # The page counts (and asks the cache about) keys; a check takes the targets, in corpus order.
    digest = "keys-in-view-test"
    rng = np.random.default_rng(3)
    masks = [np.ones(len(seed_papers), dtype=bool), np.zeros(len(seed_papers), dtype=bool)]
    masks += [rng.random(len(seed_papers)) < share for share in (0.1, 0.3, 0.6)]
    for mask in masks:
        keys = repos.keys_in_view(digest, seed_papers, mask)
        targets = repos.targets_in_view(digest, seed_papers, mask)
        assert sorted(keys.tolist()) == sorted(target.key for target in targets)
        assert len(set(keys.tolist())) == len(keys)
    assert len(repos.keys_in_view(digest, seed_papers, masks[0])) == 11  # the button's "11 to check"
