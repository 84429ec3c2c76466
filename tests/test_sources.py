"""`dashboard.sources`: one seam for where a corpus comes from, the same answers from raw files and from
a prebuilt index of them, and a damaged index that loads as no papers with a report naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dashboard import index, sources
from dashboard.filters import Filters

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "seeds"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sources") / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    return out


def test_open_source_picks_the_index_for_an_index_and_files_for_anything_else(built: Path) -> None:
    assert isinstance(sources.open_source([built]), sources.IndexSource)
    assert isinstance(sources.open_source([SEEDS]), sources.FilesSource)
    assert isinstance(sources.open_source([built, SEEDS]), sources.FilesSource)  # an index is one path


def test_files_and_their_index_give_the_same_papers_masks_and_term_counts(built: Path) -> None:
    files, opened = sources.open_source([SEEDS]), sources.open_source([built])
    raw, stored = files.load().papers, opened.load().papers
    assert len(raw) == len(stored) > 50
    assert sorted(raw["id"]) == sorted(stored["id"])
    assert opened.stored_word_index() is not None and files.stored_word_index() is None
    for selection in (Filters(q="diffusion"), Filters(q="graph -neural"), Filters(year=(2026,))):
        from_files = raw.loc[files.mask(selection, raw).to_numpy(), "id"]
        from_index = stored.loc[opened.mask(selection, stored).to_numpy(), "id"]
        assert sorted(from_files) == sorted(from_index), selection
    assert opened.mask(Filters(q="diffusion"), stored).sum() > 0  # the search is not vacuous
    stored_counts, raw_counts = opened.term_counts(stored, 1, False), files.term_counts(raw, 1, False)
    assert stored_counts.counts.shape[0] == len(stored) and raw_counts.counts.shape[0] == len(raw)
    assert set(stored_counts.terms) & set(raw_counts.terms)


def test_the_index_serves_its_stored_analysis_and_refits_at_another_number(built: Path) -> None:
    opened = sources.open_source([built])
    assert isinstance(opened, sources.IndexSource) and opened.opened is not None
    papers = opened.load().papers
    stored = opened.analysis(papers)
    assert stored is opened.opened.analysis  # read, not fitted again
    k = int(opened.opened.manifest["topics"])
    other = opened.analysis(papers, max(2, k - 1))
    assert other is not stored
    assert other.papers["topic"].nunique() <= max(2, k - 1) + 1  # outliers may add one


def test_a_damaged_index_loads_no_papers_and_its_report_names_the_file(built: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.index"
    broken.mkdir()
    shutil.copytree(built, broken, dirs_exist_ok=True)
    manifest = json.loads((broken / index.MANIFEST).read_text())
    manifest["papers"] = "many"
    (broken / index.MANIFEST).write_text(json.dumps(manifest))
    source = sources.open_source([broken])
    assert isinstance(source, sources.IndexSource) and source.opened is None
    result = source.load()
    assert result.papers.empty
    problems = [p for f in result.report.files for p in f.skipped]
    assert problems and problems[0].source == "broken.index" and "manifest" in problems[0].message
    assert np.asarray(source.mask(Filters(), result.papers)).size == 0


def test_the_cli_reads_both_through_the_seam(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dashboard.cli.main import main

    assert main(["search", str(built), "diffusion"]) == 0
    from_index = capsys.readouterr().out
    assert main(["search", str(SEEDS), "diffusion"]) == 0
    from_files = capsys.readouterr().out
    ids = lambda text: sorted(line.split(",")[1] for line in text.strip().splitlines()[1:])  # noqa: E731
    assert ids(from_index) == ids(from_files) and ids(from_files)
