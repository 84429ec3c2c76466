"""Repository checks against a real local HTTP server playing GitHub, GitLab and Hugging Face.

Every state, moves, ETags and 304s, rate limits mid-run and resumed, 5xx then success, malformed,
timed-out and huge answers, odd names, 20 sessions at once on one cache file, and the token kept
out of the database, the logs and the exports.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from support.repo_api import FakeRepo, World, serving

from dashboard import export
from dashboard.repocheck import states
from dashboard.repocheck.checker import Checker
from dashboard.repocheck.client import Client, Settings, api_path
from dashboard.repocheck.store import Store
from dashboard.repocheck.targets import Target, target_of

TOKEN = "ghp_SECRETtoken1234567890abcdef"
GH, GL, HF = "github.com", "gitlab.com", "huggingface.co"


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def env(world: World) -> Iterator[dict[str, str]]:
    with serving(world) as environment:
        yield {**environment, "GITHUB_TOKEN": TOKEN}


def make_checker(env: dict[str, str], cache: Path, **options: object) -> Checker:
    max_requests = options.pop("max_requests", None)
    settings = Settings.from_env(env, **{"timeout": 2.0, "backoff": 0.01, "retries": 2, **options})
    return Checker(Store.open(cache), Client(settings, max_requests=max_requests))  # type: ignore[arg-type]


def answers(cache: Path) -> dict[str, dict[str, object]]:
    with Store.open(cache) as store:
        frame = store.answers()
    return {row["key"]: row for row in frame.to_dict("records")}


# ---------------------------------------------------------------------- every state


def populate(world: World) -> dict[Target, str]:
    """One repository of every state on every host, and the state each must get."""
    expected: dict[Target, str] = {}

    def github(repo: FakeRepo, state: str) -> None:
        world.add_github(repo)
        expected[Target(GH, repo.name)] = state

    github(FakeRepo("o/live"), "live")
    github(FakeRepo("o/big", size=90_000, files=None), "live")  # decided from metadata alone
    github(FakeRepo("o/empty", size=0, files=[]), "empty")
    github(FakeRepo("o/nofiles", size=3, files=[]), "empty")  # "This repository is empty."
    readme_only = FakeRepo("o/readme", files=["README.md", "LICENSE", ".gitignore"], readme="See the paper.")
    github(readme_only, "readme_only")
    github(FakeRepo("o/soon", files=["README.md", "assets/"], readme="# X\n\nThe code WILL BE RELEASED."),
           "placeholder")  # fmt: skip
    github(FakeRepo("o/stay", files=["README.md"], readme="Stay Tuned!"), "placeholder")
    github(FakeRepo("o/old", archived=True), "archived")
    github(FakeRepo("o/renamed", moved_to="neworg/renamed2"), "moved")
    github(FakeRepo("o/gone", status=404), "not_found")
    github(FakeRepo("o/legal", status=451), "not_found")
    github(FakeRepo("o/blocked", status=403), "blocked")
    github(FakeRepo("o/down", status=500), "error")

    def gitlab(repo: FakeRepo, state: str) -> None:
        world.add_gitlab(repo)
        expected[Target(GL, repo.name)] = state

    gitlab(FakeRepo("group/sub/live"), "live")
    gitlab(FakeRepo("group/empty", files=[]), "empty")
    gitlab(FakeRepo("group/soon", files=["README.md"], readme="Under construction"), "placeholder")
    gitlab(FakeRepo("group/readme", files=["README.md", "LICENSE"], readme="hello"), "readme_only")
    gitlab(FakeRepo("group/old", archived=True), "archived")
    gitlab(FakeRepo("group/moved", moved_to="other/moved"), "moved")
    expected[Target(GL, "group/missing")] = "not_found"

    def hub(kind: str, prefix: str, repo: FakeRepo, state: str) -> None:
        world.add_hub(kind, repo)
        expected[Target(HF, prefix + repo.name)] = state

    hub("model", "", FakeRepo("org/model", files=["config.json", "model.safetensors", "README.md"]), "live")
    hub("dataset", "datasets/", FakeRepo("org/data", files=["data/", "README.md"]), "live")
    hub("space", "spaces/", FakeRepo("org/demo", files=["README.md"], readme="coming soon"), "placeholder")
    hub("model", "", FakeRepo("org/bare", files=[]), "empty")
    hub("model", "", FakeRepo("org/off", disabled=True), "blocked")
    expected[Target(HF, "org/nothing")] = "not_found"
    return expected


def test_every_state_on_every_host(world: World, env: dict[str, str], tmp_path: Path) -> None:
    expected = populate(world)
    cache = tmp_path / "cache.sqlite"
    summary = make_checker(env, cache).run(list(expected))
    got = answers(cache)
    assert {t.key: got[t.key]["state"] for t in expected} == {t.key: s for t, s in expected.items()}
    assert set(states.Facts.__dataclass_fields__) >= {"state", "stars", "license"}
    assert summary.checked == len(expected) and summary.left == 0
    assert not summary.complete  # the 500 repository is an error
    assert got["github.com/o/live"]["stars"] == 7 and got["github.com/o/live"]["license"] == "MIT"
    assert got["github.com/o/live"]["pushed_at"] == "2024-06-07"
    assert got["github.com/o/live"]["created_at"] == "2023-02-03"
    assert got["github.com/o/renamed"]["moved_to"] == "neworg/renamed2"
    assert got["gitlab.com/group/moved"]["moved_to"] == "other/moved"
    assert got["github.com/o/down"]["detail"].startswith("HTTP 500")
    assert got["huggingface.co/org/model"]["license"] == "mit"
    # Only what tells states apart is asked: a large live repository costs one request.
    big = [r.raw_path for r in world.requests if "/o/big" in r.raw_path]
    assert big == ["/github/repos/o/big"]
    # The token went to GitHub only, as a Bearer header.
    assert all(
        r.headers.get("authorization") == f"Bearer {TOKEN}" for r in world.requests if r.api == "github"
    )
    assert not any("authorization" in r.headers for r in world.requests if r.api != "github")


def test_moved_repository_is_rechecked_under_its_new_name(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    world.add_github(FakeRepo("o/renamed", moved_to="neworg/renamed2"))
    world.add_github(FakeRepo("neworg/renamed2"))
    cache = tmp_path / "cache.sqlite"
    target = Target(GH, "o/renamed")
    make_checker(env, cache).run([target])
    first = [r.status for r in world.requests]
    assert first[0] == 301
    world.requests.clear()
    checker = make_checker(env, cache)
    checker.max_age_days = 0
    checker.run([target])
    assert [r.raw_path for r in world.requests][0] == "/github/repos/neworg/renamed2"
    assert answers(cache)[target.key]["state"] == "moved"


# ---------------------------------------------------------------------- ETags, freshness


def test_recheck_is_conditional_and_304_reuses_the_answer(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    world.add_github(FakeRepo("o/readme", files=["README.md"], readme="Code coming soon"))
    world.add_github(FakeRepo("o/live"))
    world.budget = 100
    cache = tmp_path / "cache.sqlite"
    targets = [Target(GH, "o/readme"), Target(GH, "o/live")]
    make_checker(env, cache).run(targets)
    spent = 100 - (world.budget or 0)
    assert spent == 5  # readme: repo, contents, readme; live: repo, contents
    before = answers(cache)

    world.requests.clear()
    fresh = make_checker(env, cache)
    assert fresh.run(targets).fresh == 2
    assert world.requests == []  # answered less than 7 days ago: nothing asked

    stale = make_checker(env, cache)
    stale.max_age_days = 0
    summary = stale.run(targets)
    assert summary.checked == 2
    assert len(world.requests) == 5
    assert all("if-none-match" in r.headers and r.status == 304 for r in world.requests)
    assert world.budget == 100 - spent  # 304s cost nothing
    assert stale.client.counts.not_modified == 5
    after = answers(cache)
    for key in before:
        assert {k: v for k, v in after[key].items() if k != "checked_at"} == {
            k: v for k, v in before[key].items() if k != "checked_at"
        }
        assert after[key]["checked_at"] > before[key]["checked_at"]


def test_changed_repository_gets_a_new_answer(world: World, env: dict[str, str], tmp_path: Path) -> None:
    repo = world.add_github(FakeRepo("o/r", files=["README.md"], readme="coming soon"))
    cache = tmp_path / "cache.sqlite"
    checker = make_checker(env, cache)
    checker.run([Target(GH, "o/r")])
    assert answers(cache)["github.com/o/r"]["state"] == "placeholder"
    repo.files = ["README.md", "main.py"]
    repo.stars = 99
    checker.max_age_days = 0
    checker.run([Target(GH, "o/r")])
    got = answers(cache)["github.com/o/r"]
    assert (got["state"], got["stars"]) == ("live", 99)


# ---------------------------------------------------------------------- rate limits, retries, failures


def test_rate_limit_mid_run_stops_cleanly_and_resumes(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    names = [f"o/big{i}" for i in range(12)]
    for name in names:
        world.add_github(FakeRepo(name, size=90_000))
    world.budget = 5
    cache = tmp_path / "cache.sqlite"
    targets = [Target(GH, n) for n in names]
    checker = make_checker(env, cache, max_in_flight=2)
    summary = checker.run(targets)
    assert summary.checked == 5 and summary.left == 7
    assert "rate limit" in summary.stopped_because and summary.resume_at is not None
    assert len(answers(cache)) == 5
    # After the first 403, no request is wasted on an API known to be spent.
    assert sum(1 for r in world.requests if r.status == 403) <= 2
    with Store.open(cache) as store:
        assert store.limits()["github"][0] == 0

    world.budget = None  # the limit has reset
    world.requests.clear()
    resumed = make_checker(env, cache).run(targets)
    assert (resumed.fresh, resumed.checked, resumed.left) == (5, 7, 0)
    assert len(world.requests) == 7
    assert sorted(answers(cache)) == sorted(t.key for t in targets)


def test_retry_after_is_waited_for(world: World, env: dict[str, str], tmp_path: Path) -> None:
    world.add_github(FakeRepo("o/big", size=90_000))
    world.retry_after_once = True
    checker = make_checker(env, tmp_path / "c.sqlite")
    summary = checker.run([Target(GH, "o/big")])
    assert summary.states["live"] == 1
    assert checker.client.counts.waits >= 1.0
    assert [r.status for r in world.requests] == [403, 200]


def test_a_bare_429_is_a_rate_limit_not_an_error(world: World, env: dict[str, str], tmp_path: Path) -> None:
    # No X-RateLimit-* and no Retry-After: GitHub's rule is to wait at least a minute, which is
    # longer than this run may wait, so the run stops as rate limited and the repository stays unchecked.
    world.add_github(FakeRepo("o/busy", status=429))
    cache = tmp_path / "c.sqlite"
    summary = make_checker(env, cache, max_wait=5.0).run([Target(GH, "o/busy")])
    assert "rate limit" in summary.stopped_because and summary.resume_at is not None
    assert (summary.checked, summary.left) == (0, 1)
    assert "github.com/o/busy" not in answers(cache)  # never cached as an error
    assert [r.status for r in world.requests] == [429]


def test_server_error_then_success(world: World, env: dict[str, str], tmp_path: Path) -> None:
    world.add_github(FakeRepo("o/flaky", size=90_000, fail_first=2))
    checker = make_checker(env, tmp_path / "c.sqlite", retries=3)
    assert checker.run([Target(GH, "o/flaky")]).states == {"live": 1}
    assert [r.status for r in world.requests] == [502, 502, 200]
    assert checker.client.counts.retries == 2


@pytest.mark.parametrize(
    ("repo", "reason"),
    [
        (FakeRepo("o/x", fail_first=99), "HTTP 502 after 3 tries"),
        (FakeRepo("o/x", malformed=True), "malformed answer"),
        (FakeRepo("o/x", slow=1.0), "timed out after 0.3 s"),
        (FakeRepo("o/x", huge="length"), "answer larger than"),
        (FakeRepo("o/x", huge="stream"), "answer larger than"),
    ],
    ids=["5xx-forever", "malformed", "timeout", "huge-with-length", "huge-streamed"],
)
def test_failures_become_errors_with_their_reason(
    world: World, env: dict[str, str], tmp_path: Path, repo: FakeRepo, reason: str
) -> None:
    world.add_github(repo)
    world.add_github(FakeRepo("o/fine", size=90_000))
    cache = tmp_path / "c.sqlite"
    checker = make_checker(env, cache, timeout=0.3, max_body=1_000_000)
    summary = checker.run([Target(GH, "o/x"), Target(GH, "o/fine")])
    got = answers(cache)
    assert got["github.com/o/x"]["state"] == "error"
    assert reason in str(got["github.com/o/x"]["detail"])
    assert got["github.com/o/fine"]["state"] == "live"  # one broken repository never stops the rest
    assert summary.left == 0 and not summary.complete
    # Errors are never fresh: the next run asks again.
    assert checker.pending([Target(GH, "o/x"), Target(GH, "o/fine")]) == [Target(GH, "o/x")]


def test_budget_of_requests(world: World, env: dict[str, str], tmp_path: Path) -> None:
    for i in range(6):
        world.add_github(FakeRepo(f"o/big{i}", size=90_000))
    checker = make_checker(env, tmp_path / "c.sqlite", max_requests=3, max_in_flight=1)
    summary = checker.run([Target(GH, f"o/big{i}") for i in range(6)])
    assert (summary.checked, summary.left) == (3, 3)
    assert "budget" in summary.stopped_because
    assert len(world.requests) == 3


# ---------------------------------------------------------------------- names and paths


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/Owner/Repo/tree/main/src", Target(GH, "Owner/Repo")),
        ("https://github.com/o/r.git", Target(GH, "o/r")),
        ("https://gitlab.com/group/sub/proj/-/tree/main", Target(GL, "group/sub/proj")),
        ("https://gitlab.com/group/sub/proj", Target(GL, "group/sub/proj")),
        ("https://gitlab.com/group/proj/tree/master/src", Target(GL, "group/proj")),
        ("https://huggingface.co/spaces/org/demo", Target(HF, "spaces/org/demo")),
        ("https://huggingface.co/datasets/org/data/viewer", Target(HF, "datasets/org/data")),
        ("https://huggingface.co/org/model", Target(HF, "org/model")),
        ("https://github.com/o/..", None),
        ("https://github.com/o", None),
        ("https://example.com/o/r", None),
        ("https://github.com.evil.org/o/r", None),
        ("https://api.github.com@evil.org/o/r", None),
    ],
)
def test_targets_of_urls(url: str, expected: Target | None) -> None:
    assert target_of(url) == expected


def test_odd_names_are_encoded_and_stay_inside_the_api(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    odd = "we%rd#name?x=1&y"
    world.add_github(FakeRepo(f"o/{odd}", size=90_000))
    cache = tmp_path / "c.sqlite"
    checker = make_checker(env, cache)
    summary = checker.run([Target(GH, f"o/{odd}"), Target(GH, "o/%2e%2e"), Target(GL, "a/%2F..%2F..%2Fetc")])
    assert answers(cache)[f"github.com/o/{odd}".lower()]["state"] == "live"
    paths = [r.raw_path for r in world.requests]
    assert "/github/repos/o/we%25rd%23name%3Fx%3D1%26y" in paths
    for request in world.requests:
        assert request.raw_path.startswith(("/github/", "/gitlab/", "/hf/"))
        assert "/../" not in request.raw_path and "?" not in request.raw_path.replace("?license=true", "")
    assert summary.checked == 3
    with pytest.raises(ValueError):
        api_path("repos", "..", "x")


def test_redirect_off_the_api_is_not_followed(world: World, env: dict[str, str], tmp_path: Path) -> None:
    repo = world.add_github(FakeRepo("o/r", moved_to="x/y"))
    repo.repo_id = 7
    world.by_id.clear()  # the 301 now points at nothing we serve
    settings = Settings.from_env(env, timeout=2.0)
    client = Client(settings)
    reply = client.get("github", api_path("repos", "o", "r"))
    assert reply.status == 404  # followed within the API only
    outside = Settings.from_env({**env, "GITHUB_API_URL": env["GITHUB_API_URL"] + "/repositories/999"})
    assert outside.bases["github"].endswith("/repositories/999")


# ---------------------------------------------------------------------- many sessions, one file


def test_twenty_sessions_at_once_on_one_cache(world: World, env: dict[str, str], tmp_path: Path) -> None:
    world.auto = True
    cache = tmp_path / "shared.sqlite"
    targets = [Target(GH, f"owner{i % 7}/repo{i}") for i in range(60)]
    failures: list[BaseException] = []
    summaries = []

    def session(n: int) -> None:
        try:
            mine = targets[n % 3 :] + targets[: n % 3]  # every session wants all, in its own order
            summaries.append(make_checker(env, cache, max_in_flight=3).run(mine))
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    assert len(summaries) == 20 and all(s.left == 0 for s in summaries)
    connection = sqlite3.connect(cache)
    keys = [row[0] for row in connection.execute("SELECT key FROM answers")]
    assert sorted(keys) == sorted(t.key for t in targets)  # nothing lost, nothing twice
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    got = dict(connection.execute("SELECT key, state FROM answers"))
    assert all(got[t.key] in states.REPO_STATES and got[t.key] != "error" for t in targets)
    # Each repository was asked about by some session; the cache answered the others.
    assert sum(s.checked for s in summaries) >= len(targets)
    connection.close()


# ---------------------------------------------------------------------- the token stays secret


def test_token_never_in_database_logs_or_exports(
    world: World, env: dict[str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    populate(world)
    cache = tmp_path / "c.sqlite"
    caplog.set_level(logging.DEBUG)
    checker = make_checker(env, cache)
    summary = checker.run(list(populate(World())))
    assert TOKEN not in repr(checker.client.settings) and TOKEN not in repr(summary)
    checker.store.close()
    for path in tmp_path.iterdir():
        assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in caplog.text
    with Store.open(cache) as store:
        frame = store.answers()
    for fmt in ("csv", "jsonl", "parquet"):
        assert TOKEN.encode() not in export.to_bytes(frame, fmt)
    assert any(r.headers.get("authorization") for r in world.requests)  # it was sent, to the API


# ---------------------------------------------------------------------- the store


def test_store_migrates_and_keeps_answers_through_a_reopen(tmp_path: Path) -> None:
    cache = tmp_path / "deep" / "c.sqlite"
    with Store.open(cache) as store:
        assert store.schema_version() == 2
        store.save_answer({"key": "github.com/o/r", "host": GH, "repo": "o/r", "state": "live", "stars": 3,
                           "license": "", "created_at": "", "pushed_at": "", "moved_to": "", "detail": "",
                           "checked_at": 1.0})  # fmt: skip
    with Store.open(cache) as store:
        assert store.schema_version() == 2
        assert store.answers()["state"].tolist() == ["live"]
    readonly = Store.open_existing(cache)
    assert readonly is not None and readonly.generation() == (1, 1.0)
    readonly.close()
    assert Store.open_existing(tmp_path / "absent.sqlite") is None
    assert not (tmp_path / "absent.sqlite").exists()


def test_store_write_is_all_or_nothing(tmp_path: Path) -> None:
    from dashboard.repocheck.store import Stored

    cache = tmp_path / "c.sqlite"
    with Store.open(cache) as store:
        bad = {"key": "k", "host": GH, "repo": "o/r", "state": None, "checked_at": 1.0}  # NOT NULL fails
        with pytest.raises(sqlite3.IntegrityError):
            store.save_answer(bad, [("github", "/repos/o/r", Stored('"e"', 200, b"{}"))])
        assert store.response("github", "/repos/o/r") is None
        assert len(store.answers()) == 0


def test_answers_frame_types(tmp_path: Path) -> None:
    with Store.open(tmp_path / "c.sqlite") as store:
        frame = store.answers()
    assert isinstance(frame, pd.DataFrame) and str(frame["stars"].dtype) == "Int64"


def test_an_old_schema_is_migrated_in_place(tmp_path: Path) -> None:
    from dashboard.repocheck.store import _migration_1

    cache = tmp_path / "old.sqlite"
    connection = sqlite3.connect(cache)
    connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    _migration_1(connection)
    connection.execute("INSERT INTO schema_version VALUES (1)")
    connection.execute(
        "INSERT INTO answers (key, host, repo, state, checked_at) VALUES (?, ?, 'o/r', 'live', 5)",
        ("github.com/o/r", GH),
    )
    connection.commit()
    connection.close()
    with Store.open(cache) as store:
        assert store.schema_version() == 2
        assert store.answers()["key"].tolist() == ["github.com/o/r"]
        store.save_limits({"github": (10, 99.0)})
        assert store.limits() == {"github": (10, 99.0)}


def test_a_damaged_cache_is_reported_not_raised(tmp_path: Path) -> None:
    from dashboard.repocheck.columns import read_answers
    from dashboard.repocheck.store import StoreError

    cache = tmp_path / "bad.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    answers, problem = read_answers(cache)
    assert len(answers) == 0 and "bad.sqlite" in problem
    with pytest.raises(StoreError, match="bad.sqlite"):
        Store.open(cache)


def test_progress_bar_draws_only_on_a_terminal() -> None:
    import io

    from dashboard.cli.repocheck import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = ProgressBar(stream, width=10)
        bar(0, 4, None, None)
        bar(4, 4, Target(GH, "o/r"), states.Facts("live"))
        bar.close()
    assert "[##########] 4/4  live 1" in terminal.getvalue()
    assert pipe.getvalue() == ""
