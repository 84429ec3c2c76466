"""Untrusted text helpers: escaped HTML with only our tags, escaped markdown, http(s)-only links."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import screen
from dashboard.ui import markup
from dashboard.ui.markup import (
    checked_url,
    chips_html,
    escape_markdown,
    link_html,
    marked_html,
    safe_url,
    text_html,
)

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[data](data:text/html;base64,PHNjcmlwdD4=)",
    ":red[red text] :material/home: :rainbow[x]",
    "costs $5 and $x^2$ here",
    "&lt;b&gt; &amp; entities",
    "**bold** _it_ `code` # heading",
    "\u202eevil\u202c bidi",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_text_html_has_no_tags_of_its_own(text: str) -> None:
    out = text_html(text)
    assert "<" not in out.replace("<br>", "")
    assert "\u202e" not in out


@pytest.mark.parametrize("text", HOSTILE)
def test_marked_html_only_adds_mark_tags(text: str) -> None:
    out = marked_html(text, [(0, 4, "shared"), (2, 9, "distinct"), (len(text) - 3, len(text) + 50)])
    tags = re.findall(r"</?[a-zA-Z][^>]*>", out)
    assert set(tags) <= {'<mark class="shared">', "<mark>", "</mark>", "<br>"}


@pytest.mark.parametrize(
    ("text", "spans", "expected"),
    [
        ("abc", [], "abc"),
        ("abc", [(1, 2)], "a<mark>b</mark>c"),
        ("abc", [(2, 1), (5, 9)], "abc"),
        ("abcdef", [(3, 5), (0, 1)], "<mark>a</mark>bc<mark>de</mark>f"),
        ("abcdef", [(0, 4), (2, 6)], "<mark>abcd</mark>ef"),
        ("a<b", [(1, 2, "Shared Term!")], 'a<mark class="sharedterm">&lt;</mark>b'),
        ("a\nb", [], "a<br>b"),
    ],
)
def test_marked_html(text: str, spans: list, expected: str) -> None:
    assert marked_html(text, spans) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.lists(st.tuples(st.integers(-5, 70), st.integers(-5, 70)), max_size=5))
def test_marked_html_keeps_the_text(text: str, spans: list) -> None:
    out = marked_html(text, spans)
    visible = re.sub(r"</?mark[^>]*>", "", out).replace("<br>", "\n")
    assert html.unescape(visible) == screen.visible(text)  # bidi, invisible, control characters gone


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words", "plain words"),
        (":red[x]", r"\:red\[x\]"),
        ("$5", r"\$5"),
        ("<b>", r"\<b\>"),
        ("a\n\n# b", r"a \# b"),
        ("**x**", r"\*\*x\*\*"),
        (r"back\slash", r"back\\slash"),
    ],
)
def test_escape_markdown(text: str, expected: str) -> None:
    assert escape_markdown(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_escaped_markdown_has_no_unescaped_specials(text: str) -> None:
    out = escape_markdown(text)
    assert "\n" not in out
    # Every special character is preceded by a backslash that is itself not escaped.
    for match in re.finditer(r"[!\"#$%&'()*+,\-./:;<=>?@\[\]^_`{|}~]", out):
        assert out[match.start() - 1] == "\\"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/a/b", "https://github.com/a/b"),
        ("http://example.org/x?y=1#z", "http://example.org/x?y=1#z"),
        ("  https://x.org  ", "https://x.org"),
        ("HTTPS://X.ORG", "HTTPS://X.ORG"),
        ("javascript:alert(1)", None),
        ("JavaScript:alert(1)", None),
        ("data:text/html,<script>", None),
        ("vbscript:x", None),
        ("//evil.org/x", None),
        ("https:///nohost", None),
        ("https://x.org/a b", None),
        ("https://x.org/\u202e", None),
        ("ftp://x.org/file", None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_safe_url(url: object, expected: str | None) -> None:
    assert safe_url(url) == expected
    assert checked_url(url) == expected


URL_PARTS = st.sampled_from(
    ["http", "https", "HTTP", "hTtPs", "ftp", "javascript", ":", "://", "//", "/", "?", "#", "@", ".",
     "-", "[", "]", ":80", ":99999", ":x", " ", "\t", "\u202e", "\u200b", "\xa0", "é", "a", "example.org",
     "github.com", "x", "%20", "\\"]
)  # fmt: skip


@given(st.one_of(st.text(max_size=40), st.lists(URL_PARTS, max_size=10).map("".join)))
def test_the_plain_url_shortcut_agrees_with_parsing(url: str) -> None:
    # `safe_url` passes URLs of the plain shape without parsing them: every answer is the parser's.
    assert safe_url(url) == checked_url(url)
    assert safe_url("https://" + url) == checked_url("https://" + url)


def test_link_html_only_links_http() -> None:
    good = link_html('https://x.org/?a=1&b="2"', "<site>")
    assert good.startswith(
        '<a href="https://x.org/?a=1&amp;b=&quot;2&quot;" target="_blank" rel="noopener noreferrer">'
    )
    assert "&lt;site&gt;" in good
    assert link_html("javascript:alert(1)") == "javascript:alert(1)"
    assert "<a" not in link_html("data:text/html,<b>x</b>", "label")


def test_chips_are_escaped() -> None:
    assert chips_html(["<b>", "ok"]) == '<span class="chip">&lt;b&gt;</span> <span class="chip">ok</span>'


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short title", 90, "Short title"),
        ("EgoTactile: a benchmark pairing egocentric video with full-hand pressure", 40,
         "EgoTactile: a benchmark pairing…"),
        ("x" * 50, 10, "x" * 9 + "…"),  # one long word is cut inside it
        ("  spaced \n out  ", 90, "spaced out"),
    ],
)  # fmt: skip
def test_shortened_cuts_at_a_word_and_says_so(text: str, limit: int, expected: str) -> None:
    assert markup.shortened(text, limit) == expected
    assert len(markup.shortened(text, limit)) <= limit
