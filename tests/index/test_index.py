"""The prebuilt index: build, open, equality with the in-app analysis, format checks, search, CLI, app."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard import corpus, filters
from dashboard import index as index
from dashboard.analytics import analysis, terms
from dashboard.cli import common as cli_common
from dashboard.cli import main as cli
from dashboard.index import steps as indexing
from dashboard.search import wordindex
from dashboard.text import tokens

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"


@pytest.fixture(scope="module")
def seeds_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    return out


@pytest.fixture(scope="module")
def reference() -> analysis.Analysis:
    """What the app computes from the raw seed files."""
    return analysis.analyze(corpus.load([SEEDS]).papers)


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.index"
    shutil.copytree(source, target)
    return target


# ----------------------------------------------------------------------------- what an index holds


def test_opened_index_has_the_same_paper_table_as_the_app_computes(seeds_index, reference):
    opened = index.open_index(seeds_index, verify=True)
    pd.testing.assert_frame_equal(opened.papers, reference.papers)
    pd.testing.assert_frame_equal(opened.analysis.topics, reference.topics)


def test_opened_index_answers_similarity_queries_as_the_app_does(seeds_index, reference):
    opened = index.open_index(seeds_index)
    paper_ids = reference.papers["id"].tolist()
    for paper_id in paper_ids[::7]:
        pd.testing.assert_frame_equal(
            opened.analysis.most_similar(paper_id), reference.most_similar(paper_id)
        )
    pd.testing.assert_frame_equal(
        opened.analysis.similarity_matrix(paper_ids[:4]), reference.similarity_matrix(paper_ids[:4])
    )


@pytest.mark.parametrize("ngram", [1, 2, 3])
def test_index_term_counts_equal_the_terms_page_counts(seeds_index, reference, ngram):
    stored = index.open_index(seeds_index).term_counts(ngram)
    built = terms.TermCounts.build(reference.papers, ngram=ngram)
    assert stored.terms.tolist() == built.terms.tolist()
    assert (stored.counts != built.counts).nnz == 0
    mask = np.arange(len(reference.papers)) % 3 == 0
    pd.testing.assert_frame_equal(stored.term_frequencies(mask), built.term_frequencies(mask))


@pytest.mark.parametrize(
    "q", ["graph", "diffusion -language", '"large language model"', "gpt-4", "3d", "-the", "图"]
)
def test_index_search_equals_the_app_search(seeds_index, reference, q):
    opened = index.open_index(seeds_index)
    expected = filters.search_mask(filters.search_text(reference.papers), q)
    assert opened.search(q).tolist() == expected.tolist()


def test_manifest_says_what_the_index_holds(seeds_index):
    manifest = index.read_manifest(seeds_index)
    assert manifest["format"] == index.FORMAT and manifest["format_version"] == index.FORMAT_VERSION
    assert manifest["papers"] == 57 and manifest["fit_papers"] == 57
    assert manifest["corpus_digest"] == corpus.digest_paths([SEEDS])
    assert {"papers.arrow", "topics.parquet", "tfidf/data.npy", "search/indices.npy"} <= set(
        manifest["files"]
    )
    # Nothing in an index is a pickle: every array loads with allow_pickle=False.
    for name in manifest["files"]:
        if name.endswith(".npy"):
            np.load(seeds_index / name, allow_pickle=False)


def test_sampled_fit_assigns_every_paper_to_the_model_topics(tmp_path):
    # Fit on 40 of the 57 papers, assign the other 17: the path a corpus larger than fit_size takes.
    out = tmp_path / "sampled.index"
    manifest = index.build_index([SEEDS], out, workers=1, fit_size=40)
    opened = index.open_index(out)
    papers, topics = opened.papers, opened.analysis.topics
    assert manifest["fit_papers"] == 40 and len(papers) == 57
    assert set(papers["topic"]) <= set(topics["topic"])
    assert topics["size"].sum() == 57
    assert (papers["topic"] == -1).eq(papers["is_outlier"]).all()
    assert papers["topic_weight"].between(0, 1).all()
    assert np.isfinite(papers[["x", "y"]].to_numpy()).all()
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    assert (papers["topic_label"] == papers["topic"].map(labels)).all()
    assert len(opened.analysis.most_similar(papers["id"].iloc[-1])) == 5


@pytest.mark.parametrize("gram_up_to", [2_000, 10])
def test_papers_outside_the_fit_sample_are_projected_with_the_fits_own_lsa_axes(
    tmp_path, monkeypatch, gram_up_to
):
    """Both LSA solvers (the exact Gram one for a small fit sample, the truncated SVD above `GRAM_UP_TO`):
    the build projects the papers it did not fit with the axes the fit found. A second copy of the
    solver's settings once drifted from the fit's and every build above the fit size stopped."""
    from dashboard.analytics import lsa

    monkeypatch.setattr(lsa, "GRAM_UP_TO", gram_up_to)  # 10: the 40 fitted papers take the SVD path
    out = tmp_path / "sampled.index"
    index.build_index([SEEDS], out, workers=1, fit_size=40)
    opened = index.open_index(out)
    assert len(opened.papers) == 57 and opened.papers["topic"].notna().all()


@pytest.mark.corpora
def test_a_corpus_above_the_fit_size_builds_with_the_svd_solver(tmp_path, monkeypatch, corpora_dir):
    """600 of ICLR 2026's 1,000 papers fitted by the truncated SVD, 400 projected: here a randomized SVD
    in the projection, against the fit's ARPACK one, reproduced none of the fit's coordinates."""
    from dashboard.analytics import lsa

    monkeypatch.setattr(lsa, "GRAM_UP_TO", 10)
    out = tmp_path / "iclr.index"
    manifest = index.build_index(
        [corpora_dir / "iclr2026-openreview-1k" / "papers.jsonl"], out, workers=1, fit_size=600
    )
    papers = index.open_index(out).papers
    assert manifest["fit_papers"] == 600 and len(papers) == 1000
    assert papers["topic"].notna().all() and (papers["topic"] >= 0).mean() > 0.9


def test_every_float_step_of_the_build_runs_on_one_thread(tmp_path, monkeypatch):
    """Sums split over BLAS/OpenMP threads round differently with their number; a Dask worker, a
    pool worker and the client each have their own, so the build pins every float step to one thread
    and the index is the same wherever it is built (bench/dask_build.py compares the 27k builds,
    where two threads against one changed lsa.npy and the topics; at this size both agree anyway).
    """
    from threadpoolctl import threadpool_info, threadpool_limits

    from dashboard.analytics import papermap, topics
    from dashboard.index import steps as indexing

    seen: dict[str, set[int]] = {}

    def spy(name, function):
        def recorded(*args, **kwargs):
            seen.setdefault(name, set()).update(pool["num_threads"] for pool in threadpool_info())
            return function(*args, **kwargs)

        return recorded

    monkeypatch.setattr(topics.TopicModel, "fit", spy("fit", topics.TopicModel.fit))
    monkeypatch.setattr(indexing.TopicTransform, "assign", spy("assign", indexing.TopicTransform.assign))
    monkeypatch.setattr(papermap, "layout", spy("map", papermap.layout))
    with threadpool_limits(limits=2):  # what a two-core machine's process starts with
        index.build_index([SEEDS], tmp_path / "sampled.index", workers=1, fit_size=40)
    assert seen == {"fit": {1}, "assign": {1}, "map": {1}}


def test_the_count_workers_are_stopped_before_the_map(tmp_path, monkeypatch):
    """Everything after the count runs in the building process: a worker kept alive held the memory
    of its last partition through the map and the writes, where the build's peak memory is."""
    import multiprocessing

    from dashboard.analytics import papermap

    alive: list[int] = []
    layout = papermap.layout
    before = {child.pid for child in multiprocessing.active_children()}  # other tests' helpers

    def counted(*args, **kwargs):
        alive.append(len({child.pid for child in multiprocessing.active_children()} - before))
        return layout(*args, **kwargs)

    monkeypatch.setattr(papermap, "layout", counted)
    index.build_index([SEEDS], tmp_path / "two.index", workers=2)
    assert alive == [0]


