"""The load report: what happened to each file, and the problems that name a file and a place.

Bad input never raises out of a load: a whole file that cannot be read raises `FileRefused` inside its
reader and becomes one skipped `Problem`; a bad record is logged on the file's `FileLog` and the rest are
read. `Record` is what every format reader yields: a place (``line 12``, ``record 5``, ``row 7``,
``paragraph 3 (line 9)``), a 1-based position and the record's value (a dict, or a str abstract).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dashboard.readers import limits


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: which file, where in it ("" = the whole file), and what."""

    source: str
    place: str
    message: str

    def __str__(self) -> str:
        # a folder's problems name an entry in it: "corpus/README.txt", not "corpus/ README.txt"
        joiner = "" if self.source.endswith("/") else " "
        where = f"{self.source}{joiner}{self.place}".strip()
        return f"{where}: {self.message}"


@dataclass
class FileReport:
    """What happened to one input file (or folder): papers read, records skipped, warnings."""

    source: str
    format: str
    encoding: str | None
    papers: int
    skipped: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    # totals: the lists stop at MAX_PROBLEMS_PER_FILE entries and a "... and N more" line
    n_skipped: int = -1
    n_warnings: int = -1
    # where each paper's venue and year came from: {"record": 700, "file name": 74, "none": 1}
    venue_year_from: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.n_skipped < 0:
            self.n_skipped = len(self.skipped)
        if self.n_warnings < 0:
            self.n_warnings = len(self.warnings)


@dataclass
class LoadReport:
    """The report of one load: one `FileReport` per input file, in load order."""

    files: list[FileReport] = field(default_factory=list)

    @property
    def papers(self) -> int:
        """Papers read, over all files."""
        return sum(f.papers for f in self.files)

    @property
    def skipped(self) -> list[Problem]:
        """Every listed skipped file or record, in file order."""
        return [p for f in self.files for p in f.skipped]

    @property
    def warnings(self) -> list[Problem]:
        """Every listed warning, in file order."""
        return [p for f in self.files for p in f.warnings]

    def summary(self) -> str:
        """One line, e.g. ``57 papers from 3 files; 1 skipped; 2 warnings``."""
        n_files = sum(1 for f in self.files if f.format not in ("folder",))
        parts = [f"{self.papers:,} paper{'s' * (self.papers != 1)} from {n_files} file{'s' * (n_files != 1)}"]
        n_skipped = sum(f.n_skipped for f in self.files)
        n_warnings = sum(f.n_warnings for f in self.files)
        if n_skipped:
            parts.append(f"{n_skipped:,} skipped")
        if n_warnings:
            parts.append(f"{n_warnings:,} warning{'s' * (n_warnings != 1)}")
        return "; ".join(parts)

    def venue_year_sources(self) -> pd.DataFrame:
        """Per file, where its papers' venue and year came from: source, origin, papers.

        Origins: ``record`` (its venue/year/date/bibtex fields or page URL), ``file name``
        (``iclr2025.json``), ``header`` (a text file's first line), joined by `` + `` when venue and
        year came from different places, ``none`` when neither was found.
        """
        rows = [(f.source, origin, n) for f in self.files for origin, n in f.venue_year_from.items()]
        frame = pd.DataFrame(rows, columns=["source", "origin", "papers"])
        return frame.astype({"source": "str", "origin": "str", "papers": "int64"})

    def venue_year_line(self) -> str:
        """Where venue and year came from, in one line: ``Venue and year from the records (1,000
        papers), the file name (57)``; ``""`` when nothing was read."""
        totals: dict[str, int] = {}
        for f in self.files:
            for origin, n in f.venue_year_from.items():
                totals[origin] = totals.get(origin, 0) + n
        if not totals:
            return ""
        words = {"record": "the records", "file name": "the file name", "header": "the header line"}

        def said(origin: str) -> str:
            return " + ".join(words.get(part, part) for part in origin.split(" + "))

        ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
        parts = [
            f"{said(origin)} ({n:,} paper{'s' * (n != 1)})" if i == 0 else f"{said(origin)} ({n:,})"
            for i, (origin, n) in enumerate((o, n) for o, n in ranked if o != "none")
        ]
        missing = totals.get("none", 0)
        line = "Venue and year from " + ", ".join(parts) if parts else ""
        if missing:
            line += ("; " if line else "") + f"none found for {missing:,} paper{'s' * (missing != 1)}"
        return line

    def to_frame(self) -> pd.DataFrame:
        """Every problem as a row: source, severity ("skipped"/"warning"), place, message."""
        rows = [
            (p.source, severity, p.place, p.message)
            for f in self.files
            for severity, problems in (("skipped", f.skipped), ("warning", f.warnings))
            for p in problems
        ]
        return pd.DataFrame(rows, columns=["source", "severity", "place", "message"], dtype="str")


@dataclass
class LoadResult:
    """The paper table (schema.py columns) and the report of how it was read."""

    papers: pd.DataFrame
    report: LoadReport


class FileLog:
    """Collects one file's problems, keeping at most MAX_PROBLEMS_PER_FILE of each kind."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.skipped: list[Problem] = []
        self.warnings: list[Problem] = []
        self.n_skipped = 0
        self.n_warnings = 0
        self.origins: dict[str, int] = {}
        self.n_links = 0  # Papers with Code links records, joined to papers rather than read as papers

    def count_link(self) -> None:
        self.n_links += 1

    def count_origin(self, origin: str) -> None:
        self.origins[origin] = self.origins.get(origin, 0) + 1

    def skip(self, place: str, message: str) -> None:
        self.n_skipped += 1
        if len(self.skipped) < limits.MAX_PROBLEMS_PER_FILE:
            self.skipped.append(Problem(self.source, place, message))

    def warn(self, place: str, message: str | Callable[[], str]) -> None:
        """Count a warning; keep it (the first MAX_PROBLEMS_PER_FILE). A callable ``message`` is
        made only when kept: a warning that may come on every record (a duplicate abstract) costs a
        count, not a formatted text, past those."""
        self.n_warnings += 1
        if len(self.warnings) < limits.MAX_PROBLEMS_PER_FILE:
            self.warnings.append(
                Problem(self.source, place, message if isinstance(message, str) else message())
            )

    def report(self, fmt: str, encoding: str | None, papers: int) -> FileReport:
        skipped, warnings = list(self.skipped), list(self.warnings)
        if self.n_skipped > len(skipped):
            skipped.append(
                Problem(self.source, "", f"... and {self.n_skipped - len(skipped):,} more skipped")
            )
        if self.n_warnings > len(warnings):
            warnings.append(
                Problem(self.source, "", f"... and {self.n_warnings - len(warnings):,} more warnings")
            )
        return FileReport(
            self.source,
            fmt,
            encoding,
            papers,
            skipped,
            warnings,
            self.n_skipped,
            self.n_warnings,
            dict(self.origins),
        )


class FileRefused(Exception):
    """A whole file cannot be read; the message says why and what to do."""


@dataclass
class Record:
    place: str
    position: int
    value: Any


def _too_long_abstract(length: int, n_lines: int) -> str:
    lines = f" over {n_lines:,} lines" if n_lines > 1 else ""
    return (
        f"{length:,} characters{lines}, more than the {limits.MAX_ABSTRACT_CHARS:,} an abstract may have: "
        "skipped "
        "(is it a whole paper or several abstracts without blank lines? raise "
        "dashboard.corpus.MAX_ABSTRACT_CHARS to keep it)"
    )
