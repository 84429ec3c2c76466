"""One default for the topics everywhere: the app's sources, the upload worker, the CLI and the index
build choose the space by `representations.choose` (the sentence embedding up to its size where the
``[semantic]`` extra is installed, LSA above or without it) and agree on the topics it gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import sources
from dashboard.analytics import representations
from dashboard.analytics.analysis import paper_texts
from dashboard.corpus import load
from dashboard.index import build_index, open_index
from dashboard.index.append import append_index
from dashboard.search import like, semantic, topicspace

pytestmark = [
    pytest.mark.skipif(not semantic.available(), reason=f"needs the embedding model: {semantic.EXTRA_HINT}"),
    pytest.mark.default_topics,
]


@pytest.fixture(scope="module")
def seeds(seeds_dir: Path) -> pd.DataFrame:
    return load([seeds_dir]).papers


def test_a_conference_sized_corpus_gets_the_embedding_and_its_vectors_once(seeds: pd.DataFrame) -> None:
    space, vectors = topicspace.paper_vectors(seeds)
    assert space == "minilm"
    assert vectors is not None and vectors.shape == (len(seeds), semantic.DIMENSIONS)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)
    again = topicspace.paper_vectors(seeds)[1]
    assert again is vectors  # kept per process: a refit or "papers like this" does not encode again
    assert not vectors.flags.writeable  # shared, so nobody may change it under another caller


def test_above_its_size_or_without_the_extra_the_default_is_lsa(
    seeds: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(representations, "EMBEDDED_PAPERS", len(seeds) - 1)
    assert topicspace.paper_vectors(seeds) == ("lsa", None)
    assert topicspace.fit_topics(seeds).model.representation_ == "lsa"
    monkeypatch.setattr(representations, "EMBEDDED_PAPERS", 2_000)
    monkeypatch.setattr(semantic, "available", lambda: False)
    assert topicspace.paper_vectors(seeds) == ("lsa", None)
    assert topicspace.paper_vectors(seeds, "minilm") == ("lsa", None)


def test_an_operator_may_choose_the_space_for_every_corpus_and_a_command_line_still_wins(
    seeds: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(topicspace.ENV_SPACE, "lsa")
    assert topicspace.fit_topics(seeds).model.representation_ == "lsa"
    assert topicspace.space_for(len(seeds), "minilm") == "minilm"
    monkeypatch.setenv(topicspace.ENV_SPACE, "no such space")
    assert topicspace.space_for(len(seeds)) == "minilm"  # ignored, and logged


def test_the_app_the_cli_the_upload_worker_and_the_index_share_the_default(
    seeds: pd.DataFrame, seeds_dir: Path, tmp_path: Path
) -> None:
    app = sources.open_source([seeds_dir]).analysis(seeds)
    assert app.model.representation_ == "minilm"
    topics = app.papers["topic"].to_numpy()

    out = tmp_path / "analysed.csv"
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli.main", "analyze", str(seeds_dir), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.returncode == 0
    np.testing.assert_array_equal(pd.read_csv(out)["topic"].to_numpy(), topics)

    upload = sources.UploadSource.fit_in_worker(seeds, "auto")[0]  # in the upload's worker process
    assert upload.model.representation_ == "minilm"
    np.testing.assert_array_equal(upload.papers["topic"].to_numpy(), topics)

    manifest = build_index([seeds_dir], tmp_path / "index")
    assert manifest["representation"] == "minilm"
    assert manifest["settings"]["representation"] == "auto"
    opened = open_index(tmp_path / "index")
    np.testing.assert_array_equal(opened.papers["topic"].to_numpy(), topics)
    assert list(opened.analysis.topics["label"]) == list(app.topics["label"])
    # The same map (the build's one BLAS thread rounds a last digit differently here and there).
    np.testing.assert_allclose(
        opened.papers[["x", "y"]].to_numpy(), app.papers[["x", "y"]].to_numpy(), atol=2e-4
    )


def test_the_map_is_drawn_in_the_topics_space(seeds: pd.DataFrame) -> None:
    """A topic's papers lie together on the map: a paper's nearest map neighbours share its topic
    more often than on a map of the LSA vectors, which the embedding's topics do not follow."""
    from dashboard.analytics import papermap

    fitted = topicspace.fit_topics(seeds)
    topics = fitted.papers["topic"].to_numpy()

    def neighbours_in_topic(coords: np.ndarray, k: int = 5) -> float:
        distances = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(axis=-1)
        np.fill_diagonal(distances, np.inf)
        nearest = np.argsort(distances, axis=1)[:, :k]
        return float((topics[nearest] == topics[:, None]).mean())

    on_the_map = neighbours_in_topic(fitted.papers[["x", "y"]].to_numpy())
    in_lsa = neighbours_in_topic(papermap.layout(fitted.model.lsa_))
    assert on_the_map > in_lsa + 0.1


