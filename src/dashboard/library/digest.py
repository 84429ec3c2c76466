"""What is new since last time: per saved search and per reading list, the papers no seen version had.

`new_since` compares a corpus with the versions the library has seen (`dashboard.library.searches`) and
gives one `Section` per saved search (its new papers that pass its filters) and, given a
`Recommender`, one per reading list (its new papers among the list's best-fitting). `to_markdown` and
`to_html` write it for e-mail or a wiki; the Library page shows the same sections.

    >>> lib = Library.open(":memory:")
    >>> result = new_since(lib, "v2", papers)  # doctest: +SKIP
    >>> print(to_markdown(result, papers))  # doctest: +SKIP

Work grows with the *new* papers: a saved search's filters run on the new rows only, so a digest of a
million-paper dump with a thousand new papers costs a hash of the titles and a thousand-row filter.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dashboard import export
from dashboard.library import searches
from dashboard.library.store import CorpusLookup, Library, member_mask, resolve

TOP = 50  # papers listed per section (the count says how many more there are)
# A reading list's recommendations are the new papers among its best-fitting this many of the whole
# corpus: "fits the list" then means the same whatever number of papers happen to be new.
RECOMMENDED_RANKS = 100

# A list's recommendation: (list rows in the corpus, candidate rows) -> candidate rows best first, each
# with why in a few words. `recommender` makes one from a fitted analysis.
Recommender = Callable[[np.ndarray, np.ndarray], list[tuple[int, str]]]


def recommender(analysis: Any, papers: pd.DataFrame) -> Recommender:
    """The Papers page's "Recommended for" order (`dashboard.search.recommend`) on this analysis's
    TF-IDF rows and its dense ones (`recommend.dense_rows`), with why: the terms shared with the list,
    or its closest paper."""
    from dashboard.search import recommend as ranking

    model = analysis.model
    dense = ranking.dense_rows(model)  # one space for every list this recommender ranks

    def rank(list_rows: np.ndarray, candidates: np.ndarray) -> list[tuple[int, str]]:
        ranked = ranking.recommend(model.tfidf_, dense, list_rows)
        wanted = np.isin(ranked.rows, candidates)
        rows = ranked.rows[wanted][:RECOMMENDED_RANKS]
        reasons = ranking.explain(model.tfidf_, dense, model.terms_, ranked.list_rows, rows.tolist())
        out = []
        for row, reason in zip(rows.tolist(), reasons, strict=True):
            why = [f"shares {', '.join(reason.terms)}"] if reason.terms else []
            if reason.closest >= 0:
                why.append(f'closest to "{papers["title"].iat[reason.closest]}"')
            if ranked.fallback:
                why.append(ranking.FALLBACK_LABEL)
            out.append((int(row), "; ".join(why)))
        return out

    return rank


@dataclass(frozen=True)
class Section:
    """One part of the digest: a saved search or a reading list, and its new papers (corpus rows)."""

    kind: str  # "search" or "list"
    name: str
    description: str
    rows: tuple[int, ...]
    reasons: tuple[str, ...] = ()  # per row, why it is here (recommendations only)
    total: int = 0  # new papers in this section before the cut to `TOP`
    note: str = ""


@dataclass(frozen=True)
class Digest:
    """What is new in a corpus: its label and size, what it is compared with, and the sections."""

    label: str
    n_papers: int
    n_new: int
    since: searches.SeenVersion | None
    sections: tuple[Section, ...] = ()
    lists_included: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def title(self) -> str:
        """``New since 2024-05-01`` (or ``New: no version seen yet``)."""
        return f"New since {self.since.date}" if self.since is not None else "New: no version seen yet"


def new_rows(
    lib: Library, papers: pd.DataFrame, *, before: dt.date | None = None
) -> tuple[np.ndarray, searches.Seen]:
    """The rows of ``papers`` no seen version had (all rows when none was seen), and what was seen."""
    seen = searches.seen(lib, before)
    if seen.last is None:
        return np.arange(len(papers), dtype=np.int64), seen
    return np.flatnonzero(~seen.mask(papers)).astype(np.int64), seen


def _members(lib: Library, papers: pd.DataFrame, lookup: CorpusLookup, names: Sequence[str]) -> np.ndarray:
    """Rows of ``papers`` in these reading lists (for a saved search with a ``list`` filter)."""
    entries = lib.entries()
    chosen = entries[entries["list"].isin(list(names))]
    if chosen.empty:
        return np.zeros(len(papers), dtype=bool)
    return member_mask(len(papers), resolve(chosen, lookup, lib.corpus_ids())["row"])


def search_section(
    lib: Library,
    saved: searches.SavedSearch,
    papers: pd.DataFrame,
    new: np.ndarray,
    lookup: CorpusLookup,
    top: int,
) -> Section:
    """The new papers that pass a saved search's filters (run on the new rows only)."""
    subset = papers.iloc[new]
    members = _members(lib, papers, lookup, saved.filters.list)[new] if saved.filters.list else None
    passing = new[saved.filters.mask(subset, members=members).to_numpy(dtype=bool)]
    note = ""
    if saved.filters.topic and "topic" not in papers.columns:
        note = "its topic filter is left out: this corpus has no fitted topics here"
    return Section(
        "search",
        saved.name,
        saved.filters.describe(),
        tuple(int(r) for r in passing[:top]),
        (),
        len(passing),
        note,
    )


