"""Text hygiene of issue 10: what PDF extraction and LaTeX leave in abstracts, rendered in abstract_clean."""

from __future__ import annotations

import pytest

from dashboard.text.clean import clean_markup


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        # PDF-extraction artefacts: glyph ids the extractor could not map (a soft hyphen, often)
        ("multi(cid:173)task learning", "multitask learning"),
        ("a (cid:12) b", "a b"),
        # ligatures
        ("the ﬁrst eﬃcient ﬂow", "the first efficient flow"),
        # O^*( keeps its star, in math and outside it, even twice in one abstract
        (r"runs in $O^*(n)$ time", "runs in O*(n) time"),
        ("runs in O^*(n) and O^*(m) time", "runs in O^*(n) and O^*(m) time"),
        # authors' own macros keep their neighbours
        (r"We propose \ours{}, a method", "We propose ours, a method"),
        (r"our \sysname\ is fast", "our sysname is fast"),
        (r"the \OURS{}-L model", "the OURS-L model"),
        (r"\modelname-XL beats \modelname-S", "modelname-XL beats modelname-S"),
        (r"as \etal{} show, \eg graphs", "as et al. show, e.g. graphs"),
        (r"methods (\ie ours) win", "methods (i.e. ours) win"),
    ],
)
def test_hygiene(raw: str, clean: str) -> None:
    assert clean_markup(raw) == clean