def test_the_index_keeps_the_vectors_its_topics_and_papers_like_this_use(
    seeds: pd.DataFrame, seeds_dir: Path, tmp_path: Path
) -> None:
    build_index([seeds_dir], tmp_path / "index")
    opened = open_index(tmp_path / "index")
    stored = np.asarray(opened.analysis.model.semantic_)
    np.testing.assert_allclose(stored, topicspace.encode(paper_texts(opened.papers)), atol=1e-5)
    space = like.embedding_space(opened.analysis)
    np.testing.assert_array_equal(space.paper_vectors(), stored)
    # A refit at another number of topics stays in the index's space, on its stored vectors.
    refitted = sources.IndexSource(tmp_path / "index", opened).analysis(opened.papers, 4)
    assert refitted.model.representation_ == "minilm"
    assert refitted.model.n_topics_ == 4


def test_an_upload_refit_reuses_the_first_fits_vectors(seeds: pd.DataFrame) -> None:
    first = topicspace.fit_topics(seeds, "auto")
    vectors = np.asarray(first.model.semantic_)
    refit = sources.UploadSource.fit_in_worker(seeds, 4, vectors)[0]
    np.testing.assert_array_equal(refit.model.semantic_, vectors)
    # The vectors given are the ones clustered: reversed rows give other topics than the papers' own.
    shuffled = topicspace.fit_topics(seeds, 4, vectors=np.ascontiguousarray(vectors[::-1]))
    assert not np.array_equal(shuffled.papers["topic"].to_numpy(), refit.papers["topic"].to_numpy())


def test_recommendations_for_a_list_read_the_vectors_the_topics_used(seeds: pd.DataFrame) -> None:
    """ "Recommended for" a reading list (the Papers page, the digest and ``paper-dashboard recommend``
    share `recommend.dense_rows`) ranks a small corpus in the sentence embedding its topics used."""
    from dashboard.library.digest import recommender
    from dashboard.search import recommend

    fitted = topicspace.fit_topics(seeds)
    model = fitted.model
    reading_list = np.flatnonzero(fitted.papers["topic"].to_numpy() == fitted.papers["topic"].iat[0])[:4]
    others = np.setdiff1d(np.arange(len(seeds)), reading_list)
    ranked = [row for row, _ in recommender(fitted, fitted.papers)(reading_list, others)]
    in_embedding = recommend.recommend(model.tfidf_, model.semantic_, reading_list).rows
    in_lsa = recommend.recommend(model.tfidf_, model.lsa_, reading_list).rows
    assert ranked == in_embedding[: len(ranked)].tolist()
    assert ranked != in_lsa[: len(ranked)].tolist()  # the space makes a difference here


def test_papers_appended_to_an_embedding_index_are_placed_in_that_space(
    seeds: pd.DataFrame, tmp_path: Path
) -> None:
    first, rest = seeds.iloc[:50], seeds.iloc[50:]
    first.to_json(tmp_path / "first.jsonl", orient="records", lines=True)
    rest.to_json(tmp_path / "rest.jsonl", orient="records", lines=True)
    build_index([tmp_path / "first.jsonl"], tmp_path / "index")
    result = append_index([tmp_path / "rest.jsonl"], tmp_path / "index")
    assert result.added == len(rest)
    opened = open_index(tmp_path / "index")
    assert opened.manifest["representation"] == "minilm"
    n_areas = np.load(tmp_path / "index" / "area_scores.npy").shape[1]
    embedding = np.load(tmp_path / "index" / "embedding.npy")
    semantic_rows = np.load(tmp_path / "index" / "semantic.npy")
    assert semantic_rows.shape == (len(seeds), semantic.DIMENSIONS)
    np.testing.assert_allclose(
        semantic_rows[50:], topicspace.encode(paper_texts(opened.papers.iloc[50:])), atol=1e-5
    )
    # The new papers' vectors are in the fitted space (the sentence embedding and the area guidance),
    # not the LSA's 40 dimensions.
    assert embedding.shape[1] in (semantic.DIMENSIONS, semantic.DIMENSIONS + n_areas)
    assert np.isfinite(opened.papers[["x", "y"]].to_numpy()[50:]).all()  # placed on the map
    new_topics = opened.papers["topic"].to_numpy()[50:]
    assert set(new_topics.tolist()) <= set(range(int(opened.manifest["topics"]))) | {-1}
    state = json.loads((tmp_path / "index" / "manifest.json").read_text())["refit"]
    assert state["added"] == len(rest) and state["baseline"]["papers"] == 50

    # `index --refit` fits the grown index again, in the same space, over every paper.
    from dashboard.index.refitting import refit_index

    refitted = refit_index(tmp_path / "index")
    assert refitted["representation"] == "minilm" and refitted["fit_papers"] == len(seeds)
    assert refitted["refit"]["baseline"]["papers"] == len(seeds)