def test_partitions_assigned_in_the_workers_give_the_index_of_one_process(tmp_path):
    """The assign step runs in the pool's workers, a few partitions ahead of the one written: the
    same files, byte for byte, as a build in this process alone."""
    settings = {"fit_size": 30, "partition_size": 8}  # topics assigned to 27 papers, in 8 partitions
    one = index.build_index([SEEDS], tmp_path / "one.index", workers=1, **settings)
    two = index.build_index([SEEDS], tmp_path / "two.index", workers=2, **settings)
    assert one["fit_papers"] == 30 and one["papers"] == 57
    assert two["built_with"] == "2 local processes"
    assert {name: f["sha256"] for name, f in two["files"].items()} == {
        name: f["sha256"] for name, f in one["files"].items()
    }
    assert not list((tmp_path / "two.index").parent.glob("**/assign-inputs.pickle"))


def test_one_thread_also_holds_for_the_libraries_the_build_loads_late() -> None:
    """threadpoolctl limits only loaded libraries; scikit-learn's OpenMP and SciPy's BLAS load when the
    fit starts. In a fresh process (pytest's has them loaded already) they must still get one thread."""
    import subprocess
    import sys

    check = (
        "import json\nfrom threadpoolctl import threadpool_info\nfrom dashboard import index\n"
        "with index.one_thread():\n    from dashboard.analytics.topics import TopicModel\n"
        "    print(json.dumps([[p['internal_api'], p['num_threads']] for p in threadpool_info()]))\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    pools = json.loads(done.stdout.strip().splitlines()[-1])
    assert {api for api, _ in pools} >= {"openblas", "openmp"}
    assert all(threads == 1 for _, threads in pools), pools


def test_assigning_the_fitted_papers_again_mostly_gives_their_own_topics():
    texts = analysis.paper_texts(corpus.load([SEEDS]).papers)
    from dashboard.analytics.topics import TopicModel

    model = TopicModel(n_topics=4).fit(texts)
    transform = indexing.TopicTransform.from_model(model)
    assigned = transform.assign(model.tfidf_, model.area_scores_)
    kept = model.labels_ >= 0
    agreement = (assigned["hard_topic"][kept] == model.labels_[kept]).mean()
    assert agreement > 0.8
    np.testing.assert_allclose(assigned["lsa"], model.lsa_, atol=1e-3)


def test_tfidf_rows_reproduce_the_topic_vectoriser():
    texts = ["Graph neural networks for molecules.", "Diffusion models for images and graph data.", "Graphs."]
    vectoriser = tokens.make_vectorizer("tfidf").fit(texts)
    counts = tokens.make_vectorizer("count", min_df=1).set_params(vocabulary=vectoriser.vocabulary_)
    expected = vectoriser.transform(texts).toarray()
    got = indexing.tfidf_rows(counts.fit_transform(texts), vectoriser.idf_).toarray()
    np.testing.assert_allclose(got, expected, atol=1e-6)


# ----------------------------------------------------------------------------- a small made-up corpus


def _tiny_corpus(folder: Path) -> Path:
    folder.mkdir()
    records = [
        {
            "id": "p1",
            "title": "Graph networks",
            "abstract": "Graph neural networks for molecule property prediction.",
        },
        {"id": "p2", "title": "Diffusion", "abstract": "Diffusion models generate images with guidance."},
        {
            "id": "p3",
            "title": "",
            "abstract": "We propose GraphFormer, a graph transformer. Code: https://github.com/a/b",
        },
    ]
    (folder / "a.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    # The same id in a second file: the index makes it unique, as one load of both files would.
    (folder / "b.jsonl").write_text(
        json.dumps({"id": "p1", "title": "Bandits", "abstract": "Regret bounds for contextual bandits."})
        + "\n",
        encoding="utf-8",
    )
    (folder / "README.txt").write_text("not abstracts", encoding="utf-8")
    return folder


def test_tiny_corpus_index_keeps_ids_unique_and_the_report(tmp_path):
    folder = _tiny_corpus(tmp_path / "tiny")
    out = tmp_path / "tiny.index"
    index.build_index([folder], out, workers=1)
    opened = index.open_index(out)
    loaded = corpus.load([folder])
    assert opened.papers["id"].tolist() == loaded.papers["id"].tolist() == ["p1", "p2", "p3", "p1-2"]
    assert opened.report.papers == 4
    assert [f.source for f in opened.report.files] == [f.source for f in loaded.report.files]
    assert any("README.txt" in str(p) for p in opened.report.warnings)
    assert opened.papers.loc[2, "code_status"] == "released"
    assert opened.papers.loc[2, "links"] == [{"url": "https://github.com/a/b", "kind": "code"}]


def test_the_index_keeps_each_paper_s_method_names_per_meaning(tmp_path):
    folder = tmp_path / "acronyms"
    folder.mkdir()
    (folder / "papers.txt").write_text(
        "ICML 2026 Papers\n\n"
        "We propose MAD (Margin-Aware Distillation), which trains small students.\n\n"
        "We propose MAD (Masking Adversarial Damage) to prune robust networks.\n\n"
        "A survey of graph kernels and their uses.\n",
        encoding="utf-8",
    )
    out = tmp_path / "acronyms.index"
    index.build_index([folder], out, workers=1)
    opened = index.open_index(out, verify=True)
    stored = index.read_meanings(opened)
    assert stored == index.method_meanings(opened.papers)
    assert stored == [["MAD (Margin-Aware Distillation)"], ["MAD (Masking Adversarial Damage)"], []]
    older = dataclasses.replace(opened, manifest={**opened.manifest, "files": dict(opened.manifest["files"])})
    del older.manifest["files"][index.MEANINGS_FILE]  # an index built before they were stored
    assert index.read_meanings(older) is None
    (out / index.MEANINGS_FILE).write_bytes(b"not an Arrow file")  # damaged since its build
    with pytest.raises(index.IndexFormatError, match=r"method_meanings\.arrow: cannot be read"):
        index.read_meanings(opened)


def test_too_few_papers_is_a_clear_build_error_and_leaves_nothing(tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "a.txt").write_text("One abstract about graphs.\n", encoding="utf-8")
    with pytest.raises(index.IndexBuildError, match="at least two"):
        index.build_index([folder], tmp_path / "one.index", workers=1)
    assert not (tmp_path / "one.index").exists()
    assert not list(tmp_path.glob(".one.index.partial-*"))


def test_build_refuses_to_replace_a_folder_that_is_not_an_index(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(index.IndexOutputError, match="not an index"):
        index.build_index([SEEDS], out, workers=1)
    assert (out / "notes.txt").read_text() == "keep me"


# ----------------------------------------------------------------------------- digest and format errors


def test_digest_changes_with_the_corpus_and_not_otherwise(tmp_path):
    folder = tmp_path / "corpus"
    shutil.copytree(SEEDS, folder)
    first = index.build_index([folder], tmp_path / "a.index", workers=1)
    again = index.build_index([folder], tmp_path / "b.index", workers=1)
    assert first["corpus_digest"] == again["corpus_digest"]
    assert first["files"]["papers.arrow"] == again["files"]["papers.arrow"]
    victim = sorted(folder.iterdir())[0]
    victim.write_text(
        victim.read_text(encoding="utf-8") + "\n\nA new abstract about graph kernels.\n", encoding="utf-8"
    )
    changed = index.build_index([folder], tmp_path / "a.index", workers=1)  # rebuilt in place
    assert changed["corpus_digest"] != first["corpus_digest"]
    assert changed["digest"] != first["digest"]
    assert index.open_index(tmp_path / "a.index").papers.shape[0] == 58


def test_other_format_version_is_refused_with_what_to_do(seeds_index, tmp_path):
    copy = _copy(seeds_index, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["format_version"] = 99
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(index.IndexFormatError, match=r"manifest\.json.*format 99.*rebuild"):
        index.open_index(copy)


@pytest.mark.parametrize(
    "name", ["papers.arrow", "tfidf/indices.npy", "search/words.arrow", "topics.parquet"]
)
def test_missing_or_truncated_file_is_named(seeds_index, tmp_path, name):
    copy = _copy(seeds_index, tmp_path)
    (copy / name).unlink()
    with pytest.raises(index.IndexFormatError, match="missing") as missing:
        index.open_index(copy)
    assert name in str(missing.value)
    shutil.copy(seeds_index / name, copy / name)
    data = (copy / name).read_bytes()
    (copy / name).write_bytes(data[: len(data) // 2])
    with pytest.raises(index.IndexFormatError, match="damaged") as truncated:
        index.open_index(copy)
    assert name in str(truncated.value)


def test_altered_file_is_found_by_its_checksum(seeds_index, tmp_path):
    copy = _copy(seeds_index, tmp_path)
    target = copy / "papers.arrow"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(index.IndexFormatError, match="papers.arrow.*checksum"):
        index.open_index(copy, verify=True)


def test_garbage_of_the_right_size_is_named(seeds_index, tmp_path):
    copy = _copy(seeds_index, tmp_path)
    target = copy / "papers.arrow"
    target.write_bytes(b"\0" * target.stat().st_size)
    with pytest.raises(index.IndexFormatError, match="papers.arrow"):
        index.open_index(copy)


def test_a_folder_without_manifest_is_not_an_index(tmp_path):
    assert not index.is_index(SEEDS)
    assert not index.is_index(tmp_path)
    with pytest.raises(index.IndexFormatError, match="manifest.json: missing"):
        index.open_index(tmp_path)


# ----------------------------------------------------------------------------- the table round trip

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            _TEXT,
            st.one_of(st.none(), st.integers(1900, 2100)),
            st.lists(_TEXT, max_size=3),
            st.lists(
                st.fixed_dictionaries({"url": _TEXT, "kind": st.sampled_from(["code", "paper"])}), max_size=2
            ),
        ),
        max_size=8,
    )
)
def test_table_round_trips_through_arrow(rows):
    papers = pd.DataFrame(
        {
            "id": pd.Series([r[0] for r in rows], dtype="str"),
            "year": pd.Series([r[1] for r in rows], dtype="Int64"),
            "method_names": pd.Series([r[2] for r in rows], dtype=object),
            "links": pd.Series([r[3] for r in rows], dtype=object),
        }
    )
    back = index.arrow_to_table(index.table_to_arrow(papers))
    pd.testing.assert_frame_equal(back, papers)


def test_a_list_value_many_papers_hold_is_one_string_object() -> None:
    """An author on two papers, an area on thousands: one Python string each, shared by their lists
    (a string per occurrence was most of a million papers' list columns in memory)."""
    papers = pd.DataFrame(
        {
            "id": pd.Series(["a", "b", "c"], dtype="str"),
            "method_names": pd.Series([["Ada Lovelace", "Alan Turing"], [], ["Alan Turing"]], dtype=object),
        }
    )
    table = index.table_to_arrow(papers)
    table = pa.Table.from_batches(table.to_batches(max_chunksize=2))  # the value in two chunks of the file
    back = index.arrow_to_table(table)
    assert back["method_names"].tolist() == [["Ada Lovelace", "Alan Turing"], [], ["Alan Turing"]]
    assert back["method_names"].iloc[0][1] is back["method_names"].iloc[2][0]


# ----------------------------------------------------------------------------- the word index


_WORDY = st.text(alphabet='abcgrphGRAPH-_ 0123.,"é\u212a\u017fk图', max_size=40)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_WORDY, min_size=1, max_size=6), q=_WORDY)
def test_word_index_agrees_with_the_regex_search(texts, q):
    series = pd.Series(texts, dtype="str")
    expected = filters.search_mask(series, q)
    assert wordindex.WordIndex.build(series).mask(q).tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("graph", [True, False, True, False]),
        ("graphs", [False, False, True, False]),
        ('"graph networks"', [True, False, False, False]),
        ("graph -sheet", [True, False, False, False]),
        ("gpt-4", [False, False, False, True]),
        ("raph", [False, False, False, False]),
    ],
)
def test_word_index_table(q, expected):
    texts = pd.Series(
        ["Graph networks", "Diffusion models", "graphs on a sheet", "GPT-4 reports"], dtype="str"
    )
    assert wordindex.WordIndex.build(texts).mask(q).tolist() == expected


