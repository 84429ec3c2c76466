"""Filters: URL parsing (forgiving), round trip, masks on a known table, search, describe and slug."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.synthetic import CONTRACT_COLUMNS, TOPIC_LABELS, make_papers

from dashboard.filters import (
    FACET_KEYS,
    MAX_QUERY_CHARS,
    MAX_VALUES_PER_KEY,
    URL_KEYS,
    Filters,
    SearchQuery,
    facet_counts,
    highlight_spans,
    parse_search,
)
from dashboard.schema import CODE_STATUSES, DECISION_TIERS, LINK_KINDS

PAPERS = make_papers()


def selected(query: dict) -> list[str]:
    filters, notices = Filters.from_query(query)
    assert notices == [], notices
    return list(PAPERS.loc[filters.mask(PAPERS), "id"])


# --------------------------------------------------------------------- each filter on the known table


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ["p1", "p2", "p3", "p4", "p5", "p6"]),
        # search: word starts, case-insensitive, in title, abstract and method names
        ({"q": "graph"}, ["p1", "p2"]),
        ({"q": "GRAPH"}, ["p1", "p2"]),
        ({"q": "graphs"}, ["p2"]),
        ({"q": "raph"}, []),
        ({"q": "graphmol"}, ["p1"]),
        ({"q": "diffusion guidance"}, ["p3"]),
        ({"q": '"message passing"'}, ["p2", "p6"]),
        ({"q": '"passing message"'}, []),
        ({"q": "diffusion -video"}, ["p4"]),
        ({"q": 'graph -"property prediction"'}, ["p2"]),
        ({"q": "图神经"}, ["p6"]),
        ({"q": "arxiv.org/abs/2401.00001"}, ["p5"]),
        ({"q": "(unbalanced [regex"}, []),
        ({"q": '"unclosed quote'}, []),
        ({"q": "-"}, ["p1", "p2", "p3", "p4", "p5", "p6"]),
        # topics, including the outliers (-1)
        ({"topic": "1"}, ["p3", "p4"]),
        ({"topic": ["0", "-1"]}, ["p1", "p2", "p5"]),
        # areas and datasets are lists: any one wanted value is enough
        ({"area": "Graphs"}, ["p1", "p2", "p6"]),
        ({"area": ["Theory", "Generative models"]}, ["p2", "p3", "p4"]),
        ({"dataset": "QM9"}, ["p1", "p6"]),
        ({"dataset": ["ImageNet", "UCF101"]}, ["p3", "p4", "p6"]),
        ({"venue": "ICLR"}, ["p3", "p4"]),
        ({"venue": ["ICLR", "NeurIPS"]}, ["p3", "p4", "p6"]),
        ({"year": "2024"}, ["p1", "p2"]),
        ({"year": ["2023", "2025"]}, ["p3", "p4", "p6"]),
        ({"source": "c.csv"}, ["p5", "p6"]),
        ({"code": "released"}, ["p1", "p6"]),
        ({"code": ["promised", "account_only"]}, ["p2", "p4"]),
        # link kinds look inside the links list
        ({"link": "code"}, ["p1", "p6"]),
        ({"link": "data"}, ["p6"]),
        ({"link": ["paper", "project_page"]}, ["p3", "p5"]),
        ({"words": "12-"}, ["p1", "p2", "p5"]),
        ({"words": "-9"}, ["p3", "p6"]),
        ({"words": "11-12"}, ["p2", "p4", "p5"]),
        ({"id": ["p2", "p5"]}, ["p2", "p5"]),
        # authors, institutions and countries are lists: exact names as the corpus spells them
        ({"author": "Ada Lovelace"}, ["p1", "p3", "p6"]),
        ({"author": ["Grace Hopper", "Alan Turing"]}, ["p1", "p2", "p3", "p4"]),
        ({"author": "ada lovelace"}, []),
        ({"author": "李明"}, ["p6"]),
        ({"institution": "Lab B"}, ["p1", "p2"]),
        ({"institution": ["Univ C", "清华大学"]}, ["p4", "p6"]),
        ({"country": "USA"}, ["p3", "p4"]),
        ({"country": ["UK", "China"]}, ["p1", "p2", "p3", "p6"]),
        ({"decision": "poster"}, ["p2", "p6"]),
        ({"decision": ["oral", "spotlight"]}, ["p1", "p3"]),
        ({"decision": "unknown"}, ["p5"]),
        # the search looks in the authors too (word starts, a phrase within one name)
        ({"q": "hopper"}, ["p3", "p4"]),
        ({"q": '"grace hopper"'}, ["p3", "p4"]),
        ({"q": '"turing grace"'}, []),
        ({"q": '"hopper ada"'}, []),
        ({"q": "turing graph"}, ["p1", "p2"]),
        # several filters combine with AND
        ({"q": "diffusion", "code": "account_only"}, ["p4"]),
        ({"area": "Graphs", "year": "2024", "link": "code"}, ["p1"]),
        ({"venue": "ICLR", "source": "a.txt"}, []),
        ({"author": "Ada Lovelace", "decision": "poster"}, ["p6"]),
        ({"country": "UK", "institution": "Univ A", "code": "released"}, ["p1"]),
    ],
)
def test_each_filter_selects_the_expected_papers(query: dict, expected: list[str]) -> None:
    assert selected(query) == expected


def test_word_counts_of_the_fixture_are_what_the_table_above_assumes() -> None:
    assert dict(zip(PAPERS["id"], PAPERS["n_words"], strict=True)) == {
        "p1": 13,
        "p2": 12,
        "p3": 9,
        "p4": 11,
        "p5": 12,
        "p6": 8,
    }


def test_search_gives_the_same_answer_on_python_and_arrow_strings() -> None:
    as_objects = PAPERS.astype({"title": object, "abstract_clean": object})
    for q in ["graph", '"message passing"', "图神经", "diffusion -video", "graph."]:
        f = Filters(q=q)
        assert list(f.mask(as_objects)) == list(f.mask(PAPERS)), q


def test_mask_keeps_the_index_and_ignores_filters_whose_column_is_missing() -> None:
    papers = PAPERS.set_index(pd.Index([10, 10, 11, 12, 13, 14]))
    mask = Filters(topic=(1,), dataset=("QM9",)).mask(papers)
    assert list(mask.index) == list(papers.index)
    assert list(mask) == [False] * 6
    # Before analysis the table has no topic column: the topic filter then restricts nothing.
    raw = PAPERS.drop(columns=["topic", "areas"])
    assert list(raw.loc[Filters(topic=(1,), area=("Graphs",)).mask(raw), "id"]) == list(PAPERS["id"])


def test_mask_can_leave_out_filters_for_facet_counts() -> None:
    f = Filters(topic=(1,), code=("released",))
    assert list(PAPERS.loc[f.mask(PAPERS), "id"]) == []
    assert list(PAPERS.loc[f.mask(PAPERS, ignore={"topic"}), "id"]) == ["p1", "p6"]


def test_an_empty_table_gives_an_empty_mask() -> None:
    assert Filters(q="x", area=("Graphs",)).mask(PAPERS.iloc[:0]).tolist() == []


# --------------------------------------------------------------------- parsing the URL


@pytest.mark.parametrize(
    ("query", "expected", "n_notices"),
    [
        ({"q": "  graph   nets "}, Filters(q="graph nets"), 0),
        ({"q": ["old", "new"]}, Filters(q="new"), 0),
        ({"topic": ["2", "x", "-5", "2"]}, Filters(topic=(2,)), 2),
        ({"year": ["2024", "soon", "99999"]}, Filters(year=(2024,)), 2),
        ({"code": ["released", "Released", "open"]}, Filters(code=("released",)), 2),
        ({"link": ["code", "github"]}, Filters(link=("code",)), 1),
        ({"decision": ["oral", "Oral", "accepted"]}, Filters(decision=("oral",)), 2),
        ({"author": ["B. Name", " ", "A. Name"]}, Filters(author=("A. Name", "B. Name")), 0),
        (
            {"institution": "Univ A", "country": ["UK", "UK"]},
            Filters(institution=("Univ A",), country=("UK",)),
            0,
        ),
        ({"words": "100-250"}, Filters(words=(100, 250)), 0),
        ({"words": "250-100"}, Filters(words=(100, 250)), 0),
        ({"words": " 100 - "}, Filters(words=(100, None)), 0),
        ({"words": "-"}, Filters(), 1),
        ({"words": "lots"}, Filters(), 1),
        ({"words": "1e9-"}, Filters(), 1),
        ({"words": ""}, Filters(), 0),
        ({"k": "8"}, Filters(k=8), 0),
        ({"k": "auto"}, Filters(), 0),
        ({"k": "1"}, Filters(), 1),
        ({"k": "many"}, Filters(), 1),
        ({"venue": ["ICML", "", "ICML"]}, Filters(venue=("ICML",)), 0),
        ({"source": "weird name (1).txt"}, Filters(source=("weird name (1).txt",)), 0),
        ({"unknown": "x", "embed": "true"}, Filters(), 0),
        ({"topic": ""}, Filters(), 0),
        ({"box": "1.5,-2,0,3"}, Filters(box=(-2.0, 1.5, 0.0, 3.0)), 0),
        ({"box": "0.1234567,1,2,3"}, Filters(box=(0.12346, 1.0, 2.0, 3.0)), 0),
        ({"box": "1,2,3"}, Filters(), 1),
        ({"box": "a,b,c,d"}, Filters(), 1),
        ({"box": "inf,1,2,3"}, Filters(), 1),
        ({"rating": "5-6.5"}, Filters(rating=(5.0, 6.5)), 0),
        ({"rating": "6.5-5"}, Filters(rating=(5.0, 6.5)), 0),
        ({"rating": "5.333-"}, Filters(rating=(5.33, None)), 0),
        ({"rating": "good"}, Filters(), 1),
        ({"rating": "-"}, Filters(), 1),
        ({"rating": "-1-5"}, Filters(), 1),
        ({"spread": "1.5-"}, Filters(spread=(1.5, None)), 0),
        ({"spread": "wide"}, Filters(), 1),
        ({"reviews": "3-"}, Filters(reviews=(3, None)), 0),
        ({"reviews": "-4"}, Filters(reviews=(None, 4)), 0),
        ({"reviews": "2.5-"}, Filters(), 1),
        ({"reviews": ""}, Filters(), 0),
    ],
)
def test_from_query_notes_bad_values(query: dict, expected: Filters, n_notices: int) -> None:
    filters, notices = Filters.from_query(query)
    assert filters == expected
    assert len(notices) == n_notices, notices


def test_notices_name_the_key_and_the_bad_value() -> None:
    _, notices = Filters.from_query({"year": "soon", "code": "open"})
    assert notices[0].startswith('year: ignored "soon"')
    assert notices[1].startswith('code status: ignored "open"')


def test_hostile_sizes_are_bounded() -> None:
    filters, notices = Filters.from_query({"q": "x" * 10_000, "id": [f"p{i}" for i in range(5_000)]})
    assert len(filters.q) == MAX_QUERY_CHARS
    assert len(filters.id) == MAX_VALUES_PER_KEY
    assert len(notices) == 2


def test_to_query_leaves_out_defaults() -> None:
    assert Filters().to_query() == {}
    assert Filters(q="graph", year=(2025, 2024), words=(None, 80), k=5).to_query() == {
        "q": "graph",
        "year": ["2024", "2025"],
        "words": "-80",
        "k": "5",
    }


_text = st.text(min_size=0, max_size=30)


def _sha6(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def test_a_box_on_the_map_keeps_the_papers_inside_it() -> None:
    papers = pd.DataFrame({"id": ["a", "b", "c"], "x": [0.0, 1.0, 5.0], "y": [0.0, 2.0, 0.5]})
    assert Filters(box=(-1, 1, -1, 2)).mask(papers).tolist() == [True, True, False]
    assert Filters(box=(-1, 1, -1, 2)).to_query() == {"box": "-1,1,-1,2"}


filters_strategy = st.builds(
    Filters,
    q=_text,
    topic=st.lists(st.integers(-1, 300), max_size=4).map(tuple),
    area=st.lists(_text, max_size=3).map(tuple),
    venue=st.lists(_text, max_size=3).map(tuple),
    year=st.lists(st.integers(1900, 2100), max_size=3).map(tuple),
    source=st.lists(_text, max_size=3).map(tuple),
    code=st.lists(st.sampled_from(CODE_STATUSES), max_size=3).map(tuple),
    link=st.lists(st.sampled_from(LINK_KINDS), max_size=3).map(tuple),
    dataset=st.lists(_text, max_size=3).map(tuple),
    author=st.lists(_text, max_size=3).map(tuple),
    institution=st.lists(_text, max_size=3).map(tuple),
    country=st.lists(_text, max_size=3).map(tuple),
    decision=st.lists(st.sampled_from(DECISION_TIERS), max_size=3).map(tuple),
    words=st.tuples(st.none() | st.integers(0, 10**6), st.none() | st.integers(0, 10**6)),
    id=st.lists(_text, max_size=3).map(tuple),
    box=st.just(()) | st.lists(st.floats(-1e6, 1e6), min_size=4, max_size=4).map(tuple),
    k=st.none() | st.integers(2, 200),
    rating=st.tuples(st.none() | st.floats(0, 1e6), st.none() | st.floats(0, 1e6)),
    spread=st.tuples(st.none() | st.floats(0, 1e3), st.none() | st.floats(0, 1e3)),
    reviews=st.tuples(st.none() | st.integers(0, 10**6), st.none() | st.integers(0, 10**6)),
)


@settings(max_examples=200, deadline=None)
@given(filters_strategy)
def test_url_round_trip(filters: Filters) -> None:
    parsed, notices = Filters.from_query(filters.to_query())
    assert parsed == filters
    assert notices == []


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*URL_KEYS, "other"]),
        st.one_of(_text, st.lists(st.text(max_size=12), max_size=4)),
    )
)
def test_parsing_any_query_never_raises_and_masks_cleanly(query: dict) -> None:
    filters, notices = Filters.from_query(query)
    assert all(isinstance(n, str) for n in notices)
    mask = filters.mask(PAPERS)
    assert mask.dtype == bool and len(mask) == len(PAPERS)


@settings(max_examples=100, deadline=None)
@given(filters_strategy)
def test_slug_is_a_safe_file_name(filters: Filters) -> None:
    slug = filters.slug()
    assert 0 < len(slug) <= 80
    # a dot only inside a number (``rating-5-6.5``): never leading, never ``..``
    assert all(c.isascii() and (c.isalnum() or c in "-_+.") for c in slug)
    assert not slug.startswith(".") and ".." not in slug
    dots = [i for i, c in enumerate(slug) if c == "."]
    assert all(slug[i - 1].isdigit() and slug[i + 1 : i + 2].isdigit() for i in dots)


# --------------------------------------------------------------------- working with the data


def test_restrict_drops_values_the_corpus_lacks() -> None:
    f = Filters(topic=(1, 9), venue=("ICML",), q="x")
    restricted, notices = f.restrict({"topic": {0, 1, 2, -1}, "venue": {"ICML"}})
    assert restricted == Filters(topic=(1,), venue=("ICML",), q="x")
    assert notices == ['topic: no "9" in this corpus; ignored']


def test_restrict_finds_a_typed_name_whatever_its_case_and_spacing() -> None:
    facets = facet_counts(PAPERS)
    available = {key: list(counts.index) for key, counts in facets.items()}
    f = Filters(author=("ada  LOVELACE", "Nobody Here"), country=("uk",), venue=("iclr",))
    restricted, notices = f.restrict(available)
    assert restricted.author == ("Ada Lovelace",)
    assert restricted.country == ("UK",)
    assert restricted.venue == ()  # venues are picked from a list, never typed: exact only
    assert notices == [
        'venue: no "iclr" in this corpus; ignored',
        'author: no "Nobody Here" in this corpus; ignored',
    ]
    assert list(PAPERS.loc[restricted.mask(PAPERS), "id"]) == ["p1", "p3"]  # Ada Lovelace in the UK
    assert list(PAPERS.loc[Filters(author=restricted.author).mask(PAPERS), "id"]) == ["p1", "p3", "p6"]


@pytest.mark.parametrize("like", [Filters(like="p1"), Filters(liketext="graph neural networks")])
def test_papers_like_is_a_filter_that_clear_removes(like: Filters) -> None:
    """ "Papers like" restricts the papers every page counts and a download holds (one count)."""
    assert not like.is_empty
    assert like.cleared().is_empty
    assert "papers like" in like.describe()


def test_cleared_keeps_settings_and_without_drops_named_filters() -> None:
    f = Filters(q="graph", topic=(1,), k=6)
    assert f.cleared() == Filters(k=6)
    assert f.cleared().is_empty and not f.is_empty
    assert f.without("topic") == Filters(q="graph", k=6)
    assert f.active_keys() == ["q", "topic"]


@pytest.mark.parametrize(
    ("filters", "description", "slug"),
    [
        (Filters(), "no filters", "all"),
        (Filters(q="graph"), 'search "graph"', "q-graph"),
        (Filters(q='graph -"neural net"'), 'search graph -"neural net"', "q-graph-not-neural-net"),
        (Filters(topic=(1, -1)), "topic: outliers, diffusion · guidance · sampling", "topic-outlier+1"),
        (Filters(code=("account_only",)), "code status: account only", "code-account-only"),
        (Filters(year=(2024,), venue=("ICML",)), "venue: ICML · year: 2024", "venue-icml_year-2024"),
        (Filters(words=(100, None)), "≥ 100 words", "words-100-"),
        (Filters(words=(None, 80)), "≤ 80 words", "words--80"),
        (Filters(id=("a", "b")), "2 picked papers", "2-picked"),
        (Filters(box=(0, 1, 0, 1)), "a box on the map", "box-" + _sha6(repr((0.0, 1.0, 0.0, 1.0)))),
        (Filters(source=("Café.txt",)), "source file: Café.txt", "source-cafe-txt"),
        (
            Filters(author=("Ada Lovelace", "Alan Turing")),
            "author: Ada Lovelace, Alan Turing",
            "author-ada-lovelace+alan-turing",
        ),
        (Filters(institution=("Univ A",)), "institution: Univ A", "institution-univ-a"),
        (Filters(rating=(5, 6.5)), "mean score 5-6.5", "rating-5-6.5"),
        (Filters(spread=(1.5, None)), "score spread ≥ 1.5", "spread-1.5-"),
        (Filters(reviews=(None, 3)), "reviews ≤ 3", "reviews--3"),
        (
            Filters(country=("UK",), decision=("oral", "poster")),
            "country: UK · decision: oral, poster",
            "country-uk_decision-oral+poster",
        ),
    ],
)
def test_describe_and_slug(filters: Filters, description: str, slug: str) -> None:
    assert filters.describe(TOPIC_LABELS) == description
    assert filters.slug() == slug


def test_long_slugs_stay_distinct() -> None:
    a = Filters(source=tuple(f"file-number-{i}.txt" for i in range(20)))
    b = Filters(source=tuple(f"file-number-{i}.txt" for i in range(21)))
    assert len(a.slug()) <= 80 and len(b.slug()) <= 80
    assert a.slug() != b.slug()


def test_text_in_other_scripts_gets_a_stable_slug() -> None:
    assert Filters(q="图神经").slug() == Filters(q="图神经").slug() != Filters(q="扩散").slug()


# --------------------------------------------------------------------- search parsing and highlighting


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("", SearchQuery()),
        ("Graph  Nets", SearchQuery(include=("graph", "nets"))),
        ('"message  passing" -video', SearchQuery(include=("message passing",), exclude=("video",))),
        ('-"very deep" net', SearchQuery(include=("net",), exclude=("very deep",))),
        ('"open ended', SearchQuery(include=("open ended",))),
        ("- -- graph graph", SearchQuery(include=("graph",))),
        ('""', SearchQuery()),
    ],
)
def test_parse_search(q: str, expected: SearchQuery) -> None:
    assert parse_search(q) == expected


@pytest.mark.parametrize(
    ("text", "q", "spans"),
    [
        ("Graph nets on graphs", "graph", [(0, 5), (14, 19)]),
        ("a paragraph", "graph", []),
        ("message-passing and message passing", '"message passing"', [(0, 15), (20, 35)]),
        ("graph nets", "graph nets", [(0, 5), (6, 10)]),
        ("graphnets", 'graph "graphnet"', [(0, 8)]),
        ("no match", "-match", []),
        ("我们研究图神经网络", "图神经", [(4, 7)]),
        ("cost $5 (approx.)", "(approx.)", [(8, 17)]),
    ],
)
def test_highlight_spans(text: str, q: str, spans: list[tuple[int, int]]) -> None:
    assert highlight_spans(text, q) == spans


def test_facet_counts_list_what_a_user_can_pick_with_paper_counts() -> None:
    facets = facet_counts(PAPERS.assign(datasets=[["QM9", "QM9"], [], [], [], [], []]))
    assert facets["topic"].to_dict() == {0: 2, 1: 2, -1: 1, 2: 1}
    assert facets["venue"].to_dict() == {"ICML": 2, "ICLR": 2, "NeurIPS": 1}
    assert facets["link"].to_dict() == {"code": 2, "project_page": 1, "account": 1, "paper": 1, "data": 1}
    assert facets["dataset"].to_dict() == {"QM9": 1}
    assert facets["author"].to_dict() == {"Ada Lovelace": 3, "Alan Turing": 2, "Grace Hopper": 2, "李明": 1}
    assert facets["institution"].to_dict() == {"Univ A": 2, "Lab B": 2, "Univ C": 1, "清华大学": 1}
    assert facets["country"].to_dict() == {"UK": 3, "USA": 2, "China": 1}
    assert facets["decision"].to_dict() == {"poster": 2, "oral": 1, "spotlight": 1, "reject": 1, "unknown": 1}
    assert set(facets) == set(FACET_KEYS)
    assert "topic" not in facet_counts(PAPERS.drop(columns=["topic"]))
    # A corpus without the issue-10 columns offers none of their filters, and they restrict nothing.
    bare = PAPERS.drop(columns=list(CONTRACT_COLUMNS))
    assert not {"author", "institution", "country", "decision"} & set(facet_counts(bare))
    assert Filters(author=("Ada Lovelace",), decision=("oral",)).mask(bare).all()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ["a", "b", "c", "d"]),
        ({"rating": "5-6"}, ["a", "b"]),
        ({"rating": "5.33-5.33"}, ["b"]),  # compared at two decimals: 16/3 is 5.33
        ({"rating": "7-"}, []),
        ({"spread": "1-"}, ["b"]),
        ({"reviews": "3-"}, ["b"]),
        ({"reviews": "-2"}, ["a"]),  # at most two scored reviews: never the unscored paper
        ({"rating": "0-", "reviews": "0-"}, ["a", "b"]),  # a paper without scores passes no score filter
    ],
)
def test_score_filters_select_by_mean_spread_and_number_of_reviews(query: dict, expected: list[str]) -> None:
    papers = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "rating_mean": [6.0, 16 / 3, float("nan"), float("nan")],
            "rating_sd": [0.0, 1.25, float("nan"), float("nan")],
            "n_reviews": [2, 3, 0, 0],
        }
    )
    filters, notices = Filters.from_query(query)
    assert notices == []
    assert list(papers.loc[filters.mask(papers), "id"]) == expected
    assert Filters(rating=(5, 6)).mask(PAPERS).all()  # a table without scores: the filter restricts nothing
