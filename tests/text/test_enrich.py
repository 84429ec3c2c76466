"""add_derived_columns: the table contract of dashboard.schema, and properties over random frames."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.schema import CODE_STATUSES, CORE_COLUMNS, LINK_KINDS
from dashboard.system.cores import usable_cores
from dashboard.text.enrich import add_derived_columns, derive_fields

RAW = pd.DataFrame(
    {
        "id": ["a", "b", "c", "d"],
        "source": ["s.txt"] * 4,
        "position": [1, 2, 3, 4],
        "venue": ["ICML", "ICML", "", "ICLR"],
        "year": pd.array([2026, 2026, None, 2025], dtype="Int64"),
        "title": ["", "Own Title", "", ""],
        "abstract": [
            "We propose **PIAA**, a training-free framework. Code: https://github.com/a/piaa.git",
            r"Results on ImageNet and $75\\%$ of CIFAR-10. The code will be released upon acceptance.",
            "",
            "Project page: https://x.github.io/p/",
        ],
        "code_url": ["", "", "https://github.com/own/repo", ""],
        "keywords": [["x"], [], [], ["y", "z"]],
        "extra": [1, 2, 3, 4],
    }
)


def test_columns_types_and_order() -> None:
    table = add_derived_columns(RAW)
    assert list(table.columns) == [*CORE_COLUMNS, "keywords", "extra"]
    assert table["id"].tolist() == ["a", "b", "c", "d"]
    assert table.index.equals(RAW.index)
    strings = ("id", "source", "venue", "title", "abstract", "abstract_clean", "code_url", "github_repo")
    for name in (*strings, "code_status"):
        assert table[name].dtype == "str", name
    assert table["position"].dtype == "int64"
    assert table["year"].dtype == "Int64"
    assert table["n_words"].dtype == "int64"
    assert table["title_is_derived"].dtype == bool


def test_derived_values() -> None:
    table = add_derived_columns(RAW).set_index("id")
    a, b, c, d = (table.loc[key] for key in "abcd")
    assert a["title"] == "PIAA: a training-free framework" and a["title_is_derived"]
    assert a["method_names"] == ["PIAA"]
    assert a["links"] == [{"url": "https://github.com/a/piaa", "kind": "code"}]
    assert (a["code_url"], a["github_repo"]) == ("https://github.com/a/piaa", "a/piaa")
    assert a["code_status"] == "released"
    assert b["title"] == "Own Title" and not b["title_is_derived"]
    assert b["abstract_clean"].startswith("Results on ImageNet and 75% of CIFAR-10.")
    assert b["datasets"] == ["ImageNet", "CIFAR-10"]
    assert b["code_status"] == "promised"
    # a record's own code field counts even without an abstract
    assert (c["code_url"], c["github_repo"]) == ("https://github.com/own/repo", "own/repo")
    assert c["code_status"] == "released"
    assert c["title"] == "" and c["n_words"] == 0
    assert d["code_status"] == "project_page_only"
    assert d["links"] == [{"url": "https://x.github.io/p", "kind": "project_page"}]


def test_minimal_frame_gets_defaults() -> None:
    table = add_derived_columns(pd.DataFrame({"abstract": ["We introduce FooNet, a model.", None]}))
    assert list(table.columns[: len(CORE_COLUMNS)]) == list(CORE_COLUMNS)
    assert table["id"].tolist() == ["paper-1", "paper-2"]
    assert table["position"].tolist() == [1, 2]
    assert table["title"].tolist() == ["FooNet: a model", ""]
    assert table["year"].isna().all()


def test_empty_frame() -> None:
    table = add_derived_columns(pd.DataFrame({"abstract": pd.Series([], dtype="str")}))
    assert len(table) == 0
    assert list(table.columns) == list(CORE_COLUMNS)


def test_recomputes_derived_columns_of_a_reread_export() -> None:
    once = add_derived_columns(RAW)
    twice = add_derived_columns(once.drop(columns=["title"]).assign(title=RAW["title"]))
    assert twice[list(CORE_COLUMNS)].equals(once[list(CORE_COLUMNS)])


def test_abstract_that_is_only_markup_still_gets_a_title() -> None:
    fields = derive_fields("$$ $$ ** **")
    assert fields.title and fields.title_is_derived


_ABSTRACTS = st.one_of(
    st.none(),
    st.text(max_size=200),
    st.sampled_from(["We propose FooNet, a model. Code: github.com/a/b", "", "  ", "$x^2$ on ImageNet"]),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_ABSTRACTS, st.one_of(st.none(), st.text(max_size=20))), max_size=12))
def test_rows_and_ids_are_kept(rows: list[tuple[str | None, str | None]]) -> None:
    raw = pd.DataFrame(
        {
            "id": [f"id-{i}" for i in range(len(rows))],
            "abstract": [abstract for abstract, _ in rows],
            "title": [title for _, title in rows],
        },
        index=pd.RangeIndex(10, 10 + len(rows)),
    )
    table = add_derived_columns(raw)
    assert len(table) == len(raw)
    assert table["id"].tolist() == raw["id"].tolist()
    assert table.index.equals(raw.index)
    assert set(table["code_status"]) <= set(CODE_STATUSES)
    assert all(link["kind"] in LINK_KINDS for links in table["links"] for link in links)
    for abstract, title, derived in zip(
        raw["abstract"], table["title"], table["title_is_derived"], strict=True
    ):
        if derived and isinstance(abstract, str) and abstract.strip():
            assert title.strip()


@pytest.mark.corpora
def test_iclr_corpus(corpora_dir: Path) -> None:
    """All 1,000 ICLR records: titles kept, links found where the abstracts hold URLs."""
    records = [json.loads(line) for line in (corpora_dir / "iclr2026-openreview-1k" / "papers.jsonl").open()]
    raw = pd.DataFrame(
        {
            "id": [record["id"] for record in records],
            "title": [record["title"] or "" for record in records],
            "abstract": [record["abstract"] or "" for record in records],
        }
    )
    table = add_derived_columns(raw)
    assert len(table) == 1000 and not table["title_is_derived"].any()
    # one abstract holds a placeholder, http://URL.withheld.for.review, which is not a link
    with_url = table["abstract"].str.contains("http", regex=False) & ~table["abstract"].str.contains(
        "withheld"
    )
    assert (table.loc[with_url, "links"].map(len) > 0).all()
    assert (table["code_status"] == "released").sum() >= 60
    assert (table["n_words"] > 20).all()


_SPLIT_CHECK = r"""
import json, os, sys, threading
from pathlib import Path
from dashboard import corpus
from dashboard.text import enrich

