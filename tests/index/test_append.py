"""An index that grows: `dashboard.index.append` (and `--refit`, `dashboard.index.refitting`).

The corpus is the seed files: an index built from two of them, the third appended.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import index
from dashboard.cli import main as cli
from dashboard.cli.common import EXIT_OK, EXIT_USAGE
from dashboard.index import append

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"
OLD_FILES = ("000_f074a6e2e82fdcc8.txt", "001_0a4efe27d1109a12.txt")
NEW_FILE = "003_fb8fd97882dc0bc7.txt"
KEPT = ["id", "title", "topic", "topic_label", "topic_weight", "is_outlier", "x", "y", "areas"]


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The seed files split in two folders: the built part and the appended one."""
    root = tmp_path_factory.mktemp("seeds")
    old, new = root / "old", root / "new"
    old.mkdir()
    new.mkdir()
    for name in OLD_FILES:
        shutil.copy(SEEDS / name, old / name)
    shutil.copy(SEEDS / NEW_FILE, new / NEW_FILE)
    return old, new


@pytest.fixture(scope="module")
def built(corpus_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "seeds.index"
    index.build_index([corpus_files[0]], out, workers=1)
    return out


@pytest.fixture
def target(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "grown.index"
    shutil.copytree(built, copy)
    return copy


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


def _papers(folder: Path) -> pd.DataFrame:
    return index.open_index(folder).papers


# ----------------------------------------------------------------------------- what an append keeps


def test_append_keeps_old_topics_and_positions_and_gives_new_papers_theirs(target, corpus_files):
    before = _papers(target)
    topics_before = index.open_index(target).analysis.topics
    result = append.append_index([corpus_files[1]], target)
    opened = index.open_index(target, verify=True)
    after = opened.papers
    assert result.added == 19 and not result.duplicates and len(after) == 57
    old = after.iloc[: len(before)]
    pd.testing.assert_frame_equal(old[KEPT].reset_index(drop=True), before[KEPT].reset_index(drop=True))
    new = after.iloc[len(before) :]
    assert set(new["topic"]) <= set(topics_before["topic"]) | {-1}
    assert (new["topic"] == -1).eq(new["is_outlier"]).all()
    labels = dict(zip(topics_before["topic"], topics_before["label"], strict=True))
    assert (
        new.loc[new["topic"] >= 0, "topic_label"] == new.loc[new["topic"] >= 0, "topic"].map(labels)
    ).all()
    assert np.isfinite(new[["x", "y"]].to_numpy()).all()
    # Topic labels and terms are the fit's; sizes count every paper.
    topics = opened.analysis.topics
    assert (
        topics.loc[topics["topic"] >= 0, "label"].tolist()
        == topics_before.loc[topics_before["topic"] >= 0, "label"].tolist()
    )
    assert topics["size"].sum() == 57
    assert opened.facets is not None and int(opened.facets["venue"].sum()) == 57
    assert len(opened.analysis.most_similar(new["id"].iloc[0])) == 5


def test_new_papers_are_placed_among_their_nearest_stored_papers(target, corpus_files):
    append.append_index([corpus_files[1]], target)
    opened = index.open_index(target)
    papers, lsa = opened.papers, np.asarray(opened.analysis.model.lsa_)
    new = np.arange(38, 57)
    similarity = lsa[new] @ lsa[:38].T
    nearest = np.argmax(similarity, axis=1)
    xy = papers[["x", "y"]].to_numpy()
    spread = np.ptp(xy[:38], axis=0).max()
    # The weighted mean of its neighbours' positions lies within the map, near its nearest neighbour
    # more often than a random stored paper is.
    distance = np.linalg.norm(xy[new] - xy[nearest], axis=1)
    assert np.median(distance) < 0.5 * spread


# The stored postings move a block at a time: a block of 7 postings makes many blocks of the seeds'.
@pytest.mark.parametrize("block", [append.POSTINGS_BLOCK, 7])
def test_search_and_facets_of_an_appended_index_equal_one_build_of_all_files(
    target, corpus_files, tmp_path, monkeypatch, block
):
    monkeypatch.setattr(append, "POSTINGS_BLOCK", block)
    append.append_index([corpus_files[1]], target)
    whole = tmp_path / "whole.index"
    both = tmp_path / "both"
    both.mkdir()
    for folder in corpus_files:
        for file in folder.iterdir():
            shutil.copy(file, both / file.name)
    index.build_index([both], whole, workers=1)
    grown, built = index.open_index(target).words, index.open_index(whole).words
    assert grown.words.to_pylist() == built.words.to_pylist()
    for name in ("indptr", "indices", "tf", "lengths", "odd_rows"):
        assert np.array_equal(np.asarray(getattr(grown, name)), np.asarray(getattr(built, name))), name
    assert (
        index.open_index(target).search("diffusion").sum()
        == index.open_index(whole).search("diffusion").sum()
    )
    # The sidebar's counts too (but for the topics, which the one build fitted anew).
    grown_facets = json.loads((target / "facets.json").read_text(encoding="utf-8"))
    built_facets = json.loads((whole / "facets.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in grown_facets.items() if k != "topic"} == {
        k: v for k, v in built_facets.items() if k != "topic"
    }


def test_a_later_append_reads_the_kept_model(built, corpus_files, tmp_path):
    one_go, halves = tmp_path / "one.index", tmp_path / "halves.index"
    shutil.copytree(built, one_go)
    shutil.copytree(built, halves)
    append.append_index([corpus_files[1]], one_go)
    header, *records = (corpus_files[1] / NEW_FILE).read_text(encoding="utf-8").strip().split("\n\n")
    head, tail = tmp_path / "head", tmp_path / "tail"
    head.mkdir()
    tail.mkdir()
    # A .txt corpus: a header line, then one abstract per paragraph (ids by position: they clash, and
    # the titles, taken from the abstracts, differ: the second file's papers are added under new ids).
    (head / NEW_FILE).write_text("\n\n".join([header, *records[:10]]) + "\n", encoding="utf-8")
    (tail / NEW_FILE).write_text("\n\n".join([header, *records[10:]]) + "\n", encoding="utf-8")
    assert append.append_index([head], halves).added == 10
    assert append.TRANSFORM_FILE in index.read_manifest(halves)["files"]
    assert append.append_index([tail], halves).added == 9
    columns = ["title", "topic", "topic_weight", "is_outlier", "x", "y"]
    one, two = _papers(one_go)[columns], _papers(halves)[columns]
    pd.testing.assert_frame_equal(one, two)


# ----------------------------------------------------------------------------- duplicates


def test_papers_already_in_the_index_are_reported_not_added(target, corpus_files):
    append.append_index([corpus_files[1]], target)
    before = _digests(target)
    again = append.append_index([corpus_files[1]], target)
    assert again.added == 0 and len(again.duplicates) == 19
    assert {d.where for d in again.duplicates} == {"index"}
    assert _digests(target) == before


def test_the_built_corpus_appended_to_itself_adds_nothing(target, corpus_files):
    before = _digests(target)
    result = append.append_index([corpus_files[0]], target)
    assert result.added == 0 and len(result.duplicates) == 38
    assert _digests(target) == before


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        # id, title, source -> kept?, reason
        ([("a", "Graph nets", "x.jsonl")], [(False, "same id")]),
        ([("z", "graph   NETS!", "x.jsonl")], [(False, "same title")]),
        ([("z", "Fresh", "x.jsonl"), ("y", "fresh", "x.jsonl")], [(True, None), (False, "same title")]),
        ([("z", "", "x.jsonl"), ("y", "", "x.jsonl")], [(True, None), (True, None)]),  # no title: no match
        # A positional id (file without ids) names no paper: another title is another paper.
        ([("old-1", "Other paper", "old.txt")], [(True, None)]),
        ([("old-1", "Graph nets", "old.txt")], [(False, "same id")]),
    ],
)
def test_duplicates_by_id_or_normalised_title(new, expected):
    existing_ids, existing_titles = ["a", "old-1"], ["Graph nets", "Graph nets"]
    frame = pd.DataFrame(new, columns=["id", "title", "source"])
    keep, duplicates, renamed = append.find_duplicates(existing_ids, existing_titles, frame)
    assert keep.tolist() == [kept for kept, _ in expected]
    assert [d.reason for d in duplicates] == [reason for kept, reason in expected if not kept]
    if new[0][0] == "old-1" and keep[0]:
        assert renamed == {0: "old-1-2"}


# ----------------------------------------------------------------------------- versions and refit advice


def test_the_index_records_its_versions(target, corpus_files):
    assert [v["kind"] for v in append.index_versions(index.read_manifest(target))] == ["build"]
    append.append_index([corpus_files[1]], target)
    manifest = index.read_manifest(target)
    versions = manifest["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    assert versions[1]["papers_added"] == 19 and versions[1]["rows"] == [38, 57]
    assert versions[1]["first_id"] == _papers(target)["id"].iloc[38]
    assert versions[1]["digest"] and versions[1]["date"]
    assert list(append.rows_since(manifest, 1)) == list(range(38, 57))
    assert list(append.rows_since(manifest, 2)) == []
    assert manifest["refit"]["added"] <= 19 and "due" in manifest["refit"]


@pytest.mark.parametrize(
    ("state", "due", "reason"),
    [
        ({"papers_at_fit": 1000, "added": 100, "weight_sum": 50.0, "outliers": 5}, False, None),
        ({"papers_at_fit": 1000, "added": 250, "weight_sum": 125.0, "outliers": 12}, True, "fitted over"),
        ({"papers_at_fit": 1000, "added": 100, "weight_sum": 40.0, "outliers": 5}, True, "topic weight"),
        ({"papers_at_fit": 1000, "added": 100, "weight_sum": 50.0, "outliers": 20}, True, "outliers"),
    ],
)
def test_refit_is_due_past_the_documented_thresholds(state, due, reason):
    status = append.refit_status({**state, "baseline": {"mean_weight": 0.5, "outlier_share": 0.05}})
    assert status["due"] is due
    if reason:
        assert any(reason in r for r in status["reasons"])
    assert (
        "refit due" in append.describe_refit(status)
        if due
        else "no refit due" in append.describe_refit(status)
    )


# ----------------------------------------------------------------------------- safety


def _append_process(
    paths: list[Path], target: Path, pause: float = 0.0, wait: float = 0.0
) -> subprocess.Popen:
    env = {**os.environ, append.PAUSE_ENV: str(pause)}
    command = [
        sys.executable,
        "-m",
        "dashboard.cli.main",
        "index",
        "--append",
        *map(str, paths),
        "--to",
        str(target),
    ]
    if wait:
        command += ["--wait", str(wait)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_killed_append_changes_nothing(target, corpus_files):
    before = _digests(target)
    process = _append_process([corpus_files[1]], target, pause=60)
    work = target.with_name(f".{target.name}.append-{process.pid}")
    # Its new index is complete (the manifest is written last): kill it just before the switch.
    _wait_for(lambda: (work / "manifest.json").exists() or process.poll() is not None)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert _digests(target) == before
    assert len(index.open_index(target, verify=True).papers) == 38
    # The lock died with it; the next append clears its leftover folder and succeeds.
    assert append.append_index([corpus_files[1]], target).added == 19
    assert not work.exists()


def test_two_appends_at_once_one_refused_with_a_clear_message(target, corpus_files, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.jsonl").write_text(
        json.dumps(
            {"id": "m1", "title": "Bandit regret", "abstract": "Regret bounds for contextual bandits."}
        )
        + "\n",
        encoding="utf-8",
    )
    first = _append_process([corpus_files[1]], target, pause=5)
    lock = target.with_name(f".{target.name}.lock")
    _wait_for(lambda: lock.exists() and lock.read_text() != "")
    second = _append_process([extra], target)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 3, err
    assert "is changing this index" in err and f"process {first.pid}" in err and "--wait" in err
    first.communicate(timeout=120)
    assert first.returncode == 0
    assert len(index.open_index(target, verify=True).papers) == 57


def test_two_appends_at_once_with_wait_both_land(target, corpus_files, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.jsonl").write_text(
        json.dumps(
            {"id": "m1", "title": "Bandit regret", "abstract": "Regret bounds for contextual bandits."}
        )
        + "\n",
        encoding="utf-8",
    )
    first = _append_process([corpus_files[1]], target, pause=3)
    lock = target.with_name(f".{target.name}.lock")
    _wait_for(lambda: lock.exists() and lock.read_text() != "")
    second = _append_process([extra], target, wait=120)
    for process in (first, second):
        _, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
    papers = index.open_index(target, verify=True).papers
    assert len(papers) == 58 and "m1" in set(papers["id"])
    assert [v["papers_added"] for v in index.read_manifest(target)["versions"][1:]] in ([19, 1], [1, 19])


# ----------------------------------------------------------------------------- command line and app


def test_cli_append_says_what_it_added_and_whether_to_refit(target, corpus_files, capsys):
    code = cli.main(["index", "--append", str(corpus_files[1]), "--to", str(target)])
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "19 papers added, 0 already there: 57 papers" in out
    assert "refit due" in out  # 19 new papers on 38: half again
    assert cli.main(["index", "--append", str(corpus_files[1]), "--to", str(target)]) == EXIT_OK
    captured = capsys.readouterr()
    assert "0 papers added, 19 already there" in captured.out
    assert "not added: same id" in captured.err


@pytest.mark.parametrize(
    "arguments",
    [
        ["index", "--append", "NEW"],  # no --to
        ["index", "--append", "--to", "OUT"],  # no files
        ["index", "--append", "NEW", "--to", "OUT", "--out", "OUT"],
        ["index", "--refit", "NEW", "--to", "OUT"],
        ["index", "--append", "--refit", "NEW", "--to", "OUT"],
        ["index", "NEW"],  # a build without --out
    ],
)
def test_cli_grow_usage_errors_exit_2(arguments, corpus_files, tmp_path):
    args = [a.replace("NEW", str(corpus_files[1])).replace("OUT", str(tmp_path / "o")) for a in arguments]
    with pytest.raises(SystemExit) as exit_:
        cli.main(args)
    assert exit_.value.code == EXIT_USAGE


def test_app_opens_an_index_after_an_append(target, corpus_files, monkeypatch):
    from streamlit.testing.v1 import AppTest

    append.append_index([corpus_files[1]], target)
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(target))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any(m.value == "**57 of 57 papers**" for m in at.sidebar.markdown)
    for page in ("papers", "topics", "terms"):
        at.switch_page(f"src/dashboard/app_pages/{page}.py").run()
        assert not at.exception, page


# ----------------------------------------------------------------------------- refit


def test_refit_fits_all_papers_again_and_maps_old_topic_ids(target, corpus_files, tmp_path, capsys):
    from dashboard.index import refitting

    append.append_index([corpus_files[1]], target)
    old = index.open_index(target)
    old_topics = set(old.analysis.topics.loc[old.analysis.topics["topic"] >= 0, "topic"])
    assert cli.main(["index", "--refit", "--to", str(target)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "old topics mapped to" in out
    opened = index.open_index(target, verify=True)
    manifest = opened.manifest
    mapping = manifest["topic_mapping"][-1]
    new_topics = set(opened.analysis.topics["topic"])
    assert {int(k) for k in mapping["old_to_new"]} == old_topics
    assert set(mapping["old_to_new"].values()) <= new_topics
    # Each old topic goes where most of its papers went.
    papers = old.papers[["id", "topic"]].merge(opened.papers[["id", "topic"]], on="id", suffixes=("", "_new"))
    for key, new_topic in mapping["old_to_new"].items():
        moved = papers.loc[(papers["topic"] == int(key)) & (papers["topic_new"] >= 0), "topic_new"]
        assert moved.value_counts().max() == (moved == new_topic).sum()
    # A refit is the build over every paper: the same topics as one build of all files.
    both = tmp_path / "both"
    both.mkdir()
    for folder in corpus_files:
        for file in folder.iterdir():
            shutil.copy(file, both / file.name)
    whole = tmp_path / "whole.index"
    index.build_index([both], whole, workers=1)
    rebuilt = index.open_index(whole)
    assert opened.papers["topic"].tolist() == rebuilt.papers["topic"].tolist()
    assert opened.papers["id"].tolist() == old.papers["id"].tolist()
    assert [v["kind"] for v in manifest["versions"]] == ["build", "append", "refit"]
    assert manifest["refit"]["added"] == 0 and not manifest["refit"]["due"]
    assert manifest["sources"] == old.manifest["sources"]
    assert append.TRANSFORM_FILE in manifest["files"]
    assert "0 old topics" not in refitting.describe_mapping(mapping)


def _as_built_before_kept_models(folder: Path) -> None:
    """Make ``folder`` an index as built before it kept its model's parts (and its refit advice)."""
    manifest = index.read_manifest(folder)
    (folder / append.TRANSFORM_FILE).unlink()
    del manifest["files"][append.TRANSFORM_FILE]
    del manifest["refit"]
    manifest["digest"] = index.manifest_digest(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_an_index_built_before_it_kept_its_model_derives_it_once(built, corpus_files, tmp_path):
    kept, derived = tmp_path / "kept.index", tmp_path / "derived.index"
    shutil.copytree(built, kept)
    shutil.copytree(built, derived)
    assert append.TRANSFORM_FILE in index.read_manifest(kept)["files"]  # the build keeps it
    _as_built_before_kept_models(derived)
    append.append_index([corpus_files[1]], kept)
    result = append.append_index([corpus_files[1]], derived)
    assert result.added == 19 and result.refit["baseline"]["papers"] > 0
    manifest = index.read_manifest(derived)
    assert append.TRANSFORM_FILE in manifest["files"]  # derived once, then kept
    # The derived parts repeat the fit's SVD on the stored rows: the same topics and places.
    a, b = _papers(kept).iloc[38:], _papers(derived).iloc[38:]
    assert a["topic"].tolist() == b["topic"].tolist()
    np.testing.assert_allclose(a["topic_weight"], b["topic_weight"], atol=2e-4)
    np.testing.assert_allclose(a[["x", "y"]].to_numpy(), b[["x", "y"]].to_numpy(), atol=2e-3)


def test_without_an_atomic_exchange_the_switch_renames_and_a_died_switch_is_put_back(
    target, corpus_files, monkeypatch
):
    monkeypatch.setattr(append, "_exchange", lambda a, b: False)
    assert append.append_index([corpus_files[1]], target).added == 19
    assert len(index.open_index(target, verify=True).papers) == 57
    # A switch that died between its two renames: the old index aside, none in its place.
    aside = target.with_name(f".{target.name}.previous")
    target.rename(aside)
    append.recover(target)
    assert not aside.exists() and len(index.open_index(target, verify=True).papers) == 57


def test_new_papers_are_placed_from_the_map_s_own_fit_sample_redrawn():
    from dashboard.analytics import papermap

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    coords = papermap.layout(vectors, random_state=3, fit_size=100)
    manifest = {"map": {"method": papermap.METHOD, "fit_papers": 100, "random_state": 3}}
    rows = append.map_sample(manifest, vectors, coords)
    assert rows is not None and len(rows) == 100
    new = vectors[:5] + 0.01
    placed, how = append.place_new(manifest, vectors, coords, new)
    assert how == "nearest papers of the map's fit sample"
    np.testing.assert_array_equal(placed, np.round(papermap.place(new, vectors[rows], coords[rows]), 4))
    # Another seed draws another sample, which does not place the stored papers where they are.
    other = {"map": {**manifest["map"], "random_state": 4}}
    assert append.map_sample(other, vectors, coords) is None
    assert append.place_new(other, vectors, coords, new)[1] == "nearest stored papers"


def test_an_index_built_before_bm25_stays_without_it(target, corpus_files):
    manifest = index.read_manifest(target)
    for name in ("search/tf.npy", "search/lengths.npy"):
        (target / name).unlink()
        del manifest["files"][name]
    manifest["digest"] = index.manifest_digest(manifest)
    (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert append.append_index([corpus_files[1]], target).added == 19
    opened = index.open_index(target, verify=True)
    assert opened.words.tf is None and opened.words.lengths is None
    assert "search/tf.npy" not in opened.manifest["files"]
    texts = index.open_index(target).papers["abstract_clean"].str.contains("diffusion", case=False)
    assert opened.search("diffusion").sum() >= texts.sum() > 0


def test_an_index_with_papers_without_abstracts_grows_too(corpus_files, tmp_path):
    # A paper with no text has no LSA direction to reproduce: the model's parts come all the same.
    folder = tmp_path / "old"
    shutil.copytree(corpus_files[0], folder)
    (folder / "untitled.jsonl").write_text(
        json.dumps({"id": "e1", "title": "A title alone", "abstract": ""}) + "\n", encoding="utf-8"
    )
    target = tmp_path / "e.index"
    index.build_index([folder], target, workers=1)
    assert append.TRANSFORM_FILE in index.read_manifest(target)["files"]  # the build keeps them
    assert append.append_index([corpus_files[1]], target).added == 19
    assert len(index.open_index(target, verify=True).papers) == 58
