"""Text on screen: bidi controls and invisible characters never reach a label, escaped exactly once."""

from __future__ import annotations

import html

import pandas as pd
import pytest

from dashboard import charts, screen

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
