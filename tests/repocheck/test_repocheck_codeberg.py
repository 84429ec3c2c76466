"""Codeberg through the Forgejo/Gitea API v1 (issue 50), and the host registry it came in through.

Against the real local fake server answering the documented shapes: every state, a rename, a pull
mirror, conditional re-checks, ``Authorization: token`` sent to Codeberg only and kept out of the
cache, the logs and the output, and an unknown host that is an error, never another host's path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from support.repo_api import FakeRepo, World, serving

from dashboard import export
from dashboard.cli import main as cli
from dashboard.repocheck import hosts
from dashboard.repocheck.checker import Checker
from dashboard.repocheck.client import Client, Settings
from dashboard.repocheck.store import Store
from dashboard.repocheck.targets import Target, target_of, targets_in

CB = "codeberg.org"
TOKEN = "cb_SECRETforgejo0123456789abcdef"


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def env(world: World) -> Iterator[dict[str, str]]:
    with serving(world) as environment:
        yield {**environment, "CODEBERG_TOKEN": TOKEN}


def make_checker(env: dict[str, str], cache: Path, **options: object) -> Checker:
    settings = Settings.from_env(env, **{"timeout": 2.0, "backoff": 0.01, "retries": 1, **options})
    return Checker(Store.open(cache), Client(settings))


def answers(cache: Path) -> dict[str, dict[str, object]]:
    with Store.open(cache) as store:
        frame = store.answers()
    return {row["key"]: row for row in frame.to_dict("records")}


def populate(world: World) -> dict[Target, str]:
    expected: dict[Target, str] = {}

    def codeberg(repo: FakeRepo, state: str) -> None:
        world.add_codeberg(repo)
        expected[Target(CB, repo.name)] = state

    codeberg(FakeRepo("o/live"), "live")
    codeberg(FakeRepo("o/empty", files=[]), "empty")
    codeberg(FakeRepo("o/readme", files=["README.md", "LICENSE", ".gitignore"], readme="See the paper."),
             "readme_only")  # fmt: skip
    codeberg(
        FakeRepo("o/soon", files=["README.md", "assets/"], readme="# X\n\nCode coming soon."), "placeholder"
    )
    codeberg(FakeRepo("o/old", archived=True), "archived")
    codeberg(FakeRepo("o/renamed", moved_to="neworg/renamed2"), "moved")
    codeberg(FakeRepo("o/gone", status=404), "not_found")
    codeberg(FakeRepo("o/blocked", status=403), "blocked")
    codeberg(FakeRepo("o/down", status=500), "error")
    codeberg(FakeRepo("o/mirror", mirror_of="https://github.com/up/stream"), "live")
    expected[Target(CB, "o/missing")] = "not_found"
    world.add_codeberg(FakeRepo("neworg/renamed2"))
    return expected


def test_every_state_on_codeberg(world: World, env: dict[str, str], tmp_path: Path) -> None:
    expected = populate(world)
    cache = tmp_path / "cache.sqlite"
    summary = make_checker(env, cache).run(list(expected))
    got = answers(cache)
    assert {t.key: got[t.key]["state"] for t in expected} == {t.key: s for t, s in expected.items()}
    assert summary.checked == len(expected) and summary.left == 0
    live = got["codeberg.org/o/live"]
    assert (live["stars"], live["created_at"], live["pushed_at"]) == (7, "2023-02-03", "2024-06-07")
    assert got["codeberg.org/o/renamed"]["moved_to"] == "neworg/renamed2"
    assert got["codeberg.org/o/mirror"]["detail"] == "mirror of https://github.com/up/stream"
    assert got["codeberg.org/o/down"]["detail"].startswith("HTTP 500")
    paths = [r.raw_path for r in world.requests]
    # The documented calls, on the default branch the repository names.
    assert "/codeberg/api/v1/repos/o/live" in paths
    assert "/codeberg/api/v1/repos/o/readme/contents?ref=trunk" in paths
    assert "/codeberg/api/v1/repos/o/readme/contents/README.md?ref=trunk" in paths
    # Archived, empty and moved repositories are decided from the repository answer alone.
    assert not any(
        p.startswith(("/codeberg/api/v1/repos/o/old/", "/codeberg/api/v1/repos/o/empty/")) for p in paths
    )
    # The token went to Codeberg only, as "token ...".
    assert all(r.headers.get("authorization") == f"token {TOKEN}" for r in world.requests)


def test_a_recheck_asks_the_new_name_and_conditionally(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    populate(world)
    cache = tmp_path / "cache.sqlite"
    targets = [Target(CB, "o/renamed"), Target(CB, "o/readme")]
    make_checker(env, cache).run(targets)
    world.requests.clear()
    checker = make_checker(env, cache)
    checker.max_age_days = 0
    checker.run(targets)
    paths = [r.raw_path for r in world.requests]
    assert (
        "/codeberg/api/v1/repos/neworg/renamed2" in paths and "/codeberg/api/v1/repos/o/renamed" not in paths
    )
    readme_requests = [r for r in world.requests if "/o/readme" in r.raw_path]
    assert readme_requests and all(r.status == 304 for r in readme_requests)
    assert {k: v["state"] for k, v in answers(cache).items()} == {
        "codeberg.org/o/renamed": "moved",
        "codeberg.org/o/readme": "readme_only",
    }


def test_hostile_codeberg_answers_are_errors(world: World, env: dict[str, str], tmp_path: Path) -> None:
    body = {"full_name": "acme/..", "stars_count": 1, "empty": False, "default_branch": "trunk"}
    world.add_codeberg(FakeRepo("o/dots", raw=(200, {}, json.dumps(body).encode())))
    body = {"full_name": "o/big", "stars_count": 2**70, "empty": False}
    world.add_codeberg(FakeRepo("o/big", raw=(200, {}, json.dumps(body).encode())))
    world.add_codeberg(FakeRepo("o/deep", raw=(200, {}, b"[" * 100_000)))
    cache = tmp_path / "cache.sqlite"
    summary = make_checker(env, cache).run([Target(CB, n) for n in ("o/dots", "o/big", "o/deep")])
    got = answers(cache)
    assert summary.checked == 3 and summary.states == {"error": 3}
    assert all("malformed answer" in str(row["detail"]) for row in got.values())


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://codeberg.org/forgejo/forgejo", Target(CB, "forgejo/forgejo")),
        ("https://codeberg.org/forgejo/forgejo/src/branch/forgejo/README.md", Target(CB, "forgejo/forgejo")),
        ("https://www.codeberg.org/Owner/Repo.git", Target(CB, "Owner/Repo")),
        ("https://codeberg.org/explore/repos", None),
        ("https://codeberg.org/user/login", None),
        ("https://codeberg.org/owner", None),
        ("https://codeberg.org/o/..", None),
        ("https://codeberg.org.evil.org/o/r", None),
    ],
)
def test_codeberg_urls(url: str, expected: Target | None) -> None:
    assert target_of(url) == expected


def test_codeberg_links_in_abstracts_are_checked_targets() -> None:
    papers = pd.DataFrame(
        {"links": [[{"url": "https://codeberg.org/lab/method", "kind": "code"}], []], "id": ["a", "b"]}
    )
    assert targets_in(papers) == [Target(CB, "lab/method")]


def test_an_unsupported_host_is_an_error_not_another_hosts_path(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    world.add_codeberg(FakeRepo("o/live"))
    cache = tmp_path / "cache.sqlite"
    summary = make_checker(env, cache).run([Target("example.org", "a/b"), Target(CB, "o/live")])
    got = answers(cache)
    assert got["example.org/a/b"]["state"] == "error"
    assert "unsupported host 'example.org'" in str(got["example.org/a/b"]["detail"])
    assert got["codeberg.org/o/live"]["state"] == "live" and summary.left == 0
    assert all(r.raw_path.startswith("/codeberg/") for r in world.requests)
    assert target_of("https://example.org/a/b") is None


def test_the_registry_states_each_hosts_variables() -> None:
    table = {h.site: (h.base_variable, h.token_variable, h.auth_scheme) for h in hosts.HOSTS.values()}
    assert table == {
        "github.com": ("GITHUB_API_URL", "GITHUB_TOKEN", "Bearer"),
        "gitlab.com": ("GITLAB_API_URL", "GITLAB_TOKEN", "Bearer"),
        "huggingface.co": ("HF_ENDPOINT", "HF_TOKEN", "Bearer"),
        "codeberg.org": ("CODEBERG_API_URL", "CODEBERG_TOKEN", "token"),
    }
    assert Settings.from_env({}).bases["codeberg"] == "https://codeberg.org/api/v1"
    settings = Settings.from_env(
        {"CODEBERG_API_URL": "https://forge.example/api/v1/", "CODEBERG_TOKEN": " t "}
    )
    assert settings.bases["codeberg"] == "https://forge.example/api/v1" and settings.tokens == {
        "codeberg": "t"
    }
    assert "Codeberg" in hosts.labels()


def test_check_code_on_codeberg_keeps_the_token_secret(
    world: World, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    populate(world)
    corpus = tmp_path / "papers.jsonl"
    lines = [
        {"title": f"Paper {n}", "abstract": f"Code: https://codeberg.org/o/{n} and more.", "year": 2024}
        for n in ("live", "soon", "gone", "renamed")
    ]
    corpus.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    cache, out = tmp_path / "cache.sqlite", tmp_path / "repos.jsonl"
    for name, value in {**env, "PAPER_DASHBOARD_CACHE": str(cache)}.items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.DEBUG)
    status = cli.main(["check-code", str(corpus), "--out", str(out)])
    err = capsys.readouterr().err
    rows = pd.read_json(out, lines=True)
    assert status == 0, err
    assert dict(zip(rows["repo"], rows["state"], strict=True)) == {
        "o/live": "live", "o/soon": "placeholder", "o/gone": "not_found", "o/renamed": "moved"
    }  # fmt: skip
    assert set(rows["host"]) == {CB}
    assert any(r.headers.get("authorization") == f"token {TOKEN}" for r in world.requests)
    assert TOKEN not in err and TOKEN not in caplog.text
    for path in tmp_path.iterdir():
        assert TOKEN.encode() not in path.read_bytes(), path
    with Store.open(cache) as store:
        frame = store.answers()
    for fmt in ("csv", "jsonl", "parquet"):
        assert TOKEN.encode() not in export.to_bytes(frame, fmt)
    assert TOKEN not in repr(Settings.from_env(env))
