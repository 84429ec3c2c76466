"""Text on screen: bidi controls and invisible characters never reach a label, escaped exactly once."""

from __future__ import annotations

import html

import pandas as pd
import pytest

from dashboard import screen
from dashboard.figures import charts

BIDI_AND_INVISIBLE = [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # embeddings, overrides
    "\u2066", "\u2067", "\u2068", "\u2069",  # isolates
    "\u200e", "\u200f", "\u061c",  # marks
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\U000e0041",  # zero-width, tags
]  # fmt: skip


@pytest.mark.parametrize("character", BIDI_AND_INVISIBLE)
def test_visible_removes_every_bidi_and_invisible_character(character: str) -> None:
    assert screen.visible(f"T8 {character}gnp.exe") == "T8 gnp.exe"
    assert screen.has_invisible(character)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("line\nbreak\ttab", "line\nbreak\ttab"),
        ("para\u2029graph\u2028line", "para graph line"),
        ("bell\x07 esc\x1b[31m", "bell esc[31m"),
        ("عربي and 中文 and é", "عربي and 中文 and é"),  # right-to-left letters keep their own direction
    ],
)
def test_visible_keeps_what_can_be_read(text: str, expected: str) -> None:
    assert screen.visible(text) == expected


HOSTILE_LABEL = 'He said "hi" & <b>left</b> T8 \u202egnp.exe'


def _texts(figure: object) -> list[str]:
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    walk(figure.to_plotly_json())  # type: ignore[attr-defined]
    return found


@pytest.mark.parametrize(
    "make",
    [
        lambda: charts.top_counts(pd.Series({HOSTILE_LABEL: 3, "other": 1}), title=HOSTILE_LABEL),
        lambda: charts.distinctive_terms(
            pd.DataFrame({"term": [HOSTILE_LABEL, "b"], "z": [3.0, 2.0], "count": [3, 2]}), title="t"
        ),
        lambda: charts.similarity_heatmap(
            pd.DataFrame([[1.0, 0.5], [0.5, 1.0]]), labels=[HOSTILE_LABEL, "b"], titles=[HOSTILE_LABEL, "b"]
        ),
    ],
)
def test_chart_labels_are_escaped_once_and_carry_no_bidi_controls(make: object) -> None:
    texts = _texts(make())  # type: ignore[operator]
    labels = [t for t in texts if "said" in t]
    assert labels, texts
    for label in labels:
        assert not screen.has_invisible(label)
        assert "&quot;" not in label and "&amp;amp;" not in label and "&amp;lt;" not in label
        assert "<b>" not in label  # the corpus's tags are text, never markup
        shown = html.unescape(label.replace("<br>", " ")).rstrip("…")  # what Plotly draws
        whole = 'He said "hi" & <b>left</b> T8 gnp.exe'
        assert whole in shown or whole.startswith(shown), shown  # cut with "…" where it is long


def test_visible_frame_cleans_text_and_list_cells_and_keeps_clean_frames() -> None:
    frame = pd.DataFrame(
        {
            "title": pd.Series(["T8 \u202egnp.exe", "plain"], dtype="str"),
            "authors": [["A\u200bda", "Bo"], ["Cy"]],
            "links": [[{"url": "https://x.org/\u202e"}], []],
            "n": [1, 2],
        }
    )
    cleaned = screen.visible_frame(frame)
    assert cleaned["title"].tolist() == ["T8 gnp.exe", "plain"]
    assert cleaned["authors"].tolist() == [["Ada", "Bo"], ["Cy"]]
    assert cleaned["links"].tolist() == frame["links"].tolist()  # dicts kept: URLs are vetted apart
    assert frame["title"].iloc[0] == "T8 \u202egnp.exe"  # the input is not modified
    assert screen.visible_frame(cleaned) is cleaned


def test_a_list_item_of_invisible_characters_only_is_dropped_not_kept_empty() -> None:
    """Found by the export round trip (hypothesis): an author ``"\u00ad"`` loaded as ``""`` from JSON
    Lines, and was gone after a CSV export and a load, so the two tables differed."""
    frame = pd.DataFrame({"authors": [["\u00ad", "Ann Lee", "\u200b"], ["\u00ad"]]})
    assert screen.visible_frame(frame, strip=True)["authors"].tolist() == [["Ann Lee"], []]


def test_an_upload_with_bidi_controls_shows_none_in_tables_options_or_charts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    rows = ["title,abstract,venue,authors"]
    for i in range(6):
        rows.append(
            f'"T{i} \u202egnp.exe",We study graphs and \u2066models\u2069 number {i}.,'
            f'"Ven\u200bue{i % 2}","A\u202eda; Bo"'
        )
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.switch_page("src/dashboard/app_pages/papers.py")
    at.run()
    at.sidebar.get("file_uploader")[0].set_value(("bidi.csv", "\n".join(rows).encode(), "text/csv"))
    at.run()
    assert not at.exception
    table = at.main.dataframe[0].value
    assert table["title"].str.startswith("T").all() and table["title"].iloc[0].endswith("gnp.exe")
    for column in table.columns:
        assert not table[column].astype(str).map(screen.has_invisible).any(), column
    options = [o for box in at.sidebar.multiselect for o in box.options]
    assert options and not any(screen.has_invisible(o) for o in options)
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    assert not at.exception
    specs = [chart.proto.spec for chart in at.get("plotly_chart")]
    assert specs and not any(screen.has_invisible(spec) for spec in specs)


def test_the_reader_and_an_index_built_from_it_carry_no_invisible_characters(tmp_path: object) -> None:
    # One place removes them: the reader. The file, the CLI and the prebuilt index all go through it.
    from pathlib import Path

    from dashboard import corpus
    from dashboard import index as index

    folder = Path(str(tmp_path))
    import json

    lines = [
        json.dumps(
            {
                "title": f"T{i} \u202egnp.exe",
                "abstract": f"We study graphs and \u2066models\u2069 {i}.",
                "venue": "Ven\u200bue",
                "authors": ["A\u202eda", "Bo"],
            }
        )
        for i in range(30)
    ]
    (folder / "bidi.jsonl").write_text("\n".join(lines) + "\n")
    loaded = corpus.load([folder / "bidi.jsonl"]).papers
    index.build_index([folder / "bidi.jsonl"], folder / "idx", n_topics=2, workers=1)
    built = index.open_index(folder / "idx").papers
    for papers in (loaded, built):
        assert papers["title"].iloc[0] == "T0 gnp.exe"
        assert papers["venue"].iloc[0] == "Venue"
        assert list(papers["authors"].iloc[0]) == ["Ada", "Bo"]
        for column in papers.columns:
            assert not papers[column].astype(str).map(screen.has_invisible).any(), column


def test_a_field_that_starts_with_an_invisible_character_is_stripped_after_it_goes() -> None:
    from dashboard import corpus

    record = '{"title": "T", "abstract": "\\u00ad We study graphs.", "authors": ["\\u200b Bo"]}'
    papers = corpus.load_uploads([("a.jsonl", record.encode())]).papers
    assert papers["abstract"][0] == "We study graphs."
    assert list(papers["authors"][0]) == ["Bo"]
