"""Turn raw paper records into the paper table: every derived column of `dashboard.schema`.

`corpus.load` calls `add_derived_columns` once per load. The work is one pass of plain Python over
the abstracts (no per-row pandas ``apply``), about 150 µs per abstract; `bench/enrich.py` prints
the figures for the 27k corpus.

A time budget per record (`add_derived_columns_within`, which uploads use): a record whose fields
take more than ``record_seconds`` of CPU is stopped there (a CPU-time timer's signal interrupts the
work, regex matching included, where this runs in a process's main thread; elsewhere the time is
measured after the fact) and kept without its derived fields: whitespace-normalised text, no method
names, datasets or links. The extractors are linear in the text, so only a record far beyond what
they are built for reaches the budget; one such record never holds a worker for long.

From `PARALLEL_FROM` papers on, the pass is split over the machine's cores (forked processes, each
deriving a block of rows; the result is the same as one process's, tested). Only a process with no
other thread forks (the CLI, the index build's client, a script): a server's process (Streamlit's, with
its threads) and any multiprocessing child (an index build's worker, an upload's sandboxed worker,
whose memory budget must see everything it does) derive in one process.
"""

from __future__ import annotations

import multiprocessing
import re
import signal
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from dashboard.schema import CORE_COLUMNS, OPTIONAL_COLUMNS
from dashboard.system.cores import usable_cores
from dashboard.text.clean import clean_markup, count_words, is_placeholder_abstract
from dashboard.text.extract import datasets, derived_title, method_names
from dashboard.text.links import code_release, extract_links, find_urls

__all__ = [
    "PARALLEL_FROM",
    "DerivedFields",
    "add_derived_columns",
    "add_derived_columns_within",
    "decision_tier",
    "derive_fields",
]

# Below this many papers a second process costs more (a fork, sending the results back) than it saves.
PARALLEL_FROM = 10_000
_BLOCKS_PER_PROCESS = 4  # smaller blocks even out abstracts of different lengths

_STR_DTYPE = pd.StringDtype("pyarrow", na_value=np.nan)  # pandas 3's default "str" dtype
_STRING_COLUMNS = ("id", "source", "venue", "title", "abstract", "abstract_clean", "code_url", "github_repo",
                   "code_status", "decision", "decision_tier", "track", "tldr", "project_url",
                   "paper_url")  # fmt: skip
_LIST_DEFAULTS = ("authors", "affiliations", "countries")
# First match wins, so "Accept (Oral)" is oral and "Reject after withdrawal" is withdrawn before reject.
_TIER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("withdrawn", re.compile(r"withdr[ae]w|withdrawn|retracted", re.I)),
    ("reject", re.compile(r"reject|declined|not\s+accepted", re.I)),
    # Before the accepted tiers: a workshop poster or paper is not the main track's (ICLR 2017's
    # "Invite to Workshop Track" papers were not accepted to the conference).
    ("workshop", re.compile(r"workshop", re.I)),
    ("oral", re.compile(r"\boral|notable[-\s]top[-\s]5\b|\bbest\s+paper|\baward", re.I)),
    ("spotlight", re.compile(r"spotlight|notable[-\s]top[-\s]25\b|highlight", re.I)),
    ("poster", re.compile(r"poster", re.I)),
    ("accept", re.compile(r"accept|\bpublished|\bmain\b|\bfindings\b|\bconference\s+paper", re.I)),
)


class DerivedFields(NamedTuple):
    """The derived fields of one paper."""

    abstract_clean: str
    n_words: int
    method_names: list[str]
    links: list[dict[str, str]]
    code_url: str
    github_repo: str
    code_status: str
    datasets: list[str]
    title: str
    title_is_derived: bool
    has_abstract: bool


