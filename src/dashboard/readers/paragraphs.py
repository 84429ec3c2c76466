"""Paragraph text (``.txt``, ``.md``, no extension): one abstract per paragraph, optional header.

A header line such as ``ICML 2026 Papers`` gives venue and year; wrapped lines are joined with a
space; in markdown a heading line gives the title of the abstract that follows it. A file with no
extension that holds JSON or JSON Lines (a dump saved as ``papers``) is read as such.
"""

from __future__ import annotations

import re
from typing import Any

from dashboard.readers import limits
from dashboard.readers.bounded import Content
from dashboard.readers.jsonfile import _json_records, _jsonl_records, _sniff_text_format
from dashboard.readers.load_report import FileLog, FileRefused, Record, _too_long_abstract
from dashboard.readers.registry import Parsed
from dashboard.readers.venues import _YEAR, venue_and_year

HEADER_MAX_CHARS = 120
HEADER_MAX_WORDS = 12
# A one-line paragraph this long, ending a sentence, next to another: two abstracts missing a blank line.
MERGED_LINE_CHARS = 300
_HEADER_WORDS = re.compile(
    r"\b(?:papers?|accepted|abstracts?|list|proceedings|submissions?|orals?|posters?|spotlights?)\b", re.I
)
_SENTENCE_INSIDE = re.compile(r"[.!?。！？][\s\"')\]]")
_SENTENCE_END = (".", "!", "?", "。", "！", "？")


def read_paragraphs(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for text: one abstract per paragraph (JSON when a file with no
    extension holds it)."""
    text = content.text()
    if not content.suffix:
        # no extension: a JSON dump saved as "papers" should still read as JSON
        sniffed = _sniff_text_format(text)
        if sniffed != "text":
            try:
                records = _json_records(text, log) if sniffed == "json" else _jsonl_records(text, log)
            except FileRefused:
                records = []
            if records:
                return Parsed(records, format=sniffed)
            log.warn(
                "", f"starts like {sniffed.upper()} but is not: read as text, one abstract per paragraph"
            )
    records, defaults = _text_records(text, log, markdown=content.suffix in (".md", ".markdown"))
    return Parsed(records, defaults)


def _text_records(text: str, log: FileLog, *, markdown: bool = False) -> tuple[list[Record], dict[str, Any]]:
    """Seed layout: optional header line, then one abstract per paragraph.

    In markdown, a heading line (``## Title``) gives the title of the abstract that follows it.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    paragraphs: list[tuple[int, int]] = []  # [start, end) line indexes
    start: int | None = None
    for i, line in enumerate(lines):
        if line and not line.isspace():
            if start is None:
                start = i
        elif start is not None:
            paragraphs.append((start, i))
            start = None
    if start is not None:
        paragraphs.append((start, len(lines)))
    if not paragraphs:
        raise FileRefused("empty file: only blank lines")

    defaults: dict[str, Any] = {}
    header = _header_of(lines, paragraphs, markdown=markdown)
    if header is not None:
        venue, year = venue_and_year(header, loose=True)
        defaults = {"header": (venue, year)}
        first_start, first_end = paragraphs[0]
        if first_end - first_start == 1:
            paragraphs = paragraphs[1:]
        else:
            paragraphs[0] = (first_start + 1, first_end)
        if not paragraphs:
            raise FileRefused(f"only a header line ({header[:80]!r}), no abstracts after it")

    records: list[Record] = []
    title, title_line = "", 0
    position = 0  # abstracts so far, skipped ones included, so ids do not shift when one is skipped
    for n, (first, end) in enumerate(paragraphs, start=1):
        place = f"paragraph {n} (line {first + 1})"
        begin = first
        if markdown and lines[first].lstrip().startswith("#"):
            if title:
                log.warn(f"line {title_line}", f"heading {title[:60]!r} has no abstract after it")
            title, title_line = lines[first].strip().lstrip("#").strip(), first + 1
            begin += 1
            if begin == end:
                continue
        position += 1
        length = sum(len(line) for line in lines[begin:end]) + end - begin - 1
        if length > limits.MAX_ABSTRACT_CHARS:
            # the quick bound counts trailing spaces; measure exactly only the few that look too long
            length = sum(len(line.strip()) for line in lines[begin:end]) + end - begin - 1
            if length > limits.MAX_ABSTRACT_CHARS:
                log.skip(place, _too_long_abstract(length, end - begin))
                continue
        if end - begin == 1:  # one line: nothing to join, and no abstracts merged
            abstract = lines[begin].strip()
        else:
            parts = [line.strip() for line in lines[begin:end]]
            full_lines = [
                begin + i + 1
                for i, part in enumerate(parts)
                if len(part) >= MERGED_LINE_CHARS and part.endswith(_SENTENCE_END)
            ]
            if len(full_lines) >= 2:
                log.warn(
                    place,
                    f"looks like {len(full_lines)} abstracts merged "
                    f"(lines {', '.join(map(str, full_lines[:5]))} "
                    "each read like a whole abstract): add a blank line between abstracts",
                )
            abstract = " ".join(parts)
        records.append(Record(place, position, {"abstract": abstract, "title": title}))
        title = ""
    if title:
        log.warn(f"line {title_line}", f"heading {title[:60]!r} has no abstract after it")
    return records, defaults


def _header_of(lines: list[str], paragraphs: list[tuple[int, int]], *, markdown: bool = False) -> str | None:
    """The first line when it is a header (``ICML 2026 Papers``), never a real abstract.

    In markdown, a first heading without a year, venue or header word is a paper's title instead.
    """
    first_start, first_end = paragraphs[0]
    raw_line = lines[first_start].strip()
    line = raw_line.lstrip("#").strip()
    if not _header_shaped(line):
        return None
    has_signal = bool(
        _YEAR.search(line)
        or venue_and_year(line, loose=False)[0]
        or _HEADER_WORDS.search(line)
        or not line.isascii()
    )
    if markdown and raw_line.startswith("#") and not has_signal:
        return None
    if first_end - first_start == 1:
        # A short unpunctuated line standing alone: a header, unless it is the only paragraph and has
        # nothing header-like about it (then it is a (short) abstract)
        return line if has_signal or len(paragraphs) > 1 else None
    # Header glued to the first abstract (no blank line): demand a clear signal and that the next
    # line starts a sentence rather than continuing a wrapped one
    following = lines[first_start + 1].strip()
    starts_sentence = following[:1].isupper() or not following[:1].isascii()
    if has_signal and len(line.split()) <= 8 and starts_sentence:
        return line
    return None


def _header_shaped(line: str) -> bool:
    return (
        0 < len(line) <= HEADER_MAX_CHARS
        and len(line.split()) <= HEADER_MAX_WORDS
        and not line.endswith(_SENTENCE_END)
        and not _SENTENCE_INSIDE.search(line + " ")
    )
