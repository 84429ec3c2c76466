"""``paper-dashboard recommend``: a real library file (made through `Library`), a real corpus file, and
the table it writes (never the list's own papers; a clear message and exit 2 for a missing library or
list)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dashboard import corpus
from dashboard.cli import main as cli
from dashboard.library.store import Library

GRAPHS = [
    "Graph neural networks for molecule property prediction",
    "Message passing graph networks on molecule graphs",
    "Graph transformers for protein and molecule structure",
    "Equivariant graph networks for molecule dynamics",
    "Graph neural networks predict protein molecule binding",
    "Scalable graph neural networks for large molecule graphs",
    "Molecule generation with graph neural networks",
]
IMAGES = [
    "Diffusion models for image generation",
    "Image diffusion sampling with fewer steps",
    "Latent diffusion for high resolution image synthesis",
    "Guidance for image diffusion models",
    "Video and image diffusion generation at scale",
    "Consistency models distil image diffusion",
    "Image editing with text guided diffusion",
]


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    """Fourteen papers on two subjects: graphs (g0-g6) and image diffusion (d0-d6)."""
    path = tmp_path / "papers.jsonl"
    records = [
        {
            "id": f"{prefix}{n}",
            "title": title,
            "abstract": f"{title}. We study {title.lower()} and report results on standard benchmarks.",
        }
        for prefix, titles in (("g", GRAPHS), ("d", IMAGES))
        for n, title in enumerate(titles)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def library_file(tmp_path: Path, corpus_file: Path) -> Path:
    """A library with "graphs" (three graph papers), "pair" (two) and "elsewhere" (a paper of no corpus)."""
    papers = corpus.load([corpus_file]).papers.set_index("id", drop=False)
    path = tmp_path / "library.sqlite"
    with Library.open(path) as lib:
        lib.add("graphs", papers.loc[["g0", "g1", "g2"]])
        lib.add("pair", papers.loc[["g0", "g1"]])
        lib.add(
            "elsewhere", pd.DataFrame([{"id": "zz", "title": "A paper of another corpus", "abstract": "No."}])
        )
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _table(text: str) -> pd.DataFrame:
    from io import StringIO

    return pd.read_csv(StringIO(text), dtype={"id": str})


def test_writes_rank_id_title_score_without_the_lists_papers(corpus_file, library_file, capsys) -> None:
    code, out, err = run(
        ["recommend", str(corpus_file), "--library", str(library_file), "--list", "graphs", "--top", "20"],
        capsys,
    )
    assert code == 0, err
    table = _table(out)
    assert list(table.columns) == ["rank", "id", "title", "score"]
    assert table["rank"].tolist() == list(range(1, 12))  # every paper but the list's three
    assert not {"g0", "g1", "g2"} & set(table["id"])
    assert set(table["id"].head(4)) == {"g3", "g4", "g5", "g6"}  # the list's subject first
    assert table["score"].is_monotonic_decreasing
    assert "fewer than 3" not in err


def test_top_and_out(corpus_file, library_file, tmp_path: Path, capsys) -> None:
    out_file = tmp_path / "rec.csv"
    code, out, err = run(
        ["recommend", str(corpus_file), "--library", str(library_file), "--list", "graphs", "--top", "2",
         "--out", str(out_file)],
        capsys,
    )  # fmt: skip
    assert (code, out) == (0, "")
    assert "wrote 2 rows" in err
    table = pd.read_csv(out_file, dtype={"id": str})
    assert len(table) == 2 and set(table["id"]) <= {"g3", "g4", "g5", "g6"}


def test_a_list_of_two_says_it_lists_papers_like_them(corpus_file, library_file, capsys) -> None:
    code, out, err = run(
        ["recommend", str(corpus_file), "--library", str(library_file), "--list", "pair", "--top", "3"],
        capsys,
    )
    assert code == 0
    assert "fewer than 3" in err and "most like them" in err
    assert not {"g0", "g1"} & set(_table(out)["id"])


def test_a_missing_library_file_is_named_and_not_created(corpus_file, tmp_path: Path, capsys) -> None:
    missing = tmp_path / "typo.sqlite"
    code, out, err = run(
        ["recommend", str(corpus_file), "--library", str(missing), "--list", "graphs"], capsys
    )
    assert (code, out) == (2, "")
    assert f"no library at {missing}" in err
    assert not missing.exists()


def test_a_missing_list_is_named_with_the_lists_there_are(corpus_file, library_file, capsys) -> None:
    code, out, err = run(
        ["recommend", str(corpus_file), "--library", str(library_file), "--list", "nope"], capsys
    )
    assert (code, out) == (2, "")
    assert 'no list "nope"' in err and '"graphs"' in err and '"pair"' in err


def test_a_list_with_no_paper_in_this_corpus_recommends_nothing(corpus_file, library_file, capsys) -> None:
    code, out, err = run(
        ["recommend", str(corpus_file), "--library", str(library_file), "--list", "elsewhere"], capsys
    )
    assert (code, out) == (1, "")
    assert "not in this corpus" in err and "nothing to recommend" in err