def derive_fields(abstract: str, title: str = "", code_url: str = "", project_url: str = "") -> DerivedFields:
    """All derived fields of one paper from its abstract, its own title, code field and project page.

    >>> derive_fields("We propose PIAA, a training-free framework. Code: github.com/a/piaa").code_status
    'released'
    """
    abstract = abstract if isinstance(abstract, str) else ""
    title = title.strip() if isinstance(title, str) else ""
    url_spans = find_urls(abstract)  # shared by the cleaner and the link extractor
    clean = clean_markup(abstract, url_spans=url_spans)
    names = method_names(abstract, clean=clean)
    links = extract_links(abstract, url_spans=url_spans)
    own_code_url, github_repo, code_status = code_release(
        links,
        clean,
        code_url if isinstance(code_url, str) else "",
        project_url if isinstance(project_url, str) else "",
    )
    title_is_derived = not title
    if title_is_derived:
        title = derived_title(clean, names) or " ".join(abstract.split())[:80]
    return DerivedFields(
        abstract_clean=clean,
        n_words=count_words(clean, normalized=True),
        method_names=names,
        links=links,
        code_url=own_code_url,
        github_repo=github_repo,
        code_status=code_status,
        datasets=datasets(clean),
        title=title,
        title_is_derived=title_is_derived,
        has_abstract=not is_placeholder_abstract(clean),
    )


def decision_tier(decision: str) -> str:
    """The tier of a source's decision text, one of `schema.DECISION_TIERS`.

    >>> [decision_tier(d) for d in ("Accept (Oral)", "ICLR 2026 Poster", "Withdraw", "Submitted to ICLR", "")]
    ['oral', 'poster', 'withdrawn', 'unknown', 'unknown']
    >>> decision_tier("Invite to Workshop Track"), decision_tier("Workshop Poster")
    ('workshop', 'workshop')
    """
    text = decision.strip().lower() if isinstance(decision, str) else ""
    if not text or text.startswith("submitted"):
        return "unknown"
    for tier, pattern in _TIER_PATTERNS:
        if pattern.search(decision):
            return tier
    return "unknown"


def add_derived_columns(raw: pd.DataFrame) -> pd.DataFrame:
    """The paper table: ``raw`` plus every derived column, in `schema` order, then any extra columns.

    ``raw`` needs an ``abstract`` column; ``id``, ``source``, ``position``, ``venue``, ``year``,
    ``title`` and ``code_url`` are used when present and filled with defaults otherwise. Derived
    columns already in ``raw`` (a re-read export) are recomputed. Rows and their order are kept.
    """
    return add_derived_columns_within(raw, None)[0]