def list_section(
    lib: Library,
    name: str,
    papers: pd.DataFrame,
    new: np.ndarray,
    lookup: CorpusLookup,
    recommender: Recommender,
    top: int,
) -> Section:
    """The new papers among the list's `RECOMMENDED_RANKS` best-fitting papers of the corpus."""
    entries = lib.entries(name)
    rows = resolve(entries, lookup, lib.corpus_ids())["row"].to_numpy(dtype=np.int64)
    in_corpus = np.unique(rows[rows >= 0])
    if not len(in_corpus):
        return Section(
            "list", name, "recommended for this list", (), (), 0, "none of its papers is in this corpus"
        )
    candidates = np.setdiff1d(np.arange(len(papers), dtype=np.int64), in_corpus)
    ranked = recommender(in_corpus, candidates)[:RECOMMENDED_RANKS]
    is_new = np.zeros(len(papers), dtype=bool)
    is_new[new] = True
    picked = [(row, why) for row, why in ranked if is_new[row]]
    return Section(
        "list",
        name,
        f"recommended for this list ({len(in_corpus):,} of its papers in this corpus)",
        tuple(int(row) for row, _ in picked[:top]),
        tuple(why for _, why in picked[:top]),
        len(picked),
    )


def new_since(
    lib: Library,
    digest: str,
    papers: pd.DataFrame,
    *,
    label: str = "",
    before: dt.date | None = None,
    recommender: Recommender | None = None,
    top: int = TOP,
    lookup: CorpusLookup | None = None,
) -> Digest:
    """The digest of ``papers`` against the versions seen (on or before ``before`` when given).

    Without a ``recommender`` (no fitted analysis, or the recommendations unavailable) the reading
    lists are left out and `Digest.lists_included` says so.
    """
    new, seen = new_rows(lib, papers, before=before)
    lookup = lookup or CorpusLookup(papers)
    sections = [
        search_section(lib, saved, papers, new, lookup, top) for saved in searches.saved_searches(lib)
    ]
    notes: list[str] = []
    if recommender is not None:
        sections += [
            list_section(lib, name, papers, new, lookup, recommender, top) for name in lib.list_names()
        ]
    if seen.last is None:
        notes.append("no version of a corpus was marked seen in this library yet: every paper counts as new")
    elif searches.is_seen(lib, digest) and before is None:
        notes.append(f"this version was marked seen on {_marked_on(lib, digest)}: nothing in it is new")
    return Digest(
        label, len(papers), len(new), seen.last, tuple(sections), recommender is not None, tuple(notes)
    )


def _marked_on(lib: Library, digest: str) -> str:
    return next((v.date for v in searches.versions(lib) if v.digest == digest), "")


# --------------------------------------------------------------------- writing it down


def _authors(value: object, limit: int = 6) -> str:
    names = [str(a) for a in value] if isinstance(value, (list, tuple, np.ndarray)) else []
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _link(paper: pd.Series) -> str:
    for column in ("paper_url", "url", "pdf_url"):
        url = export.web_url(paper.get(column))
        if url:
            return url
    return ""


