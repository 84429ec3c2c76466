"""The one declarative field map: source field names (aliases) -> schema columns, and how values split.

`FIELD_ALIASES` lists, per column, the names a source may use, best first (compared lower-cased, with
spaces/dashes/dots as ``_``); `LIST_SPLITTERS` says how a joined text becomes a list. Supporting a new
export is adding its field names here (and, when its records nest, a shape in `readers.shapes`).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from dashboard.readers.load_report import FileLog, FileRefused
from dashboard.readers.venues import _YEAR

# Canonical field -> accepted names, best first (compared lower-cased, with spaces/dashes/dots as "_").
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "paper_id", "paperid", "uid", "key", "forum", "number", "arxiv_id", "corpusid", "corpus_id"),
    "title": ("title", "paper_title", "papertitle"),
    "abstract": (
        "abstract",
        "summary",
        "abstract_text",
        "abstracttext",
        "paper_abstract",
        "description",
        "text",
    ),
    "url": (
        "url",
        "link",
        "paper_url",
        "paperurl",
        "html_url",
        "page_url",
        "landing_page",
        "forum_url",
        "forum",
        "site",
        "oa",
        "url_abs",
        "paper_url_abs",
    ),
    "pdf_url": ("pdf_url", "pdf", "pdfurl", "pdf_link", "url_pdf", "openaccesspdf", "open_access_pdf"),
    "code_url": (
        "code_url",
        "code",
        "codeurl",
        "github",
        "github_url",
        "repo",
        "repository",
        "repo_url",
        "code_link",
        "source_code",
    ),
    "project_url": ("project_url", "project", "project_page", "projectpage", "homepage", "website"),
    "authors": ("authors", "author", "author_names", "authors_list", "authors_parsed"),
    "affiliations": ("affiliations", "aff_unique_norm", "affiliation", "aff", "institutions", "institution"),
    "countries": ("countries", "aff_country_unique", "country"),
    "keywords": (
        "keywords",
        "keyword",
        "tags",
        "categories",
        "fieldsofstudy",
        "fields_of_study",
        "s2fieldsofstudy",
        "tasks",
    ),
    "year": ("year", "pub_year", "publication_year"),
    "venue": (
        "venue",
        "conference",
        "booktitle",
        "journal",
        "conf",
        "publicationvenue",
        "proceeding",
        "journal_ref",
    ),
    "primary_area": ("primary_area", "area", "subject_area", "research_area"),
    "decision": ("decision", "status"),
    "track": ("track",),
    "session": ("session", "sessions"),
    "tldr": ("tldr", "tl;dr", "tl_dr", "one_sentence_summary"),
    "citations": (
        "citations",
        "citation_count",
        "citationcount",
        "gs_citation",
        "n_citations",
        "num_citations",
        "cited_by",
        "cited_by_count",
    ),
    "bibtex": ("bibtex", "bib", "citation_bibtex"),
    "arxiv_id": ("arxiv_id", "arxiv", "arxivid", "paper_arxiv_id"),
    "date": ("date", "publication_date", "publicationdate", "update_date", "published"),
    # review scores (`readers.reviews`): Paper Copilot's ";"-joined per-review scores, our own exports'
    # lists; OpenReview replies are gathered into these names by `readers.shapes`
    "ratings": ("ratings", "rating", "review_ratings", "review_scores"),
    "confidences": ("confidences", "confidence", "review_confidences"),
    "rating_scale": ("rating_scale", "rating_range", "score_scale"),
    # our own exports: kept so a re-read export keeps its provenance and derived titles are re-derived
    "source": ("source",),
    "position": ("position",),
    "title_is_derived": ("title_is_derived",),
}
OPTIONAL_FIELDS = (
    "url",
    "pdf_url",
    "authors",
    "affiliations",
    "countries",
    "keywords",
    "primary_area",
    "decision",
    "track",
    "session",
    "tldr",
    "project_url",
    "citations",
)
LIST_FIELDS = frozenset({"authors", "affiliations", "countries", "keywords"})
# How a list field written as one text is split: the first separator found in the text wins.
# (Affiliations hold commas in their names, so only ";" and "|" split them.)
# Whitespace before a separator is taken only from where its run starts, and all of it: a plain \s+ or
# \s* first let the engine start again at every character of a long run and rescan the rest
# (quadratic time). A separator right after another one's trailing whitespace takes none, as before.
_AUTHOR_SEPARATORS = re.compile(r",|(?<!\s)\s++and\s+|(?:(?<!\s)\s++|)&\s*")
LIST_SPLITTERS: dict[str, tuple[str | re.Pattern[str], ...]] = {
    "authors": (";", "|", _AUTHOR_SEPARATORS),
    "affiliations": (";", "|"),
    "countries": (";", "|", ","),
    "keywords": (";", "|", ","),
}
# List fields that keep each item once (institutions and countries repeat per author; S2 repeats a
# field of study per source).
UNIQUE_ITEMS = frozenset({"affiliations", "countries", "keywords"})
RAW_COLUMNS = ("id", "source", "position", "venue", "year", "title", "abstract", "code_url")
# Columns that mark a table as one of our own exports (then its source/position columns are kept).
OWN_EXPORT_MARKERS = frozenset({"abstract_clean", "title_is_derived", "code_status"})
# Control characters a text field may not keep (tab and newline may; these become spaces), and lone
# surrogates (a JSON "\ud83d" escape: half an emoji cut by a scraper), which no UTF-8 writer accepts
# and which failed the whole load in pyarrow (these become U+FFFD)
_INVISIBLE_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# Leading quote our exporter adds to cells that start like a formula (undone when re-reading our exports).
_NEUTRALISED = re.compile(r"^'(?='*[=+\-@\t\r])")


def _normalise_key(key: str) -> str:
    return re.sub(r"[\s\-.]+", "_", key.strip().casefold())


_KEY_FIELDS: dict[str, list[tuple[str, int]]] = {}
for _field_name_, _aliases in FIELD_ALIASES.items():
    for _rank, _alias in enumerate(_aliases):
        _KEY_FIELDS.setdefault(_normalise_key(_alias), []).append((_field_name_, _rank))


@functools.lru_cache(maxsize=4096)
def _field_of_key(key: str) -> tuple[str, ...]:
    """Canonical fields a record key may fill (``forum`` may be an id or a URL)."""
    return tuple(name for name, _ in _KEY_FIELDS.get(_normalise_key(key), ()))


def _has_field(record: dict, name: str) -> bool:
    return any(isinstance(k, str) and name in _field_of_key(k) for k in record)


def _is_empty(value: Any) -> bool:
    if type(value) is str:  # the common case first: this runs for every field of every record
        return not value or value.isspace()
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (list, tuple, dict)):
        return not value
    return False


def _unwrap(value: Any) -> Any:
    # OpenReview API v2 wraps every content field as {"value": x}; Semantic Scholar nests a few:
    # openAccessPdf {"url"}, tldr {"text"}, publicationVenue {"name"}
    if type(value) is dict:
        if "value" in value and len(value) <= 3:
            return value["value"]
        for key in ("url", "text", "name"):
            if isinstance(value.get(key), str):
                return value[key]
    return value


def _canonical(record: dict) -> dict[str, Any]:
    """Map a record's own keys to canonical fields (best-ranked non-empty name wins).

    The record's ``labels`` dict (as in our corpora's JSON Lines) fills fields the record lacks.
    """
    fields: dict[str, Any] = {}
    labels: Any = None
    for name, keys in _plan(tuple(record)):
        if name == "labels":
            labels = record[keys[0]]
            continue
        checked = name in _CHECKED_FIELDS
        for key in keys:
            value = record[key]
            if type(value) is str:  # the common case, inlined: this runs for every field of every record
                if not value or value.isspace():
                    continue
            else:
                value = _unwrap(value)
                if _is_empty(value):
                    continue
            if checked and not _acceptable(name, value):
                continue
            fields[name] = value
            break
    if isinstance(labels, dict) and labels:
        for name, value in _canonical({k: v for k, v in labels.items() if k != "labels"}).items():
            fields.setdefault(name, value)
    return fields


@functools.lru_cache(maxsize=1024)
def _plan(keys: tuple[Any, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For one set of record keys: each canonical field with its candidate keys, best first.

    Records in a file nearly always share their keys, so this is worked out once per file.
    """
    candidates: dict[str, list[tuple[int, str]]] = {}
    for key in keys:
        if not isinstance(key, str):
            continue
        if key.casefold() == "labels":
            candidates.setdefault("labels", []).append((0, key))
        for name, rank in _KEY_FIELDS.get(_normalise_key(key), ()):
            candidates.setdefault(name, []).append((rank, key))
    return tuple((name, tuple(key for _, key in sorted(found))) for name, found in candidates.items())