def add_derived_columns_within(
    raw: pd.DataFrame, record_seconds: float | None
) -> tuple[pd.DataFrame, list[int]]:
    """`add_derived_columns`, giving each record at most ``record_seconds`` of CPU (None: no limit).

    Returns the table and the row numbers (0-based positions in ``raw``) of the records that ran
    out of time; those rows hold the text with its whitespace normalised and no method names,
    datasets, links or code status (module docstring).
    """
    n = len(raw)
    abstracts = _strings(raw, "abstract", n)
    titles = _strings(raw, "title", n)
    record_code_urls = _strings(raw, "code_url", n)
    project_urls = _strings(raw, "project_url", n)
    rows = _derive_distinct((abstracts, titles, record_code_urls, project_urls), record_seconds)
    over_budget = [i for i, row in enumerate(rows) if row is None]
    derived = [row if row is not None else _underived(abstracts[i], titles[i]) for i, row in enumerate(rows)]
    columns: dict[str, Any] = {name: raw[name] for name in raw.columns}
    columns.setdefault("id", [f"paper-{i}" for i in range(1, n + 1)])
    columns.setdefault("source", [""] * n)
    columns.setdefault("position", list(range(1, n + 1)))
    columns.setdefault("venue", [""] * n)
    columns.setdefault("year", [pd.NA] * n)
    for name in _LIST_DEFAULTS:
        columns.setdefault(name, [[] for _ in range(n)])
    for name in ("decision", "track", "tldr", "project_url"):
        columns.setdefault(name, [""] * n)
    columns.setdefault("citations", [pd.NA] * n)
    if "paper_url" not in columns:
        columns["paper_url"] = _first_text(raw, ("url", "pdf_url"), n)
    tiers = {text: decision_tier(text) for text in set(_strings(raw, "decision", n))}
    columns["decision_tier"] = [tiers[text] for text in _strings(raw, "decision", n)]
    derived_any_title = any(row.title_is_derived for row in derived)
    for index, field in enumerate(DerivedFields._fields):
        if field == "title" and not derived_any_title and "title" in raw.columns:
            continue  # every record has its own title: keep the column as it came
        columns[field] = [row[index] for row in derived]
    table = pd.DataFrame(columns, index=raw.index)
    for name in _STRING_COLUMNS:
        table[name] = _as_str(table[name])
    table["position"] = pd.to_numeric(table["position"], errors="coerce").fillna(0).astype("int64")
    table["year"] = pd.to_numeric(table["year"], errors="coerce").astype("Int64")
    table["n_words"] = table["n_words"].astype("int64")
    table["title_is_derived"] = table["title_is_derived"].astype(bool)
    table["has_abstract"] = table["has_abstract"].astype(bool)
    table["citations"] = pd.to_numeric(table["citations"], errors="coerce").astype("Int64")
    for name in _LIST_DEFAULTS:
        table[name] = [value if isinstance(value, list) else [] for value in table[name].tolist()]
    order = [*CORE_COLUMNS, *(name for name in OPTIONAL_COLUMNS if name in table.columns)]
    order += [name for name in table.columns if name not in order]
    return table[order], over_budget


def _derive_distinct(
    columns: tuple[list[str], ...], record_seconds: float | None
) -> list[DerivedFields | None]:
    """`derive_all` of each distinct row once (the derived fields are a function of the row): a file
    that repeats one text, a million "w" paragraphs or an abstract in every merged export, derives
    it once. A repeated row gets lists of its own, so that no two rows of the table share one."""
    seen: dict[tuple[str, ...], int] = {}
    which = [seen.setdefault(row, len(seen)) for row in zip(*columns, strict=True)]
    if len(seen) == len(which):
        return derive_all(columns, record_seconds=record_seconds)
    distinct = derive_all(tuple(map(list, zip(*seen, strict=True))), record_seconds=record_seconds)
    del seen
    used = [False] * len(distinct)
    rows: list[DerivedFields | None] = []
    for number in which:
        row = distinct[number]
        if row is not None and used[number]:
            clean, n_words, names, links, code_url, repo, status, found, title, derived, has = row
            row = DerivedFields(
                clean, n_words, list(names), [dict(link) for link in links], code_url, repo, status,
                list(found), title, derived, has,
            )  # fmt: skip
        used[number] = True
        rows.append(row)
    return rows


def _underived(abstract: str, title: str) -> DerivedFields:
    """A record's fields when deriving them ran out of time: only what a linear pass gives."""
    clean = " ".join(abstract.split())
    title = title.strip()
    return DerivedFields(
        abstract_clean=clean,
        n_words=clean.count(" ") + 1 if clean else 0,
        method_names=[],
        links=[],
        code_url="",
        github_repo="",
        code_status="none",
        datasets=[],
        title=title or clean[:80],
        title_is_derived=not title,
        has_abstract=bool(clean),
    )