def test_an_embedding_space_beyond_the_fit_sample_is_refused_by_name(seeds_dir: Path, tmp_path: Path) -> None:
    from dashboard.index import IndexBuildError

    with pytest.raises(IndexBuildError, match="fits every paper.*--fit-size"):
        build_index([seeds_dir], tmp_path / "index", representation="minilm", fit_size=20)
    auto = build_index([seeds_dir], tmp_path / "auto", fit_size=20)  # auto takes LSA there
    assert auto["representation"] == "lsa"


def test_the_vectors_are_kept_on_disk_for_the_next_start_and_a_damaged_file_is_encoded_again(
    seeds: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_DIR", str(tmp_path))
    texts = [f"{text} (kept on disk)" for text in paper_texts(seeds.iloc[:6])]  # in no memo yet
    first = topicspace.encode(texts, store=True)
    [kept] = list((tmp_path / "embeddings").glob("*.npy"))
    np.testing.assert_array_equal(np.load(kept), first)

    real_encoder = semantic.Encoder

    class NoEncoder:  # a next start: a new process, whose encoder must not be asked
        def encode(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("encoded again although the vectors were on disk")

    monkeypatch.setattr(topicspace, "_MEMO", type(topicspace._MEMO)())
    monkeypatch.setattr(topicspace, "_ENCODER", [])
    monkeypatch.setattr(semantic, "Encoder", NoEncoder)
    np.testing.assert_array_equal(topicspace.encode(texts, store=True), first)

    kept.write_bytes(b"not a numpy file")
    monkeypatch.setattr(semantic, "Encoder", real_encoder)
    monkeypatch.setattr(topicspace, "_MEMO", type(topicspace._MEMO)())
    np.testing.assert_allclose(topicspace.encode(texts, store=True), first, atol=1e-6)
    np.testing.assert_allclose(np.load(kept), first, atol=1e-6)  # replaced by a good copy


def test_an_index_build_reads_the_vectors_the_app_kept_and_encodes_nothing(
    seeds_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk cache's build behind a small corpus's first page (a child process, so no memo shared)
    reads the vectors the app's process stored: the corpus is not encoded twice."""
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(topicspace, "_MEMO", type(topicspace._MEMO)())  # a fresh app process
    source = sources.FilesSource([seeds_dir])  # what the app opens the seeds with
    app_vectors = np.asarray(source.analysis(source.load().papers).model.semantic_)
    assert len(list((tmp_path / "cache" / "embeddings").glob("*.npy"))) == 1

    class NoEncoder:  # the build is another process: its encoder must not be asked
        def encode(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("the build encoded the corpus again")

    monkeypatch.setattr(topicspace, "_MEMO", type(topicspace._MEMO)())
    monkeypatch.setattr(topicspace, "_ENCODER", [])
    monkeypatch.setattr(semantic, "Encoder", NoEncoder)
    built = build_index([seeds_dir], tmp_path / "index", workers=1)
    assert built["representation"] == "minilm"
    np.testing.assert_array_equal(np.load(tmp_path / "index" / "semantic.npy"), app_vectors)


def test_no_vectors_are_written_where_disk_caches_are_off_or_for_uploads(
    seeds: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_DIR", "none")
    topicspace.encode([f"{text} (off)" for text in paper_texts(seeds.iloc[:3])], store=True)
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_DIR", str(tmp_path))
    sources.UploadSource.fit_in_worker(seeds.iloc[:20].reset_index(drop=True), "auto")
    assert not (tmp_path / "embeddings").exists()


def test_a_failing_encoder_leaves_the_default_in_lsa_and_an_asked_space_says_why(
    seeds: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:  # as onnxruntime fails on a damaged model file
        def encode(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("[ONNXRuntimeError] : 7 : INVALID_PROTOBUF")

    texts_seen = seeds.assign(abstract_clean=seeds["abstract_clean"] + " (a corpus no memo holds)")
    monkeypatch.setattr(topicspace, "_ENCODER", [])
    monkeypatch.setattr(semantic, "Encoder", Broken)
    assert topicspace.fit_topics(texts_seen).model.representation_ == "lsa"
    assert "sentence embedding failed (RuntimeError: [ONNXRuntimeError]" in caplog.text
    with pytest.raises(RuntimeError, match="INVALID_PROTOBUF"):
        topicspace.fit_topics(texts_seen, representation="minilm")
