"""BibTeX (``.bib``, e.g. a Zotero or Google Scholar export), read with `bibtexparser` 2.

Each entry becomes a record: its key is the id; ``title``, ``abstract``, ``booktitle``/``journal``
(venue), ``year``, ``url``, ``doi``, ``keywords``; ``author`` is split on ``and`` at brace depth 0 and
``Last, First`` turned into ``First Last``. Braces and LaTeX accents in titles, names and venues are
rendered (``{BERT}``, ``Rockt{\\"a}schel``); the abstract is kept as written (its LaTeX is rendered
into ``abstract_clean`` like every other abstract). An entry the parser cannot read is reported by
line; ``@string`` macros are resolved.

This is the one BibTeX reader: the library's import (`dashboard.library.store.read_bibtex`) reads through
`bibtex_records` too, with its own ``render`` (exact unescaping of what its export writes), so both
paths share the parser, the per-entry reports, the name splitting and `bib_year`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from dashboard.readers.bounded import Content
from dashboard.readers.load_report import FileLog, FileRefused, Record
from dashboard.readers.registry import Parsed
from dashboard.text.clean import clean_markup

_RENDERED = ("title", "booktitle", "journal", "publisher", "series")
_BRACES = re.compile(r"[{}]")


def read_bibtex(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for BibTeX."""
    return Parsed(bibtex_records(content.text(), log))


def bibtex_records(text: str, log: FileLog, render: Callable[[str], str] | None = None) -> list[Record]:
    """The entries of a BibTeX file as records, in file order.

    ``render`` turns a title, name or venue into text (default: LaTeX rendered, braces dropped).
    """
    import bibtexparser

    parser_logger = logging.getLogger("bibtexparser")
    previous = parser_logger.level
    parser_logger.setLevel(logging.CRITICAL)  # its failures are reported by us, per entry
    try:
        library = bibtexparser.parse_string(text)
    except Exception as error:  # the parser raises several types on bad input; all mean "unreadable"
        raise FileRefused(f"not readable BibTeX ({type(error).__name__}: {str(error)[:200]})") from None
    finally:
        parser_logger.setLevel(previous)
    for block in library.failed_blocks:
        line = getattr(block, "start_line", None)
        place = f"line {line + 1}" if isinstance(line, int) else ""
        log.skip(place, "unreadable BibTeX entry (unbalanced braces or quotes?)")
    records = []
    for position, entry in enumerate(library.entries, start=1):
        line = getattr(entry, "start_line", None)
        place = f"entry {position}" + (f" (line {line + 1})" if isinstance(line, int) else "")
        records.append(Record(place, position, _entry_record(entry, render or render_text)))
    return records


def _entry_record(entry: Any, render: Callable[[str], str]) -> dict[str, Any]:
    fields: dict[str, Any] = {name.lower(): field.value for name, field in entry.fields_dict.items()}
    record: dict[str, Any] = {"id": entry.key, "entry_type": entry.entry_type}
    for name, value in fields.items():
        if not isinstance(value, str):
            continue
        record[name] = render(value) if name in _RENDERED else value
    if "author" in fields and isinstance(fields["author"], str):
        record["author"] = [_first_last(render(name)) for name in _split_names(fields["author"])]
    if "doi" in fields and "url" not in fields and isinstance(fields["doi"], str):
        record["url"] = "https://doi.org/" + fields["doi"].strip().removeprefix("https://doi.org/")
    return record


def bib_year(value: Any) -> int | None:
    """A year field as a year, or None: ``{²}``, 25 or 4,400 digits, ``2024a`` or two years are None.

    >>> bib_year("2024"), bib_year("{2019}"), bib_year("²"), bib_year("9" * 4400)
    (2024, 2019, None, None)
    """
    text = "".join(str(value or "").replace("{", "").replace("}", "").split())
    if not (len(text) == 4 and text.isascii() and text.isdigit()):
        return None
    year = int(text)
    return year if 1000 <= year <= 2999 else None


def render_text(text: str) -> str:
    """LaTeX accents and commands rendered, protective braces (``{BERT}``) dropped."""
    return " ".join(_BRACES.sub("", clean_markup(text)).split())


def _split_names(text: str) -> list[str]:
    """``A and B and {C and D}`` -> ``["A", "B", "{C and D}"]`` (``and`` splits at brace depth 0 only)."""
    names, depth, start, i = [], 0, 0, 0
    lowered = text.lower()
    while i < len(text):
        char = text[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif (
            depth == 0
            and char.isspace()
            and lowered.startswith("and", i + 1)
            and (i + 4 >= len(text) or text[i + 4].isspace())
        ):
            names.append(text[start:i])
            i += 4
            start = i
            continue
        i += 1
    names.append(text[start:])
    return [" ".join(name.split()) for name in names if name.strip()]


def _first_last(name: str) -> str:
    """``Devlin, Jacob`` -> ``Jacob Devlin``; ``von Last, Jr, First`` -> ``First von Last Jr``."""
    parts = [part.strip() for part in name.split(",")]
    if len(parts) == 2 and all(parts):
        return f"{parts[1]} {parts[0]}"
    if len(parts) == 3 and parts[0] and parts[2]:
        return f"{parts[2]} {parts[0]} {parts[1]}".strip()
    return name