_CHECKED_FIELDS = frozenset({"url", "pdf_url", "code_url", "project_url", "id"})  # vetted by _acceptable


def _acceptable(name: str, value: Any) -> bool:
    if name in ("url", "pdf_url", "code_url", "project_url"):
        return isinstance(value, str) and ("." in value or _urlish(value))
    if name == "id":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return False
        text = str(value).strip()
        return 0 < len(text) <= 200 and not _urlish(text)
    return True


def _urlish(text: str) -> bool:
    return text.lstrip()[:8].lower().startswith(("http://", "https://", "www.", "/"))


def _text(value: Any) -> str:
    """A field as stripped text with ``\n`` line ends; other control characters (not tab) become
    spaces: they cannot be shown, break Excel's XML and can drive a terminal."""
    if type(value) is str:
        if "\r" in value:
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        if _INVISIBLE_CONTROL.search(value):
            value = _INVISIBLE_CONTROL.sub(_unseen_character, value)
        return value.strip()
    value = _unwrap(value)
    if value is None:
        return ""
    if isinstance(value, str):
        return _text(str(value))
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return str(int(value)) if value.is_integer() else str(value)
    if isinstance(value, (int, np.integer)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "; ".join(t for t in (_text(v) for v in value if not isinstance(v, (list, dict))) if t)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return ""


def _unseen_character(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group() <= "\udfff" else " "


def _text_list(value: Any, *, authors: bool = False, name: str = "") -> list[str]:
    """A list field as strings, from a list, JSON text, or text joined by a `LIST_SPLITTERS` separator.

    >>> _text_list("Ann One|Bob Two", name="authors")
    ['Ann One', 'Bob Two']
    """
    name = name or ("authors" if authors else "keywords")
    value = _unwrap(value)
    items: list[str] = []
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            try:
                parsed = json.loads(stripped)
            except (json.JSONDecodeError, RecursionError):
                parsed = None
            if isinstance(parsed, list):
                return _text_list(parsed, name=name)
        items = _split(stripped, LIST_SPLITTERS.get(name, (";", ",")))
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, dict):
                item = (
                    item.get("name")
                    or item.get("fullname")
                    or item.get("value")
                    or item.get("category")
                    or ""
                )
            if isinstance(item, (list, tuple)) and name == "authors":
                item = _parsed_author(item)  # arXiv's authors_parsed: [last, first, suffix]
            if isinstance(item, (list, tuple, dict)):
                continue
            text = _text(item)
            if not text:
                continue
            if name == "authors":
                items.append(text)
            else:  # OpenReview keywords sometimes arrive as one "a; b; c" string inside the list
                items.extend(part.strip() for part in text.split(";") if part.strip())
    else:
        text = _text(value)
        items = [text] if text else []
    if name == "keywords" and len(items) == 1 and " " in items[0] and "." in items[0]:
        items = items[0].split()  # arXiv categories: "cs.LG stat.ML"
    return list(dict.fromkeys(items)) if name in UNIQUE_ITEMS else items


def _split(text: str, separators: tuple[str | re.Pattern[str], ...]) -> list[str]:
    for separator in separators:
        if isinstance(separator, str):
            if separator in text:
                return [part.strip() for part in text.split(separator) if part.strip()]
        elif separator.search(text):
            return [part.strip() for part in separator.split(text) if part.strip()]
    return [text] if text else []


def _parsed_author(parts: list[Any] | tuple[Any, ...]) -> str:
    """``["Balázs", "C.", ""]`` -> ``C. Balázs``."""
    texts = [_text(part) for part in parts if isinstance(part, str)]
    if not texts:
        return ""
    last, rest = texts[0], [t for t in texts[1:2] if t]
    suffix = [t for t in texts[2:3] if t]
    return " ".join([*rest, last, *suffix])


def _citations(value: Any) -> int | None:
    """A citation count: a non-negative whole number, else None."""
    value = _unwrap(value)
    if isinstance(value, bool):
        return None
    number = _non_negative_int(value)
    return number if number is not None and number < 2**62 else None


def _year(value: Any) -> int | None:
    value = _unwrap(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.year
    if isinstance(value, (int, float, np.integer, np.floating)):
        if isinstance(value, float) and (math.isnan(value) or not value.is_integer()):
            return None
        year = int(value)
        return year if 1900 <= year <= 2100 else None
    if isinstance(value, str):
        years = set(_YEAR.findall(value))
        return int(years.pop()) if len(years) == 1 else None
    return None


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().casefold() in ("true", "1", "yes")
    return bool(value) and not _is_empty(value)


def _unneutralise(text: str) -> str:
    return _NEUTRALISED.sub("", text, count=1)


def _non_negative_int(value: Any) -> int | None:
    try:
        number = float(_text(value))
    except ValueError:
        return None
    # below 2**53: a float holds it exactly, and the int64 position column holds it (1e308 overflowed)
    return int(number) if number.is_integer() and 0 <= number < 2**53 else None


def _require_abstract_column(header: list[str]) -> None:
    if not any("abstract" in _field_of_key(str(name)) for name in header):
        shown = ", ".join(repr(h) for h in header[:12]) + (" ..." if len(header) > 12 else "")
        raise FileRefused(
            f"no abstract column (columns: {shown}); name one of: {', '.join(FIELD_ALIASES['abstract'])}"
        )


# Abstract aliases that are also ordinary column names: used only when their cells read like abstracts.
WEAK_ABSTRACT_ALIASES = frozenset({"description", "text"})
# Median words per non-empty cell for a column to read like abstracts (real ones have 100-250).
WEAK_ALIAS_MIN_WORDS = 8
UNNAMED_MIN_WORDS = 25
_SAMPLE_ROWS = 500


def _with_abstract_column(header: list[str], rows: list[list[str]], log: FileLog) -> list[str]:
    """The header, with the column to read as the abstract decided, or the file refused.

    A column named ``abstract``/``summary``/... is the abstract. Otherwise a ``text`` or
    ``description`` column is used when its cells read like abstracts (median at least
    WEAK_ALIAS_MIN_WORDS words), else the column of other names whose cells are longest when they
    read like abstracts (median at least UNNAMED_MIN_WORDS words); the load report says which column
    was used and why. With none of these the file is refused, listing its columns.
    """
    strong = [
        name for name in header
        if "abstract" in _field_of_key(name) and _normalise_key(name) not in WEAK_ABSTRACT_ALIASES
    ]  # fmt: skip
    if strong:
        return header
    sample = rows[:_SAMPLE_ROWS]
    medians = {i: _median_words(row[i] for row in sample if i < len(row)) for i in range(len(header))}
    weak = [i for i, name in enumerate(header) if _normalise_key(name) in WEAK_ABSTRACT_ALIASES]
    best_weak = max(weak, key=lambda i: medians[i], default=None)
    if best_weak is not None and medians[best_weak] >= WEAK_ALIAS_MIN_WORDS:
        chosen, reason = best_weak, "no column is named abstract"
    else:
        unnamed = [i for i, name in enumerate(header) if not _field_of_key(name) and i not in weak]
        best_unnamed = max(unnamed, key=lambda i: medians[i], default=None)
        reason = "no column is named like an abstract"
        if best_unnamed is None or medians[best_unnamed] < UNNAMED_MIN_WORDS:
            shown = ", ".join(repr(h) for h in header[:12]) + (" ..." if len(header) > 12 else "")
            longest = max(range(len(header)), key=lambda i: medians[i], default=None)
            detail = (
                f" (the longest cells, in {header[longest]!r}, have a median of {medians[longest]:g} "
                f"word{'s' * (medians[longest] != 1)})"
                if longest is not None
                else ""
            )
            raise FileRefused(
                f"no abstract column (columns: {shown}): none is named like an abstract or holds "
                f"abstract-length text{detail}; name one of: {', '.join(FIELD_ALIASES['abstract'])}"
            )
        chosen = best_unnamed
    log.warn(
        "",
        f"column {header[chosen]!r} read as the abstract: {reason}, and its cells read like abstracts "
        f"(median {medians[chosen]:g} words)",
    )
    return [("abstract" if i == chosen else name) for i, name in enumerate(header)]


def _median_words(cells: Iterable[str]) -> float:
    counts = sorted(len(cell.split()) for cell in cells if isinstance(cell, str) and cell.strip())
    if not counts:
        return 0.0
    middle = len(counts) // 2
    return float(counts[middle]) if len(counts) % 2 else (counts[middle - 1] + counts[middle]) / 2


def _has_any_abstract_key(record: dict) -> bool:
    return _has_field(record, "abstract") or _has_field(record, "title")


def _fields_hint(record: dict) -> str:
    keys = [str(k) for k in record][:8]
    return f" (fields: {', '.join(keys) or 'none'}; expected e.g. title, abstract)"