def derive_all(
    columns: tuple[list[str], ...], *, parallel_from: int = PARALLEL_FROM, record_seconds: float | None = None
) -> list[DerivedFields | None]:
    """`derive_fields` of every row of ``columns`` (abstracts, titles, code URLs, project URLs), in order.

    Split over the cores from ``parallel_from`` rows on, where this process may fork (module docstring).
    With ``record_seconds``, a row whose fields take more CPU time than that is None (stopped there).
    """
    n = len(columns[0])
    processes = _processes_for(n, parallel_from)
    if processes < 2:
        return _derive_rows(zip(*columns, strict=True), record_seconds)
    global _ROWS, _RECORD_SECONDS
    # The forked processes read their blocks and the budget from here: nothing is sent to them.
    _ROWS, _RECORD_SECONDS = columns, record_seconds
    try:
        step = -(-n // (processes * _BLOCKS_PER_PROCESS))
        starts = range(0, n, step)
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
            blocks = list(pool.map(_derive_block, starts, [step] * len(starts)))
    finally:
        _ROWS, _RECORD_SECONDS = None, None
    return [row for block in blocks for row in block]


_ROWS: tuple[list[str], ...] | None = None
_RECORD_SECONDS: float | None = None


def _derive_block(start: int, size: int) -> list[DerivedFields | None]:
    assert _ROWS is not None
    return _derive_rows(
        zip(*(column[start : start + size] for column in _ROWS), strict=True), _RECORD_SECONDS
    )


class _OverBudget(Exception):
    """Raised by the CPU timer's signal inside a record that ran out of time."""


_armed = False  # whether the timer's signal stops the record now (set in the main thread only)


def _over_budget(signum: int, frame: object) -> None:
    if _armed:  # a signal handled once the record is done, a moment late, is ignored
        raise _OverBudget


def _derive_rows(rows: Iterable[tuple[str, ...]], record_seconds: float | None) -> list[DerivedFields | None]:
    """`derive_fields` of each row; None for a row that took more than ``record_seconds`` of CPU."""
    if record_seconds is None:
        return [derive_fields(*row) for row in rows]
    # A signal handler can only be set, and a signal only arrives, in the main thread; elsewhere a
    # slow record is found by measuring, once it is done.
    can_stop = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGPROF, _over_budget) if can_stop else None
    out: list[DerivedFields | None] = []
    try:
        for row in rows:
            out.append(
                _derive_stopping(row, record_seconds) if can_stop else _derive_timed(row, record_seconds)
            )
    finally:
        if can_stop:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
    return out


def _derive_stopping(row: tuple[str, ...], seconds: float) -> DerivedFields | None:
    global _armed
    try:
        _armed = True
        signal.setitimer(signal.ITIMER_PROF, seconds)  # fires once, after `seconds` of this process's CPU
        fields = derive_fields(*row)
        _armed = False
        return fields
    except _OverBudget:
        return None
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)


def _derive_timed(row: tuple[str, ...], seconds: float) -> DerivedFields | None:
    started = time.process_time()
    fields = derive_fields(*row)
    return fields if time.process_time() - started <= seconds else None


def _processes_for(n: int, parallel_from: int) -> int:
    if n < parallel_from or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if threading.active_count() > 1 or multiprocessing.parent_process() is not None:
        return 1  # forking a process with other threads can deadlock; a child's work stays its own
    return min(usable_cores(), 8)


def _strings(frame: pd.DataFrame, column: str, n: int) -> list[str]:
    if column not in frame.columns:
        return [""] * n
    return [value if isinstance(value, str) else "" for value in frame[column].tolist()]


def _first_text(frame: pd.DataFrame, names: tuple[str, ...], n: int) -> list[str]:
    """Per row, the first non-empty of the named string columns."""
    out = [""] * n
    for name in reversed(names):
        for i, value in enumerate(_strings(frame, name, n)):
            if value:
                out[i] = value
    return out


def _as_str(column: pd.Series) -> pd.Series:
    if column.dtype == "str":
        return column.fillna("") if column.hasnans else column
    values = ["" if _missing(value) else str(value) for value in column.tolist()]
    # Built by pyarrow in one pass: about twice as fast as pandas converting a list of str.
    array = pa.chunked_array([pa.array(values, type=pa.large_string())])
    return pd.Series(pd.arrays.ArrowStringArray(array, dtype=_STR_DTYPE), index=column.index)


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
