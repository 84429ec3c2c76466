"""Ranked search (BM25 over the word index), its fallbacks, "papers like this", and the Papers page's
relevance order (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.apptest import full_titles

from dashboard import corpus
from dashboard.analytics import analysis
from dashboard.cli import common as cli_common
from dashboard.filters import Filters, search_text
from dashboard.search import like as similar
from dashboard.search import ranking
from dashboard.search.wordindex import WordIndex, words_of

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


def _index(texts: list[str]) -> WordIndex:
    return WordIndex.build(pd.Series(texts))


# --------------------------------------------------------------------- ranking


def test_a_title_match_outranks_a_passing_mention() -> None:
    index = _index(
        [
            "Robust training\nWe train networks; a gaussian process is used once as a prior.",
            "Gaussian Processes for Regression\nWe study regression with kernels.",
            "Unrelated\nNothing here.",
        ]
    )
    result = ranking.search(index, "gaussian process")
    assert result.rows.tolist() == [1, 0]
    assert result.scores[0] > result.scores[1] > 0


def test_the_index_holds_each_text_s_words_as_words_of_reads_them() -> None:
    """Non-ASCII letters, punctuation runs and capitals split and fold as `words_of` (Python's regex)
    does, with the row of each word and title words counted three times."""
    texts = [
        "Wörld-Models: 3D\u212aernels, x_y!!",
        "",
        "ÄÖÜ çà\nNaïve BAYES (NB) — émigré",
        "  tabs\tand\nnew lines  ",
    ]
    index = _index(texts)
    expected = sorted(set().union(*map(words_of, texts)))
    assert index.words.to_pylist() == expected
    for word in expected:
        row_of = [row for row, text in enumerate(texts) if word in words_of(text)]
        position = expected.index(word)
        assert index.indices[index.indptr[position] : index.indptr[position + 1]].tolist() == row_of, word
    # "Wörld" gives the words "w" and "rld"; a title's words count three times in a text's length.
    assert {"w", "rld", "world"} & set(expected) == {"w", "rld"}
    assert index.lengths.tolist() == [3 * 6, 0, 5, 4 + 2 * 2]


def test_more_mentions_rank_higher_and_short_papers_beat_long_ones() -> None:
    filler = " ".join(["word"] * 200)
    index = _index(
        ["t\ndiffusion once " + filler, "t\ndiffusion diffusion diffusion " + filler, "t\ndiffusion short"]
    )
    assert ranking.search(index, "diffusion").rows.tolist() == [2, 1, 0]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("graph -molecule", [1]),  # an excluded word removes the paper however relevant
        ('"graph networks"', [0]),  # a phrase must occur as a phrase
        ("graph networks", [0, 1]),  # both words, any place
    ],
)
def test_exclusions_and_phrases_keep_the_filter_semantics(q: str, expected: list[int]) -> None:
    index = _index(["Graph networks\nGraph networks for molecule design.", "Networks\nA graph of networks."])
    assert sorted(ranking.search(index, q).rows.tolist()) == sorted(expected)


def test_ranking_rows_are_exactly_the_filter_hits() -> None:
    papers = corpus.load([REPO / "seeds"]).papers
    text = search_text(papers)
    index = WordIndex.build(text)
    for q in ("diffusion", "graph neural", 'language -"large language"', "model data"):
        result = ranking.search(index, q)
        expected = np.flatnonzero(Filters(q=q).mask(papers, text=text).to_numpy())
        assert sorted(result.rows.tolist()) == expected.tolist(), q
        assert result.mode == "all" and not result.notes


@pytest.mark.parametrize("seed", range(6))
def test_best_first_is_the_order_of_a_lexsort_by_score_then_position(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3_000))
    scores = rng.choice(rng.random(40) * 12, size=n)  # few distinct scores: many ties, as BM25 gives
    scores[rng.random(n) < 0.1] = 0.0
    if seed % 2 and n > 10:  # scores apart in their last bits only: the keys cannot tell them apart
        scores[n // 2 :] = np.nextafter(scores[n // 2 :], np.inf)
        scores[rng.random(n) < 0.05] = -0.0
    expected = np.lexsort((np.arange(n), -scores))
    assert np.array_equal(ranking.best_first(scores), expected)


def test_best_first_breaks_ties_by_position_not_by_luck() -> None:
    scores = np.array([1.0, 3.0, 1.0, 3.0, 2.0, 0.0, 3.0])
    assert ranking.best_first(scores).tolist() == [1, 3, 6, 4, 0, 2, 5]
    assert ranking.best_first(np.array([np.nan, 1.0])).tolist() == [1, 0]  # NaN last, as lexsort puts it


def test_a_typo_or_a_plural_still_finds_the_paper_and_says_so() -> None:
    index = _index(["Transformer models\nAttention is used.", "Gaussian process\nKernel regression."] * 600)
    typo = ranking.search(index, "tranformer")
    assert typo.rows.tolist()[:1] == [0] and typo.query == "transformer"
    assert any('"tranformer"' in note for note in typo.notes)
    plural = ranking.search(index, "gaussian processes regressions")
    assert 1 in plural.rows.tolist() and any('"process"' in note for note in plural.notes)


def test_no_paper_with_every_word_falls_back_to_papers_with_some() -> None:
    index = _index(["Graph\nnetworks", "Diffusion\nimages", "Graph diffusion\nboth"])
    result = ranking.search(index, "graph images")
    assert result.mode == "any" and result.rows.tolist()[0] in (0, 1, 2)
    assert set(result.rows.tolist()) == {0, 1, 2}
    assert "some of them" in result.notes[-1]


def test_an_index_without_term_counts_still_ranks_and_says_so() -> None:
    built = _index(["Graph\ngraph graph", "Other\nA graph."])
    old = WordIndex(built.words, built.indptr, built.indices, built.odd_rows, built.n_papers, built.texts_of)
    result = ranking.search(old, "graph")
    assert sorted(result.rows.tolist()) == [0, 1]
    assert result.notes == (ranking.OLD_INDEX_NOTE,)


def test_matched_sentence_highlights_the_search_words() -> None:
    sentence, spans = ranking.matched_sentence("We study trees. Graph nets on graphs work.", "graph")
    assert sentence == "Graph nets on graphs work."
    assert [sentence[a:b] for a, b in spans] == ["Graph", "graph"]


def test_a_prebuilt_index_keeps_term_counts(tmp_path: Path) -> None:
    from dashboard import index as paper_index

    paper_index.build_index([REPO / "seeds"], tmp_path / "seeds.index")
    opened = paper_index.open_index(tmp_path / "seeds.index")
    assert opened.words.has_frequencies
    fresh = WordIndex.build(search_text(opened.papers))
    assert np.array_equal(np.asarray(opened.words.tf), fresh.tf)
    assert np.allclose(np.asarray(opened.words.lengths), fresh.lengths)
    # An index written before term counts existed (no tf.npy / lengths.npy) still opens.
    manifest = opened.manifest
    for name in ("tf", "lengths"):
        del manifest["files"][f"search/{name}.npy"]
        (tmp_path / "seeds.index" / "search" / f"{name}.npy").unlink()
    import json

    (tmp_path / "seeds.index" / "manifest.json").write_text(json.dumps(manifest))
    old = paper_index.open_index(tmp_path / "seeds.index")
    assert not old.words.has_frequencies
    assert len(ranking.search(old.words, "diffusion").rows) == int(old.search("diffusion").sum())


# --------------------------------------------------------------------- papers like this


@pytest.fixture(scope="module")
def seeds() -> Any:
    return analysis.analyze(corpus.load([REPO / "seeds"]).papers)


@pytest.mark.parametrize("name", sorted(similar.SPACES))
def test_a_paper_is_most_like_its_own_abstract(seeds: Any, name: str) -> None:
    space = similar.SPACES[name](seeds)
    texts = seeds.papers["title"] + ". " + seeds.papers["abstract_clean"]
    top = [similar.like_text(space, str(texts.iloc[row]), 1)[0][0] for row in range(10)]
    assert top == list(range(10))
    neighbours = similar.like_paper(space, 0, 5)
    assert 0 not in [r for r, _ in neighbours] and len(neighbours) == 5
    scores = [s for _, s in neighbours]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= 1.0001


def test_like_keeps_to_the_allowed_papers(seeds: Any) -> None:
    space = similar.SPACES[similar.DEFAULT_SPACE](seeds)
    allowed = np.zeros(len(seeds.papers), dtype=bool)
    allowed[[5, 7, 9]] = True
    assert {r for r, _ in similar.like_paper(space, 0, 10, allowed)} <= {5, 7, 9}
    assert similar.like_text(space, "zzzz qqqq", 10) == []  # nothing shared: nothing listed


@pytest.mark.parametrize(
    "query",
    [
        {"sort": "title"},
        {"like": "abc-1"},
        {"liketext": "Graph neural networks for molecules."},
        {"q": "graph", "like": "x", "liketext": "some text"},
    ],
)
def test_like_and_liketext_round_trip_through_the_url(query: dict[str, str]) -> None:
    filters, notices = Filters.from_query(query)
    assert not notices
    assert Filters.from_query(filters.to_query())[0] == filters
    assert {k: v for k, v in filters.to_query().items() if k in ("like", "liketext")} == {
        k: v for k, v in query.items() if k in ("like", "liketext")
    }
    assert filters.active_keys() == (["q"] if "q" in query else [])  # settings, not filters


def test_a_long_liketext_is_cut_with_a_notice() -> None:
    filters, notices = Filters.from_query({"liketext": "word " * 1000})
    assert len(filters.liketext) == similar.MAX_LIKE_TEXT
    assert notices and "shortened" in notices[0]


# --------------------------------------------------------------------- the Papers page


@pytest.fixture
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def _app(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page("src/dashboard/app_pages/papers.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.usefixtures("_seeds_only")
def test_the_papers_page_lists_a_search_by_relevance_and_sorts_it_other_ways(seeds: Any) -> None:
    from dashboard.ui import keys

    papers = seeds.papers
    at = _app({"q": "diffusion"})
    table = at.main.dataframe[0].value
    index = WordIndex.build(search_text(papers))
    expected = ranking.search(index, "diffusion")
    assert full_titles(table["title"], papers["title"]) == list(papers["title"].iloc[expected.rows])
    assert list(table["score"]) == sorted(table["score"], reverse=True)
    assert table["match"].str.contains("iffusion").any()
    assert "by relevance" in " ".join(c.value for c in at.main.caption)
    assert at.selectbox(key=keys.PAPERS_SORT).value == "relevance"
    at.selectbox(key=keys.PAPERS_SORT).set_value("").run()
    assert at.query_params.get("sort") in ("corpus", ["corpus"])
    shown = full_titles(at.main.dataframe[0].value["title"], papers["title"])
    assert shown == list(papers["title"].iloc[np.sort(expected.rows)])
    # More like this on an opened paper: like= in the URL, the table by similarity
    paper = str(papers["id"].iloc[int(expected.rows[0])])
    at = _app({"paper": paper})
    at.button(key=f"{keys.PAPERS_MORE_LIKE}.{paper}").click().run()
    assert at.query_params.get("like") in (paper, [paper])
    liked = at.main.dataframe[0].value
    assert paper not in set(liked.get("id", [])) and list(liked["score"]) == sorted(
        liked["score"], reverse=True
    )
    space = similar.SPACES[similar.DEFAULT_SPACE](seeds)
    expected_like = similar.like_paper(space, int(expected.rows[0]), 100)
    assert full_titles(liked["title"], papers["title"]) == list(
        papers["title"].iloc[[r for r, _ in expected_like]]
    )


# --------------------------------------------------------------------- the CLI


def test_the_search_command_prints_rank_id_title_score(capsys: pytest.CaptureFixture[str]) -> None:
    from dashboard.cli import main as cli

    assert cli.main(["search", str(REPO / "seeds"), "diffusion", "--top", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "rank,id,title,score" and len(out) == 4
    papers = corpus.load([REPO / "seeds"]).papers
    expected = ranking.search(WordIndex.build(search_text(papers)), "diffusion")
    assert [line.split(",")[1] for line in out[1:]] == list(papers["id"].iloc[expected.rows[:3]])


def test_the_search_command_runs_a_file_of_queries_and_like_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dashboard.cli import main as cli

    queries = tmp_path / "queries.txt"
    queries.write_text("# a comment\ngraph\n\ntranformer\n", encoding="utf-8")
    out = tmp_path / "hits.csv"
    assert (
        cli.main(["search", str(REPO / "seeds"), "--queries", str(queries), "--top", "2", "--out", str(out)])
        == 0
    )
    table = pd.read_csv(out)
    assert list(table.columns) == ["query", "rank", "id", "title", "score"]
    assert table["query"].tolist() == ["graph", "graph", "tranformer", "tranformer"]
    assert 'searched for "transformer"' in capsys.readouterr().err
    assert cli.main(["search", str(REPO / "seeds"), "--like", "graph neural networks", "--top", "2"]) == 0
    liked = capsys.readouterr().out.splitlines()
    assert liked[0] == "rank,id,title,score" and len(liked) == 3
    assert cli.main(["search", str(REPO / "seeds")]) == cli_common.EXIT_USAGE
