"""JSON and JSON Lines: the list of records in a document (at the top, under a container key such
as ``papers``, or an id-keyed object), one record per line, with a depth limit checked before parsing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from dashboard.readers import limits
from dashboard.readers.bounded import Content, _refuse_binary, _refuse_control_characters
from dashboard.readers.fields import _has_field
from dashboard.readers.load_report import FileLog, FileRefused, Record
from dashboard.readers.registry import Parsed


def read_json(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for JSON."""
    return Parsed(_json_records(content.text(), log))


def read_jsonl(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for JSON Lines: decoded line by line unless a byte order mark says how."""
    if content.starts_with_bom():
        return Parsed(_jsonl_records(content.text(), log))
    data = content.data
    _refuse_binary(data)
    _refuse_control_characters(data[:8192].decode("utf-8", "replace"))
    records, encoding = _jsonl_records_from_bytes(data, log)
    return Parsed(records, encoding=encoding)


# A JSON string; an unterminated one runs to the end of the text. The closing quote must be optional:
# if it were required, each of n escaped quotes (\") after an unterminated quote would start a new
# scan to the end (quadratic in the text's length).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _sniff_text_format(text: str) -> str:
    start = text.lstrip()[:1]
    if start == "[":
        return "json"
    if start == "{":
        return "jsonl" if "\n{" in text[: 1 << 20].rstrip() else "json"
    return "text"


def _too_deep_message() -> str:
    return (
        f"JSON nested more than {limits.MAX_JSON_DEPTH} levels deep: refused "
        "(paper records nest a few levels; "
        "raise dashboard.corpus.MAX_JSON_DEPTH if the file is genuine)"
    )


def _json_too_deep(text: str) -> bool:
    """True when brackets nest deeper than MAX_JSON_DEPTH (checked without recursion)."""
    if text.count("[") + text.count("{") <= limits.MAX_JSON_DEPTH:
        return False
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    depth = 0
    for begin in range(0, len(codes), 1 << 22):
        part = codes[begin : begin + (1 << 22)]
        steps = np.where((part == ord("[")) | (part == ord("{")), 1, -1).astype(np.int64)
        running = np.cumsum(steps) + depth
        if running.max(initial=depth) > limits.MAX_JSON_DEPTH:
            return True
        depth = int(running[-1])
    return False


def _json_records(text: str, log: FileLog) -> list[Record]:
    if _json_too_deep(text):
        raise FileRefused(_too_deep_message())
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data" and text.lstrip().startswith("{"):
            log.warn("", "holds one JSON object per line: read as JSON Lines (name it .jsonl)")
            return _jsonl_records(text, log)
        raise FileRefused(
            f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg} "
            "(fix the file there, or export it again)"
        ) from None
    except RecursionError:  # pragma: no cover - the depth check above comes first
        raise FileRefused(_too_deep_message()) from None
    items, container = _records_in(document)
    if items and not any(isinstance(item, (dict, str)) for _, item in items):
        kinds = sorted({_json_kind(item) for _, item in items[:1000]})
        raise FileRefused(
            f"JSON holds a list of {len(items):,} values ({' / '.join(kinds)}), not paper records: expected "
            'objects such as {"title": ..., "abstract": ...}'
        )
    if items is None:
        raise FileRefused(
            f"JSON holds {_json_kind(document)}, not paper records: expected a list of objects, or an "
            'object holding one (e.g. {"papers": [...]})'
        )
    if container:
        log.warn("", f"records read from the {container!r} list")
    records = []
    for n, (key, item) in enumerate(items, start=1):
        if key is not None and isinstance(item, dict) and not _has_field(item, "id"):
            item = {**item, "id": key}
        records.append(Record(f"record {n}", n, item))
    return records


_CONTAINER_KEYS = ("papers", "notes", "data", "records", "items", "results", "entries", "rows", "submissions")


def _records_in(document: Any, level: int = 0) -> tuple[list[tuple[str | None, Any]] | None, str]:
    """The list of records in a JSON document, and the key it was found under ("" at the top)."""
    if isinstance(document, list):
        return [(None, item) for item in document], ""
    if not isinstance(document, dict) or level > 3:
        return None, ""
    if _has_field(document, "abstract") or _has_field(document, "title") or "content" in document:
        return [(None, document)], ""
    for key in _CONTAINER_KEYS:
        for actual in document:
            if isinstance(actual, str) and actual.casefold() == key:
                found, _ = _records_in(document[actual], level + 1)
                if found is not None:
                    return found, actual
    lists = [
        (k, v) for k, v in document.items() if isinstance(v, list) and any(isinstance(x, dict) for x in v)
    ]
    if lists:
        key, value = max(lists, key=lambda kv: len(kv[1]))
        return [(None, item) for item in value], str(key)
    values = list(document.values())
    if values and sum(isinstance(v, dict) for v in values) * 2 > len(values):
        return [(str(k), v) for k, v in document.items()], ""
    return None, ""


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object without a list of records" if value else "an empty object"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool) or value is None:
        return f"just {json.dumps(value)}"
    return "a number"


def _lines(text: Any) -> Iterator[tuple[int, bool, Any]]:
    """(line number, is the last line with content, line) of a str or bytes, without listing them all."""
    newline = "\n" if isinstance(text, str) else b"\n"
    content_end = len(text)
    while content_end and text[content_end - 1 : content_end].isspace():  # rstrip() would copy it all
        content_end -= 1
    start, number, size = 0, 0, len(text)
    while start < size:
        end = text.find(newline, start)
        if end < 0:
            end = size
        number += 1
        yield number, end >= content_end, text[start:end]
        start = end + 1


def _jsonl_records(text: str, log: FileLog) -> list[Record]:
    return _records_of_lines(_lines(text), log)


def _jsonl_records_from_bytes(data: bytes | bytearray, log: FileLog) -> tuple[list[Record], str]:
    """JSON Lines decoded line by line: a 45 MB file never becomes one (UCS-4, 180 MB) string, and a
    line in another encoding is read as cp1252/latin-1 with a warning naming it."""
    fallbacks: set[str] = set()

    def decoded() -> Iterator[tuple[int, bool, str]]:
        for number, is_last, raw in _lines(data):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                try:
                    line, codec = raw.decode("cp1252"), "cp1252"
                except UnicodeDecodeError:
                    line, codec = raw.decode("latin-1"), "latin-1"
                fallbacks.add(codec)
                log.warn(f"line {number}", f"not valid UTF-8: read as {codec}; check accented characters")
            yield number, is_last, line

    records = _records_of_lines(decoded(), log)
    return records, "utf-8" if not fallbacks else "utf-8 (some lines " + "/".join(sorted(fallbacks)) + ")"


def _records_of_lines(lines: Iterable[tuple[int, bool, str]], log: FileLog) -> list[Record]:
    records: list[Record] = []
    position = 0
    for number, is_last, line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        place = f"line {number}"
        if stripped.count("[") + stripped.count("{") > limits.MAX_JSON_DEPTH and _json_too_deep(stripped):
            log.skip(place, f"JSON nested more than {limits.MAX_JSON_DEPTH} levels deep")
            continue
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as error:
            hint = " (the file may be cut short)" if is_last else ""
            log.skip(place, f"invalid JSON at column {error.colno}: {error.msg}{hint}")
            continue
        except RecursionError:  # pragma: no cover - the depth check above comes first
            log.skip(place, f"JSON nested more than {limits.MAX_JSON_DEPTH} levels deep")
            continue
        if isinstance(value, list):
            for k, item in enumerate(value, start=1):
                position += 1
                records.append(Record(f"{place} item {k}", position, item))
        else:
            position += 1
            records.append(Record(place, position, value))
    return records
