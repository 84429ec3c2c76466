"""Hostile API answers and slow APIs (issue 56, items 3 and 4), against the real local fake server.

A malformed answer is one repository's ``error`` with a reason, never the run's end; every number and
header is bounded before it is kept; a bad row already in the cache is skipped and reported, never
raised. A request has one deadline over all its reads, tries and waits, and a run has one too.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.repo_api import FakeRepo, World, serving

from dashboard.repocheck.checker import Checker
from dashboard.repocheck.client import Client, Settings
from dashboard.repocheck.columns import read_answers
from dashboard.repocheck.store import Store
from dashboard.repocheck.targets import Target

GH, GL, HF = "github.com", "gitlab.com", "huggingface.co"


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def env(world: World) -> Iterator[dict[str, str]]:
    with serving(world) as environment:
        yield environment


def make_checker(env: dict[str, str], cache: Path, **options: object) -> Checker:
    settings = Settings.from_env(env, **{"timeout": 2.0, "backoff": 0.01, "retries": 2, **options})
    return Checker(Store.open(cache), Client(settings))


def answers(cache: Path) -> dict[str, dict[str, object]]:
    with Store.open(cache) as store:
        frame = store.answers()
    return {row["key"]: row for row in frame.to_dict("records")}


def repo_body(**fields: object) -> bytes:
    body: dict[str, object] = {"full_name": "o/x", "stargazers_count": 3, "size": 90_000, "archived": False}
    body.update(fields)
    return json.dumps(body).encode()


OK = {"X-RateLimit-Remaining": "4000"}
LIMITED = {"X-RateLimit-Remaining": "0"}

HOSTILE = {
    "stars-beyond-64-bits": ((200, OK, repo_body(stargazers_count=2**70)), "stargazers_count"),
    "stars-negative": ((200, OK, repo_body(stargazers_count=-5)), "stargazers_count"),
    "nested-brackets": ((200, OK, b"[" * 100_000 + b"]" * 100_000), "malformed answer"),
    "nested-objects": ((200, OK, b'{"a":' * 100_000 + b"1" + b"}" * 100_000), "malformed answer"),
    "reset-inf": ((200, {**OK, "X-RateLimit-Reset": "inf"}, repo_body()), "X-RateLimit-Reset"),
    "reset-1e18": ((200, {**OK, "X-RateLimit-Reset": "1e18"}, repo_body()), "X-RateLimit-Reset"),
    "limited-reset-1e18": ((403, {**LIMITED, "X-RateLimit-Reset": "1e18"}, b"{}"), "X-RateLimit-Reset"),
    "retry-after-1e999": ((403, {"Retry-After": "1e999"}, b"{}"), "Retry-After"),
    "retry-after-nan": ((429, {"Retry-After": "nan"}, b"{}"), "Retry-After"),
    "remaining-1e30": ((200, {"X-RateLimit-Remaining": "1e30"}, repo_body()), "X-RateLimit-Remaining"),
    "name-without-slash": ((200, OK, repo_body(full_name="acme")), "full_name"),
    "name-dot-dot": ((200, OK, repo_body(full_name="acme/..")), "full_name"),
    "name-newline": ((200, OK, repo_body(full_name="acme/x\ny")), "full_name"),
    "name-three-parts": ((200, OK, repo_body(full_name="a/b/c")), "full_name"),
}


@pytest.mark.parametrize(("raw", "reason"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_answer_is_one_error_with_a_reason(
    world: World, env: dict[str, str], tmp_path: Path, raw: tuple[int, dict[str, str], bytes], reason: str
) -> None:
    world.add_github(FakeRepo("o/x", raw=raw))
    world.add_github(FakeRepo("o/fine", size=90_000))
    cache = tmp_path / "c.sqlite"
    targets = [Target(GH, "o/x"), Target(GH, "o/fine")]
    checker = make_checker(env, cache)
    summary = checker.run(targets)
    got = answers(cache)
    assert got["github.com/o/x"]["state"] == "error", got["github.com/o/x"]
    assert reason in str(got["github.com/o/x"]["detail"])
    assert got["github.com/o/fine"]["state"] == "live"  # the run went on
    assert summary.left == 0 and summary.checked == 2
    # Nothing out of bounds was kept: the limits the cache holds are real numbers and times.
    with Store.open(cache) as store:
        for remaining, reset_at in store.limits().values():
            assert remaining is None or 0 <= remaining <= 10**9
            assert reset_at is None or reset_at < time.time() + 8 * 86400
        assert store.skipped == []
    # And the next run (everything asked again) ends the same way, without a crash.
    checker.max_age_days = 0
    again = checker.run(targets)
    assert again.checked == 2 and answers(cache)["github.com/o/x"]["state"] == "error"


@pytest.mark.parametrize(
    ("add", "target", "moved_name"),
    [
        ("gitlab", Target(GL, "g/p"), "g/.."),
        ("gitlab", Target(GL, "g/p"), "g/p\nx"),
        ("hub", Target(HF, "org/m"), "justone"),
    ],
)
def test_a_moved_name_that_is_no_repository_is_an_error_not_moved(
    world: World, env: dict[str, str], tmp_path: Path, add: str, target: Target, moved_name: str
) -> None:
    if add == "gitlab":
        body = {"path_with_namespace": moved_name, "star_count": 1, "archived": False, "empty_repo": False}
        world.add_gitlab(FakeRepo("g/p", raw=(200, {}, json.dumps(body).encode())))
    else:
        body = {"id": moved_name, "likes": 1, "siblings": [{"rfilename": "model.bin"}]}
        world.add_hub("model", FakeRepo("org/m", raw=(200, {}, json.dumps(body).encode())))
    cache = tmp_path / "c.sqlite"
    make_checker(env, cache).run([target])
    got = answers(cache)[target.key]
    assert got["state"] == "error" and got["moved_to"] == ""
    assert "malformed answer" in str(got["detail"])


# ---------------------------------------------------------------------- bad rows already in the cache


def damaged_cache(path: Path) -> Path:
    """A cache with good rows and rows no version of the checker writes (an edited or foreign file)."""
    with Store.open(path) as store:
        store.save_answer({"key": "github.com/o/good", "host": GH, "repo": "o/good", "state": "live",
                           "stars": 3, "license": "MIT", "created_at": "", "pushed_at": "2024-01-02",
                           "moved_to": "", "detail": "", "checked_at": time.time()})  # fmt: skip
    connection = sqlite3.connect(path)
    rows = [
        ("github.com/o/huge", GH, "o/huge", "live", 1e30, time.time(), ""),
        ("github.com/o/text", GH, "o/text", "live", "many", time.time(), ""),
        ("github.com/o/half", GH, "o/half", "live", 2.5, time.time(), ""),
        ("github.com/o/none", GH, "o/none", "not_found", None, time.time(), ""),
        ("github.com/o/state", GH, "o/state", "sort of there", 1, time.time(), ""),
        ("github.com/o/when", GH, "o/when", "live", 1, 1e300, ""),
        ("github.com/o/moved", GH, "o/moved", "moved", 1, time.time() - 30 * 86400, "acme/.."),
        ("github.com/o/nl", GH, "o/nl", "moved", 1, time.time(), "acme/x\ny"),
    ]
    connection.executemany(
        "INSERT INTO answers (key, host, repo, state, stars, checked_at, moved_to) VALUES (?,?,?,?,?,?,?)",
        rows,
    )
    connection.execute("INSERT INTO limits VALUES ('github', 10, 1e18, 0)")
    connection.execute("INSERT INTO limits VALUES ('gitlab', 1e30, 5.0, 0)")
    connection.execute("INSERT INTO limits VALUES ('huggingface', 7, 100.0, 0)")
    connection.commit()
    connection.close()
    return path


def test_bad_stored_rows_are_skipped_and_reported(tmp_path: Path) -> None:
    cache = damaged_cache(tmp_path / "edited.sqlite")
    frame, problem = read_answers(cache)
    assert frame["key"].tolist() == ["github.com/o/good", "github.com/o/none"]
    assert frame["stars"].tolist()[0] == 3 and frame["stars"].isna().tolist() == [False, True]
    assert "skipped 7 unreadable rows" in problem and "edited.sqlite" in problem and "o/huge" in problem
    store = Store.open_existing(cache)
    assert store is not None
    with store:
        assert store.limits() == {"huggingface": (7, 100.0)}
        assert any("github" in line and "reset_at" in line for line in store.skipped)


def test_bad_stored_rows_never_raise_in_the_limits_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard.ui import repos

    cache = damaged_cache(tmp_path / "edited.sqlite")
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE", str(cache))
    line = repos.stored_limits()
    assert "Hugging Face" in line and "skipped" in line
    # Even given straight to it, a limit that is no time is left out, not raised.
    assert repos.limits_line({"github": (5, 1e18), "gitlab": (3, float("inf"))}) == ""


def test_a_bad_moved_row_is_rechecked_under_its_first_name(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    cache = damaged_cache(tmp_path / "edited.sqlite")
    world.add_github(FakeRepo("o/moved", size=90_000))
    world.add_github(FakeRepo("o/nl", size=90_000))
    checker = make_checker(env, cache)
    checker.max_age_days = 0
    summary = checker.run([Target(GH, "o/moved"), Target(GH, "o/nl")])
    assert summary.states == {"live": 2}
    assert sorted(r.raw_path for r in world.requests) == ["/github/repos/o/moved", "/github/repos/o/nl"]


def test_the_links_page_shows_a_damaged_row_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE", str(damaged_cache(tmp_path / "edited.sqlite")))
    at = AppTest.from_file(str(repo / "app.py"), default_timeout=180)
    at.switch_page("src/dashboard/app_pages/links.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("skipped" in c.value for c in at.caption)


# ---------------------------------------------------------------------- slow answers


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "status-and-headers"])
def test_a_trickling_answer_is_cut_at_the_request_deadline(
    world: World, env: dict[str, str], tmp_path: Path, headers_too: bool
) -> None:
    # Each byte comes well within the read timeout, so only a deadline over the whole request cuts it.
    world.add_github(FakeRepo("o/x", trickle=0.25, trickle_headers=headers_too))
    cache = tmp_path / "c.sqlite"
    checker = make_checker(env, cache, timeout=2.0, deadline=1.0, retries=0)
    checker.run([Target(GH, "o/x")])
    got = answers(cache)["github.com/o/x"]
    assert got["state"] == "error"
    assert "request deadline of 1 s" in str(got["detail"])


def test_retry_after_on_every_answer_stops_at_the_deadline(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    world.retry_after_always = "1"
    for i in range(5):
        world.add_github(FakeRepo(f"o/r{i}", size=90_000))
    cache = tmp_path / "c.sqlite"
    checker = make_checker(env, cache, deadline=1.5, retries=5, max_in_flight=1)
    summary = checker.run([Target(GH, f"o/r{i}") for i in range(5)])
    # One wait fits the deadline, the second does not: the API is rate limited, the run says so and
    # asks nothing more of it.
    assert summary.left == 5 and summary.checked == 0
    assert "rate limit" in summary.stopped_because
    assert checker.client.counts.waits <= 1.5
    assert len(world.requests) == 2
    assert answers(cache) == {}


def test_the_run_stops_at_its_deadline_and_keeps_what_it_learned(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    for i in range(12):
        world.add_github(FakeRepo(f"o/r{i}", size=90_000, slow=0.3))
    cache = tmp_path / "c.sqlite"
    checker = make_checker(env, cache, run_deadline=1.0, max_in_flight=1)
    summary = checker.run([Target(GH, f"o/r{i}") for i in range(12)])
    assert 0 < summary.checked < 12 and summary.left == 12 - summary.checked
    assert "deadline of 1 s" in summary.stopped_because
    assert set(summary.states) == {"live"}  # the cut request is left to do, not kept as an error
    assert len(answers(cache)) == summary.checked


def test_deadlines_come_from_the_environment_and_bad_ones_are_refused() -> None:
    settings = Settings.from_env(
        {"PAPER_DASHBOARD_REQUEST_DEADLINE": "7", "PAPER_DASHBOARD_RUN_DEADLINE": "90"}
    )
    assert (settings.deadline, settings.run_deadline) == (7.0, 90.0)
    assert Settings.from_env({}).run_deadline == 3600.0
    for bad in ("0", "-1", "inf", "nan", "soon", "1e999"):
        with pytest.raises(ValueError, match="PAPER_DASHBOARD_RUN_DEADLINE"):
            Settings.from_env({"PAPER_DASHBOARD_RUN_DEADLINE": bad})


def test_parse_keeps_the_sound_answers_of_a_cache_with_bad_rows(tmp_path: Path) -> None:
    import pandas as pd

    from dashboard.repocheck.columns import with_cached_answers

    cache = damaged_cache(tmp_path / "edited.sqlite")
    papers = pd.DataFrame({"id": ["a", "b"], "github_repo": ["o/good", "o/huge"]})
    table = with_cached_answers(papers, {"PAPER_DASHBOARD_CACHE": str(cache)})
    assert table["repo_state"].tolist() == ["live", "not_checked"]
    assert table["repo_stars"].tolist()[0] == 3
