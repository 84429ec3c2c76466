"""``paper-dashboard check-code`` end to end against the local fake APIs: summary, --out, exit codes,
resuming, Ctrl-C and a killed process."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from support.repo_api import FakeRepo, World, serving

from dashboard.cli import main as cli
from dashboard.cli.repocheck import OUT_COLUMNS

REPO = Path(__file__).resolve().parents[2]
TOKEN = "ghp_CLIsecret0987654321"


def write_corpus(path: Path, n: int) -> Path:
    """A JSONL corpus of ``n`` papers, each linking its own GitHub repository (and a few others)."""
    lines = []
    for i in range(n):
        abstract = (
            f"We propose method {i} for graphs. Code is available at https://github.com/lab{i % 5}/method{i}."
        )
        if i % 4 == 0:
            abstract += f" A demo: https://huggingface.co/spaces/lab/demo{i}."
        if i % 7 == 0:
            abstract += f" Mirror: https://gitlab.com/group/sub/method{i}."
        lines.append(json.dumps({"title": f"Paper {i}", "abstract": abstract, "year": 2024, "venue": "ICML"}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def world() -> World:
    return World(auto=True)


@pytest.fixture
def env(world: World, tmp_path: Path) -> Iterator[dict[str, str]]:
    with serving(world) as environment:
        yield {**environment, "GITHUB_TOKEN": TOKEN, "PAPER_DASHBOARD_CACHE": str(tmp_path / "cache.sqlite")}


def run_cli(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *args: str) -> int:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return cli.main(["check-code", *args])


def test_check_code_writes_every_repository_and_exits_0(
    world: World, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    corpus = write_corpus(tmp_path / "papers.jsonl", 20)
    world.hub.update(
        {("space", f"lab/demo{i}"): FakeRepo(f"lab/demo{i}", files=["app.py"]) for i in range(0, 20, 4)}
    )
    world.gitlab.update({f"group/sub/method{i}": FakeRepo(f"group/sub/method{i}") for i in range(0, 20, 7)})
    out = tmp_path / "repos.csv"
    status = run_cli(monkeypatch, env, str(corpus), "--out", str(out))
    err = capsys.readouterr().err
    rows = pd.read_csv(out, keep_default_na=False)
    assert list(rows.columns) == list(OUT_COLUMNS)
    assert len(rows) == 20 + 5 + 3
    assert set(rows["host"]) == {"github.com", "huggingface.co", "gitlab.com"}
    assert "not_checked" not in set(rows["state"])
    assert "20 checked now" not in err and "28 repositories" in err and "live" in err
    assert status == (1 if "error" in set(rows["state"]) else 0)
    assert TOKEN not in err and TOKEN not in out.read_text()

    # A second run asks nothing: every answer is fresh.
    world.requests.clear()
    out2 = tmp_path / "repos.parquet"
    assert run_cli(monkeypatch, env, str(corpus), "--out", str(out2)) == status
    assert world.requests == []
    again = pd.read_parquet(out2)
    assert again["state"].tolist() == rows["state"].tolist()
    assert str(again["stars"].dtype) == "Int64"


def test_budget_leaves_some_and_exits_1_then_resumes(
    world: World, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    corpus = write_corpus(tmp_path / "papers.jsonl", 10)
    for i in range(10):
        world.add_github(FakeRepo(f"lab{i % 5}/method{i}", size=90_000))
    world.hub.update(
        {("space", f"lab/demo{i}"): FakeRepo(f"lab/demo{i}", files=["app.py"]) for i in range(0, 10, 4)}
    )
    world.gitlab.update(
        {f"group/sub/method{i}": FakeRepo(f"group/sub/method{i}", files=["a.py"]) for i in (0, 7)}
    )
    out = tmp_path / "r.jsonl"
    assert run_cli(monkeypatch, env, str(corpus), "--max-requests", "4", "--out", str(out)) == 1
    err = capsys.readouterr().err
    assert "budget" in err and "run the same command again" in err
    states = [json.loads(line)["state"] for line in out.read_text().splitlines()]
    assert "not_checked" in states
    assert run_cli(monkeypatch, env, str(corpus), "--out", str(out)) == 0
    states = [json.loads(line)["state"] for line in out.read_text().splitlines()]
    assert set(states) == {"live"}


def test_rate_limit_exits_1_and_says_when(
    world: World, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    corpus = write_corpus(tmp_path / "papers.jsonl", 8)
    world.budget = 3
    assert run_cli(monkeypatch, env, str(corpus), "--offline") == 1  # nothing asked yet
    assert world.requests == []
    assert run_cli(monkeypatch, env, str(corpus)) == 1
    err = capsys.readouterr().err
    assert "rate limit" in err and "UTC" in err


@pytest.mark.parametrize(
    "args",
    [["--max-age", "-1"], ["--max-requests", "0"], ["--out", "x.xlsx"], ["--out", "x.doc"], [],
     ["--deadline", "0"], ["--deadline", "inf"]],
    ids=["negative-age", "zero-requests", "xlsx", "unknown-format", "no-path", "zero-deadline",
         "inf-deadline"],
)  # fmt: skip
def test_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    paths = [] if not args else [str(write_corpus(tmp_path / "p.jsonl", 1))]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check-code", *paths, *args])
    assert exit_info.value.code == 2


def test_hostile_answers_are_errors_and_the_summary_says_the_deadlines(
    world: World, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Each of these once ended the whole run in a traceback (issue 56).
    corpus = write_corpus(tmp_path / "papers.jsonl", 5)
    body = {"full_name": "lab0/method0", "stargazers_count": 2**70, "size": 90_000}
    world.add_github(FakeRepo("lab0/method0", raw=(200, {}, json.dumps(body).encode())))
    world.add_github(FakeRepo("lab1/method1", raw=(200, {}, b"[" * 100_000)))
    world.add_github(FakeRepo("lab2/method2", raw=(200, {"X-RateLimit-Reset": "1e18"}, b"{}")))
    world.add_github(FakeRepo("lab3/method3", raw=(403, {"Retry-After": "1e999"}, b"{}")))
    status = run_cli(
        monkeypatch, {**env, "PAPER_DASHBOARD_RUN_DEADLINE": "120"}, str(corpus), "--max-age", "0"
    )
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert "error" in err and "0 left" in err
    assert "deadlines: 60 s per request, 120 s per run; rate-limit waits of at most 30 s" in err
    with sqlite3.connect(tmp_path / "cache.sqlite") as connection:
        details = dict(connection.execute("SELECT repo, detail FROM answers WHERE state = 'error'"))
    assert set(details) >= {"lab0/method0", "lab1/method1", "lab2/method2", "lab3/method3"}
    assert "X-RateLimit-Reset" in details["lab2/method2"] and "Retry-After" in details["lab3/method3"]
    # A row edited into the cache is skipped and reported; the run still ends normally.
    with sqlite3.connect(tmp_path / "cache.sqlite") as connection:
        connection.execute("UPDATE answers SET stars = 1e30, checked_at = 1e300 WHERE repo = 'lab4/method4'")
    status = run_cli(monkeypatch, env, str(corpus), "--offline")
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert "skipped 1 unreadable row of the repository cache" in err and "lab4/method4" in err


def _start(corpus: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    process_env = {**os.environ, **env, "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen(
        [sys.executable, "-m", "dashboard.cli.main", "check-code", str(corpus)],
        env=process_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        # Ctrl-C as in a terminal, even under a parent that ignores SIGINT (a job started in the
        # background inherits SIG_IGN, and Python then never raises KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


def _answered(cache: Path) -> int:
    if not cache.exists():
        return 0
    # A short wait for a lock: a look that waited for the whole run to end saw every answer kept
    with sqlite3.connect(cache, timeout=0.5) as connection:
        try:
            return int(connection.execute("SELECT count(*) FROM answers").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_interrupted_run_keeps_answers_and_the_next_run_finishes(
    world: World, env: dict[str, str], tmp_path: Path, how: signal.Signals
) -> None:
    corpus = write_corpus(tmp_path / "papers.jsonl", 60)
    # Slow enough that the run is still going when the signal comes, on a loaded machine too (at 0.05 s an
    # answer, a CI run once answered all 84 between two looks at the cache): 8 at a time, 5 s at least
    world.delay = 0.5
    cache = Path(env["PAPER_DASHBOARD_CACHE"])
    process = _start(corpus, env)
    deadline = time.monotonic() + 60
    while _answered(cache) < 5 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(how)
    _, err = process.communicate(timeout=60)
    kept = _answered(cache)
    assert 5 <= kept < 60 + 15 + 9
    if how == signal.SIGINT:
        assert process.returncode == 1 and b"interrupted" in err
    with sqlite3.connect(cache) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # Each answer is whole: its row has a state and a check time.
        assert (
            connection.execute(
                "SELECT count(*) FROM answers WHERE state = '' OR checked_at IS NULL"
            ).fetchone()[0]
            == 0
        )
    world.delay = 0.0
    asked_before = len(world.requests)
    finisher = _start(corpus, env)
    _, err = finisher.communicate(timeout=120)
    assert _answered(cache) == 60 + 15 + 9
    # The kept answers were not asked again (a few in flight at the kill may be).
    assert len(world.requests) - asked_before < 3 * (60 + 15 + 9 - kept) + 10
    assert b"0 left" in err


def test_parse_adds_the_repository_columns_once_answers_exist(
    world: World, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_corpus(tmp_path / "papers.jsonl", 6)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    before = tmp_path / "before.csv"
    assert cli.main(["parse", str(corpus), "--out", str(before)]) == 0
    assert "repo_state" not in pd.read_csv(before).columns  # no cache yet: the table as always
    run_cli(monkeypatch, env, str(corpus))
    after = tmp_path / "after.parquet"
    assert cli.main(["parse", str(corpus), "--out", str(after)]) == 0
    table = pd.read_parquet(after)
    expected = [world.made_up(f"lab{i % 5}/method{i}") for i in range(6)]
    states = ["not_found" if r.status == 404 else "live" for r in expected]
    assert table["repo_state"].isin(states + ["empty", "placeholder", "readme_only", "archived"]).all()
    assert str(table["repo_stars"].dtype) == "Int64" and table["repo_stars"].notna().any()