def _venue(paper: pd.Series) -> str:
    year = paper.get("year")
    year_text = "" if year is None or pd.isna(year) else str(int(year))
    return " ".join(p for p in (str(paper.get("venue") or ""), year_text) if p)


def _heading(section: Section) -> str:
    kind = "Saved search" if section.kind == "search" else "Reading list"
    return f"{kind}: {section.name}"


def _count(section: Section) -> str:
    shown = len(section.rows)
    if section.total == 0:
        return "no new papers"
    more = f" (the first {shown:,} here)" if section.total > shown else ""
    return f"{section.total:,} new paper{'s' if section.total != 1 else ''}{more}"


def _intro(result: Digest) -> list[str]:
    lines = [
        f"{result.n_new:,} of the {result.n_papers:,} papers"
        + (f" of {result.label}" if result.label else "")
    ]
    if result.since is not None:
        lines[0] += f" are new since {result.since.date}" + (
            f" ({result.since.label})" if result.since.label else ""
        )
    else:
        lines[0] += " count as new"
    lines[0] += "."
    if not result.lists_included:
        lines.append("Reading lists' recommendations are not included (no fitted analysis was at hand).")
    lines.extend(note[0].upper() + note[1:] + "." for note in result.notes)
    return lines


def to_markdown(result: Digest, papers: pd.DataFrame) -> str:
    """The digest as Markdown: a heading per section, one bullet per paper (linked title, authors,
    venue and year, why). Corpus text is escaped (`export.markdown_text`): a title renders as itself."""
    md = export.markdown_text
    lines = [f"# {md(result.title)}", "", *(md(line) for line in _intro(result)), ""]
    if not result.sections:
        lines += ["No saved searches" + (" or reading lists" if result.lists_included else "") + " yet.", ""]
    for section in result.sections:
        lines += [
            f"## {md(_heading(section))}",
            "",
            f"_{md(section.description)}_ · {md(_count(section))}",
            "",
        ]
        if section.note:
            lines += [f"> {md(section.note)}", ""]
        for n, row in enumerate(section.rows):
            paper = papers.iloc[row]
            title, url = md(paper.get("title")), _link(paper)
            head = f"- [{title}](<{url}>)" if url else f"- {title}"
            facts = [f for f in (_authors(paper.get("authors")), _venue(paper)) if f]
            lines.append(head + (" — " + md(" · ".join(facts)) if facts else ""))
            if n < len(section.reasons) and section.reasons[n]:
                lines.append(f"  - why: {md(section.reasons[n])}")
        lines.append("")
    return "\n".join(lines)


def to_html(result: Digest, papers: pd.DataFrame) -> str:
    """The digest as one HTML page (no script, no outside resource): every corpus text escaped, links
    only to http(s) addresses."""

    def esc(value: object) -> str:
        return html.escape(" ".join(str(value or "").split()), quote=True)

    body = [f"<h1>{esc(result.title)}</h1>", *(f"<p>{esc(line)}</p>" for line in _intro(result))]
    if not result.sections:
        body.append("<p>No saved searches yet.</p>")
    for section in result.sections:
        body.append(f"<h2>{esc(_heading(section))}</h2>")
        body.append(f'<p class="about"><em>{esc(section.description)}</em> · {esc(_count(section))}</p>')
        if section.note:
            body.append(f'<p class="note">{esc(section.note)}</p>')
        if not section.rows:
            continue
        body.append("<ul>")
        for n, row in enumerate(section.rows):
            paper = papers.iloc[row]
            url = _link(paper)
            title = esc(paper.get("title"))
            head = f'<a href="{esc(url)}">{title}</a>' if url else title
            facts = " · ".join(f for f in (_authors(paper.get("authors")), _venue(paper)) if f)
            item = f"<li>{head}" + (f'<br><span class="facts">{esc(facts)}</span>' if facts else "")
            if n < len(section.reasons) and section.reasons[n]:
                item += f'<br><span class="why">why: {esc(section.reasons[n])}</span>'
            body.append(item + "</li>")
        body.append("</ul>")
    style = (
        "body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;"
        "line-height:1.45}"
        "li{margin:.5rem 0}.facts,.why,.about{color:#555;font-size:.9em}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(result.title)}</title><style>{style}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
