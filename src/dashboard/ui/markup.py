"""Untrusted corpus text made safe to show: escaped HTML with only our own tags, escaped markdown.

Abstracts, titles, file names and venues come from whoever made the corpus. The app shows them as
text: either through `st.html` with HTML built here (every character escaped, then only `<mark>`,
`<a>` and layout tags that this module adds), or through markdown-rendering widgets after
`escape_markdown`. Only ``http``/``https`` URLs ever become links. No streamlit import: pure and
unit-tested.

    >>> marked_html("a <b> c", [(3, 4)])
    'a &lt;<mark>b</mark>&gt; c'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from dashboard.figures import colours
from dashboard.screen import has_invisible, visible

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping them all also
# defuses Streamlit's own syntax (`:red[...]`, `:material/icon:`, `$math$`) and raw HTML.
_MARKDOWN_SPECIALS = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")


def escape_markdown(text: object) -> str:
    """One line of literal text for widgets that render markdown (labels, captions, metrics).

    >>> escape_markdown(":red[hi] $x$ <b>")
    '\\\\:red\\\\[hi\\\\] \\\\$x\\\\$ \\\\<b\\\\>'
    """
    one_line = " ".join(visible(text).split())
    return _MARKDOWN_SPECIALS.sub(r"\\\1", one_line)


def shortened(text: object, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters with an ellipsis.

    >>> shortened("A benchmark pairing egocentric video with pressure", 30)
    'A benchmark pairing…'
    """
    one_line = " ".join(visible(text).split())
    if len(one_line) <= limit:
        return one_line
    cut = one_line[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:·-") + "…"


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[object]], *, right: Sequence[int] = ()
) -> str:
    """A table in markdown (a real ``<table>`` once drawn) of literal text: every cell escaped on one line.

    ``right``: the positions of the columns aligned right (numbers).

    >>> print(markdown_table(["Name", "Papers"], [["A|B *x*", 2]], right=[1]))
    | Name | Papers |
    |---|--:|
    | A\\|B \\*x\\* | 2 |
    """
    align = "|".join("--:" if n in right else "---" for n in range(len(header)))
    lines = ["| " + " | ".join(escape_markdown(cell) for cell in header) + " |", f"|{align}|"]
    lines += ["| " + " | ".join(escape_markdown(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def text_html(text: object) -> str:
    """Escaped HTML of plain text; line breaks kept, control, bidi and invisible characters removed."""
    return html.escape(visible(text)).replace("\n", "<br>")


def marked_html(
    text: str,
    spans: Iterable[tuple[int, int] | tuple[int, int, str]],
    *,
    default_class: str = "",
) -> str:
    """Escaped ``text`` with each span wrapped in ``<mark>`` (class = the span's third item if any).

    Spans may be unsorted, overlap or run past the text; overlaps keep the earlier span.

        >>> marked_html("shared and own", [(0, 6, "shared"), (11, 14, "distinct")])
        '<mark class="shared">shared</mark> and <mark class="distinct">own</mark>'
    """
    cleaned: list[tuple[int, int, str]] = []
    for span in spans:
        start, end = max(0, int(span[0])), min(len(text), int(span[1]))
        kind = str(span[2]) if len(span) > 2 else default_class  # type: ignore[misc]
        if end > start:
            cleaned.append((start, end, kind))
    parts: list[str] = []
    position = 0
    for start, end, kind in sorted(cleaned):
        if start < position:
            continue
        parts.append(text_html(text[position:start]))
        css = f' class="{_css_class(kind)}"' if kind else ""
        parts.append(f"<mark{css}>{text_html(text[start:end])}</mark>")
        position = end
    parts.append(text_html(text[position:]))
    return "".join(parts)


def _css_class(name: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "", name.lower())


# A URL of this shape passes every check of `safe_url` without parsing: an http(s) scheme, a host of
# letters, digits, dots and hyphens, then printable ASCII only (no space, nothing invisible). The Links
# page checks thousands of URLs a run, and parsing each one was a visible share of it at a million papers.
_PLAIN_URL = re.compile(r"[hH][tT][tT][pP][sS]?://[A-Za-z0-9.\-]+(?::[0-9]{1,5})?(?:[/?#][!-~]*)?")
URL_MAX = 2048  # characters: a longer "URL" is not shown as a link


def safe_url(url: object) -> str | None:
    """The URL if it is a plain http(s) URL with a host, else None (``javascript:``, ``data:``...).

    >>> safe_url("https://github.com/a/b"), safe_url("javascript:alert(1)")
    ('https://github.com/a/b', None)
    """
    if isinstance(url, str) and len(url) <= URL_MAX and _PLAIN_URL.fullmatch(url):
        return url
    return checked_url(url)


def checked_url(url: object) -> str | None:
    """`safe_url` by parsing ``url`` (`safe_url` skips it for the plain shape nearly every URL has)."""
    if not isinstance(url, str):
        return None
    candidate = url.strip()
    if (
        not candidate
        or len(candidate) > URL_MAX
        or has_invisible(candidate)
        or any(c.isspace() for c in candidate)
    ):
        return None
    try:
        parts = urlsplit(candidate)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return candidate


def link_html(url: object, label: object | None = None) -> str:
    """An ``<a>`` to a safe URL opening in a new tab, or the escaped label/URL as plain text."""
    target = safe_url(url)
    shown = text_html(label if label is not None else url)
    if target is None:
        return shown
    return (
        f'<a href="{html.escape(target, quote=True)}" target="_blank" rel="noopener noreferrer">{shown}</a>'
    )


def chips_html(items: Sequence[object], css_class: str = "chip") -> str:
    """Small inline labels for short lists (method names, datasets), escaped."""
    return " ".join(f'<span class="{_css_class(css_class)}">{text_html(item)}</span>' for item in items)


# Styles for the HTML above; sent once per page with st.html (style-only HTML takes no space).
STYLE = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.5rem; }
.pd-abstract { line-height: 1.6; font-size: 0.98rem; }
.pd-abstract mark, .pd-compare mark { padding: 0 0.12em; border-radius: 0.2em; color: inherit; }
.pd-abstract mark { background: rgba(255, 214, 0, 0.35); }
.pd-compare mark.shared { background: rgba(59, 91, 219, 0.22); text-decoration: underline dotted; }
.pd-compare mark.distinct { background: rgba(255, 214, 0, 0.35); }
.pd-compare { line-height: 1.55; font-size: 0.95rem; }
.pd-title { font-size: 1.25rem; font-weight: 600; margin: 0.2rem 0 0.3rem 0; line-height: 1.35; }
.pd-meta { opacity: 0.75; font-size: 0.88rem; margin-bottom: 0.4rem; }
.pd-links a { margin-right: 0.8rem; word-break: break-all; }
.chip { display: inline-block; padding: 0.05rem 0.5rem; margin: 0.1rem 0.15rem 0.1rem 0;
        border-radius: 0.8rem; font-size: 0.82rem; background: rgba(128, 128, 128, 0.16); }
.pd-legend mark { padding: 0 0.3em; border-radius: 0.2em; color: inherit; }
/* The Topics page's list of the map's topics and their colours. */
.pd-topic-list { columns: 18rem auto; list-style: none; padding: 0; margin: 0; }
.pd-topic-list li { break-inside: avoid; margin: 0 0 0.2rem 0; line-height: 1.3; }
.pd-swatch { display: inline-block; width: 0.8em; height: 0.8em; border-radius: 2px; margin-right: 0.4em;
             vertical-align: -0.05em; }
.pd-legend mark.shared { background: rgba(59, 91, 219, 0.22); text-decoration: underline dotted; }
.pd-legend mark.distinct { background: rgba(255, 214, 0, 0.35); }
/* Captions: the text colour at CAPTION_OPACITY (Streamlit's own, 60%, was 4.18:1 on white). */
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { color: inherit; }
[data-testid="stCaptionContainer"] { opacity: CAPTION_OPACITY; }
/* Focus a keyboard user can see on every control (2 px, FOCUS_COLOUR: 3:1 on both themes). */
a:focus-visible, button:focus-visible, summary:focus-visible, input:focus-visible,
textarea:focus-visible, [role="tab"]:focus-visible, [role="option"]:focus-visible,
[role="slider"]:focus-visible, [role="checkbox"]:focus-visible, [role="radio"]:focus-visible,
[tabindex]:focus-visible, [data-testid="stSidebarNavLink"]:focus-visible,
[data-testid="stPageLink-NavLink"]:focus-visible {
  outline: 2px solid FOCUS_COLOUR !important; outline-offset: 2px;
}
/* White text on the primary colour (chips of a multiselect, primary buttons): ON_PRIMARY behind it. */
[data-tag], [data-testid="stBaseButton-primary"] { background-color: ON_PRIMARY !important; }
[data-tag], [data-tag] span, [data-testid="stBaseButton-primary"] { color: #ffffff !important; }
/* Paper titles on tertiary buttons (a topic's papers, similar papers) wrap rather than end in "...". */
[data-testid="stBaseButton-tertiary"] [data-testid="stMarkdownContainer"] {
  white-space: normal; overflow: visible; text-overflow: clip; text-align: left;
}
[data-testid="stBaseButton-tertiary"] [data-testid="stMarkdownContainer"] p { white-space: normal; }
/* One order, said once: a click on a table's column header sorted only the rows on screen, while the
   caption named another order and the download kept it. The header row takes no clicks; the page's
   "Sort by" control orders the table, its caption and its download together. */
[data-testid="stDataFrameResizable"] { position: relative; }
[data-testid="stDataFrameResizable"]::after {
  content: ""; position: absolute; top: 0; left: 0; right: 0; height: HEADER_PXpx; z-index: 3;
  cursor: default;
}
/* Sections are h2 under the page's h1 (no h1 -> h3 jump), drawn at the size of Streamlit's h3. */
[data-testid="stMain"] [data-testid="stHeading"] h2 { font-size: 1.75rem; }
/* Side-by-side charts inside a "stack-narrow" container go one under the other below 1280 px: at
   1024 px with the sidebar open half the page is ~280 px, too narrow for a bar chart's labels. */
@media (max-width: 1279px) {
  /* Streamlit pads the page 5rem a side: at 1024 px with the sidebar open that left 564 px for
     a table of papers; 1.5rem a side gives it 668. */
  [data-testid="stMainBlockContainer"] { padding-left: 1.5rem; padding-right: 1.5rem; }
  [class*="st-key-stack-narrow"] [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
  [class*="st-key-stack-narrow"] [data-testid="stColumn"] {
    flex: 1 1 100% !important; min-width: 100% !important;
  }
}
</style>
""".replace("CAPTION_OPACITY", str(colours.LIGHT.caption_opacity))
TABLE_HEADER_PX = 36  # st.dataframe's header row (its default height, 35 px, and its border)
STYLE = STYLE.replace("HEADER_PX", str(TABLE_HEADER_PX))
STYLE = STYLE.replace("FOCUS_COLOUR", colours.FOCUS).replace("ON_PRIMARY", colours.ON_PRIMARY)
