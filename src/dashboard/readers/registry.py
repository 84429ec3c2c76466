"""The formats the readers know: one `Format` entry per format, and every list a user reads made from it.

Adding a format is one reader module and one entry in `FORMATS`. The entry names the module's reader
function (``"module:function"``, imported when a file of that format is first read, so this module
imports no reader and every part of the package can ask it which formats exist); the reader takes a
`dashboard.readers.bounded.Content` (the file's bytes, or its text decoded once) and the file's log
and returns a `Parsed`. The suffix map, the upload help, the CLI's ``--help``, the error messages and
the formats reference page (``docs/gen_reference.py``) are all written from `FORMATS`.

    >>> format_of("icml2026.jsonl.gz")
    'jsonl'
    >>> format_names().split(", ")[-1]
    'BibTeX or ACL Anthology XML'
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Protocol

from dashboard.readers.load_report import FileLog, Record


class Content(Protocol):
    """What a reader is given: one file's name and bytes, or its text decoded once.

    `dashboard.readers.bounded.Content` is the one implementation (bounded reading, decoding); the
    registry names only this shape, so the readers below it need not know how a file was read.
    """

    name: str
    encoding: str | None

    @property
    def suffix(self) -> str: ...

    @property
    def data(self) -> bytes | bytearray: ...

    def starts_with_bom(self) -> bool: ...

    def text(self) -> str: ...


@dataclass
class Parsed:
    """What a reader found in one file: its records, defaults for every record (a text file's header
    line gives venue and year), the encoding when the reader decoded the bytes itself, and the format
    when the reader found another one inside (a file with no extension that holds JSON)."""

    records: list[Record]
    defaults: dict[str, Any] = field(default_factory=dict)
    encoding: str | None = None
    format: str | None = None


Reader = Callable[[Content, FileLog], Parsed]


@dataclass(frozen=True)
class Format:
    """One format: its name in the load report, its file name endings (``""``: none), its name for
    people, a one-line description, its reader, and whether it is a binary container (not text).

    Any reader may take the bytes (`Content.data`) rather than the decoded text: XML, which declares
    its own encoding, does.
    """

    name: str
    suffixes: tuple[str, ...]
    label: str
    description: str
    reader: str  # "module:function", see the module docstring
    binary: bool = False
    # our exporter guards spreadsheet cells that look like formulas with a quote: read back, it goes
    spreadsheet: bool = False

    def read(self, content: Content, log: FileLog) -> Parsed:
        """The records of one file, by this format's reader."""
        module_name, function_name = self.reader.split(":")
        reader: Reader = getattr(importlib.import_module(module_name), function_name)
        return reader(content, log)


FORMATS: dict[str, Format] = {
    entry.name: entry
    for entry in (
        Format(
            "text",
            ("", ".txt", ".md", ".markdown"),
            "text (one abstract per paragraph)",
            "one abstract per paragraph, an optional header line (`ICML 2026 Papers`) giving venue and year; "
            "a file with no extension that holds JSON is read as JSON",
            "dashboard.readers.paragraphs:read_paragraphs",
        ),
        Format(
            "json",
            (".json",),
            "JSON",
            'a list of records, an object holding one (`{"papers": [...]}`) or one record; OpenReview notes',
            "dashboard.readers.jsonfile:read_json",
        ),
        Format(
            "jsonl",
            (".jsonl", ".ndjson"),
            "JSON Lines",
            "one record per line",
            "dashboard.readers.jsonfile:read_jsonl",
        ),
        Format(
            "csv",
            (".csv",),
            "CSV",
            "a header row naming the columns; list cells may hold JSON (our own exports)",
            "dashboard.readers.delimited:read_csv",
            spreadsheet=True,
        ),
        Format(
            "tsv",
            (".tsv", ".tab"),
            "TSV",
            "as CSV, tab-separated",
            "dashboard.readers.delimited:read_tsv",
            spreadsheet=True,
        ),
        Format(
            "parquet",
            (".parquet", ".pq"),
            "Parquet",
            "a table with a header",
            "dashboard.readers.parquet:read_parquet",
            binary=True,
        ),
        Format(
            "xlsx",
            (".xlsx",),
            "Excel .xlsx",
            "the sheet named `papers`, else the first; read as a stream of cells, formulas as their values",
            "dashboard.readers.excel:read_xlsx",
            binary=True,
            spreadsheet=True,
        ),
        Format(
            "bibtex",
            (".bib", ".bibtex"),
            "BibTeX",
            "BibTeX entries (a Zotero or Google Scholar export), read with bibtexparser 2",
            "dashboard.readers.bibtex:read_bibtex",
        ),
        Format(
            "acl-anthology",
            (".xml",),
            "ACL Anthology XML",
            "the `<volume>`/`<paper>` files of acl-org/acl-anthology (`data/xml/2023.acl.xml`): title, "
            "authors, abstract, Anthology page and PDF, code; venue and year from the volume",
            "dashboard.readers.acl_anthology:read_acl_anthology",
        ),
    )
}

SUFFIX_FORMATS: dict[str, str] = {
    suffix: entry.name for entry in FORMATS.values() for suffix in entry.suffixes
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(s for s in SUFFIX_FORMATS if s)) + (".gz",)
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{0,7}")


def format_of(name: str) -> str | None:
    """The format a file name says (``.gz`` looked through), or None for an ending no reader takes.

    >>> format_of("ICML 2026 v1.2"), format_of("notes.docx")
    ('text', None)
    """
    suffixes = [s.lower() for s in PurePath(name).suffixes[-2:]]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if not _EXTENSION.fullmatch(suffix):
        suffix = ""  # "ICML 2026 v1.2" or "notes. final" has a dot, not an extension
    return SUFFIX_FORMATS.get(suffix)


def file_stem(name: str) -> str:
    """The file name without ``.gz`` and a format's ending: ``iclr2025.json.gz`` -> ``iclr2025``."""
    stem = name[:-3] if name.lower().endswith(".gz") else name
    suffix = PurePath(stem).suffix
    if suffix.lower() in SUFFIX_FORMATS:
        stem = stem[: len(stem) - len(suffix)]
    return stem or "paper"


def format_names() -> str:
    """The formats for people, in one phrase: ``text (one abstract per paragraph), JSON, ... or BibTeX``."""
    labels = [entry.label for entry in FORMATS.values()]
    return ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) > 1 else "".join(labels)


def format_names_sentence() -> str:
    """`format_names` opening a sentence: ``Text (one abstract per paragraph), JSON, ... or BibTeX``."""
    names = format_names()
    return names[:1].upper() + names[1:]


def suffix_list() -> str:
    """Every file name ending a reader takes, space-separated, for help texts: ``.txt .md ... .bib``."""
    return " ".join(suffix for entry in FORMATS.values() for suffix in entry.suffixes if suffix)