def test_merging_partition_word_indexes_equals_one_index(seeds_index, reference):
    # The seeds index was built from three partitions (one per file); its words are those of one index.
    opened = index.open_index(seeds_index)
    whole = wordindex.WordIndex.build(filters.search_text(reference.papers))
    assert opened.words.words.to_pylist() == whole.words.to_pylist()
    assert np.array_equal(opened.words.indptr, whole.indptr)
    assert np.array_equal(opened.words.indices, whole.indices)


# ----------------------------------------------------------------------------- command line


def test_cli_index_builds_and_exits_0(tmp_path, capsys):
    code = cli.main(["index", str(SEEDS), "--out", str(tmp_path / "i"), "--workers", "1"])
    assert code == cli_common.EXIT_OK
    out = capsys.readouterr().out
    assert "57 papers" in out and "--corpus" in out
    assert index.is_index(tmp_path / "i")


def test_cli_index_exits_1_when_input_was_skipped(tmp_path, capsys):
    code = cli.main(
        ["index", str(SEEDS), str(tmp_path / "missing.txt"), "--out", str(tmp_path / "i"), "--workers", "1"]
    )
    assert code == cli_common.EXIT_SKIPPED
    assert "missing.txt" in capsys.readouterr().err
    assert index.open_index(tmp_path / "i").papers.shape[0] == 57