raw = corpus.load([Path(sys.argv[1])], derive=False).papers
names = ("abstract", "title", "code_url", "project_url")
columns = tuple(enrich._strings(raw, name, len(raw)) for name in names)
block = enrich._derive_block
pids = set()


def recorded(start, size):
    return [(os.getpid(), row) for row in block(start, size)]


enrich._derive_block = recorded  # forked processes inherit it: each row says which process derived it
split = enrich.derive_all(columns, parallel_from=20)
pids = {pid for pid, _ in split}
enrich._derive_block = block
serial = [enrich.derive_fields(*row) for row in zip(*columns)]
holder = threading.Event()
threading.Thread(target=holder.wait, daemon=True).start()  # a second thread: no fork any more
print(json.dumps({
    "rows": len(serial), "processes": len(pids), "parent_derived": os.getpid() in pids,
    "same": [row for _, row in split] == serial,
    "with_a_thread": enrich._processes_for(len(serial), 20),
}))
holder.set()
"""


@pytest.mark.skipif(usable_cores() < 2, reason="needs two usable cores to split the work")
def test_a_large_corpus_is_derived_in_several_processes_with_the_same_result(tmp_path: Path) -> None:
    import subprocess
    import sys

    source = tmp_path / "papers.jsonl"  # 120 records with links, markup, code fields and titles
    records = [
        {"title": f"Paper {i}", "code_url": f"https://github.com/b/c{i}" if i % 3 == 0 else "",
         "abstract": f"We propose M{i}Net, a **model** for $x^{i}$. Code: github.com/a/r{i}."}
        for i in range(120)
    ]  # fmt: skip
    source.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    # A fresh process: pytest's own has threads by now, and a process with threads never forks.
    done = subprocess.run(
        [sys.executable, "-c", _SPLIT_CHECK, str(source)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["rows"] == 120 and facts["same"]
    assert facts["processes"] >= 2 and not facts["parent_derived"]
    assert facts["with_a_thread"] == 1


def test_a_repeated_row_is_derived_once_and_owns_its_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """A million "w" paragraphs (issue 56) derived the same fields a million times."""
    from dashboard.text import enrich

    calls: list[str] = []
    real = enrich.derive_fields
    monkeypatch.setattr(enrich, "derive_fields", lambda *row: calls.append(row[0]) or real(*row))
    abstract = "We propose PIAA, a framework evaluated on ImageNet. Code: github.com/a/piaa"
    raw = pd.DataFrame({"abstract": [abstract, "w", abstract, "w", "w"], "title": ["T", "", "T", "", ""]})
    table = add_derived_columns(raw)
    assert sorted(calls) == sorted([abstract, "w"])  # once per distinct row
    expected = add_derived_columns(raw.iloc[[0, 1]])
    for row, first in ((2, 0), (3, 1), (4, 1)):
        for column in table.columns:
            if column not in ("id", "position"):
                assert repr(table[column].iat[row]) == repr(expected[column].iat[first]), column
    assert table["method_names"].iat[0] == ["PIAA"] and table["datasets"].iat[0] == ["ImageNet"]
    for column in ("method_names", "links", "datasets"):  # equal, but never one shared list
        assert table[column].iat[0] is not table[column].iat[2]
        assert table[column].iat[3] is not table[column].iat[4]