@pytest.mark.parametrize(
    "arguments",
    [
        ["index", "SEEDS"],  # no --out
        ["index", "SEEDS", "--out", "OUT", "--topics", "many"],
        ["index", "SEEDS", "--out", "OUT", "--fit-size", "0"],
    ],
)
def test_cli_index_usage_errors_exit_2(tmp_path, arguments):
    args = [a.replace("SEEDS", str(SEEDS)).replace("OUT", str(tmp_path / "o")) for a in arguments]
    with pytest.raises(SystemExit) as exit_:
        cli.main(args)
    assert exit_.value.code == cli_common.EXIT_USAGE


def test_cli_index_refuses_a_folder_that_is_not_an_index(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    assert cli.main(["index", str(SEEDS), "--out", str(tmp_path), "--workers", "1"]) == cli_common.EXIT_USAGE
    assert "not an index" in capsys.readouterr().err


def test_cli_index_with_too_few_papers_exits_1(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Only one abstract.\n", encoding="utf-8")
    assert cli.main(["index", str(tmp_path / "a.txt"), "--out", str(tmp_path / "i"), "--workers", "1"]) == 1
    assert "at least two" in capsys.readouterr().err


def test_cli_index_help_mentions_opening_it(capsys):
    with pytest.raises(SystemExit):
        cli.main(["index", "--help"])
    assert "--corpus" in capsys.readouterr().out


# ----------------------------------------------------------------------------- the app opens an index


def test_app_opens_an_index_directory(seeds_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(seeds_index))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any(m.value == "**57 of 57 papers**" for m in at.sidebar.markdown)
    at.text_input(key="sidebar.filter.q").input("diffusion").run()
    assert not at.exception
    expected = int(filters.search_mask(filters.search_text(corpus.load([SEEDS]).papers), "diffusion").sum())
    assert any(m.value == f"**{expected} of 57 papers**" for m in at.sidebar.markdown)
    for page in ("papers", "topics", "terms", "links", "compare"):
        at.switch_page(f"src/dashboard/app_pages/{page}.py").run()
        assert not at.exception, page


def test_app_reports_a_damaged_index_instead_of_crashing(seeds_index, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    copy = _copy(seeds_index, tmp_path)
    (copy / "tfidf" / "data.npy").unlink()
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(copy))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No papers could be read" in e.value for e in at.error)


def test_arrow_string_columns_stay_zero_copy(seeds_index):
    opened = index.open_index(seeds_index)
    assert isinstance(opened.papers["abstract"].array, pd.arrays.ArrowStringArray)
    assert pa.types.is_large_string(opened.words.words.type)


def test_index_facets_equal_the_sidebar_counts(seeds_index, reference):
    stored = index.open_index(seeds_index).facets
    computed = filters.facet_counts(reference.papers)
    assert stored is not None and set(stored) == set(computed)
    for key, counts in computed.items():
        assert stored[key].to_dict() == counts.to_dict(), key
        assert stored[key].index.dtype == counts.index.dtype, key


def test_refit_of_a_whole_index_is_the_in_app_analysis(seeds_index):
    opened = index.open_index(seeds_index)
    expected = analysis.analyze(corpus.load([SEEDS]).papers, n_topics=4)
    refitted = index.refit(opened, 4)
    pd.testing.assert_frame_equal(refitted.papers, expected.papers)
    pd.testing.assert_frame_equal(refitted.topics, expected.topics)


def test_refit_of_a_sampled_index_assigns_every_paper(tmp_path):
    out = tmp_path / "sampled.index"
    index.build_index([SEEDS], out, workers=1, fit_size=40)
    refitted = index.refit(index.open_index(out), 4)
    papers, topics = refitted.papers, refitted.topics
    assert topics["size"].sum() == len(papers) == 57
    assert set(papers["topic"]) <= set(topics["topic"]) and topics["topic"].max() < 4
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    assert (papers["topic_label"] == papers["topic"].map(labels)).all()
    assert len(refitted.most_similar(papers["id"].iloc[0])) == 5


def test_app_changes_the_number_of_topics_of_an_index(seeds_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(seeds_index))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params["k"] = "4"
    at.run()
    assert not at.exception
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    assert not at.exception


def test_paper_table_is_one_record_batch(seeds_index):
    # Arrow's take on a chunked string column concatenates it first: one chunk keeps filters cheap.
    table = index.read_arrow(seeds_index / "papers.arrow")
    assert {table.column(name).num_chunks for name in table.column_names} == {1}
