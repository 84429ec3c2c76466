"""Pathological abstract texts and every extractor that reads abstract text, for the fuzz test and bench.

`PAYLOADS` are 100,000-character strings made of the shapes that make a backtracking regex engine
slow: long runs of capitals, digits, brackets, ``$``, ``\\``, dots and their mixes, each alone and
after a word that wakes one of the extractors' patterns ("benchmark", "QA", "we propose", "http://").

`extractors()` finds the extractors by walking the modules: every public function of `MODULES`
whose first parameter is text, called with the payload for it and for every other required text
parameter (`ARGUMENTS` gives the few that need something else). A public function that takes no
text is named in `NOT_TEXT`, so a new extractor is fuzzed, or the test says it is unclassified,
without anyone remembering to add it here.
`READERS` are the corpus formats: each reads a file made of the payload.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable
from typing import Any

SIZE = 100_000  # characters per payload: the largest abstract a corpus keeps (MAX_ABSTRACT_CHARS)

# (name, unit, prefix[, suffix]): the payload is prefix + unit repeated + suffix, SIZE characters.
_SHAPES: tuple[tuple[str, ...], ...] = (
    ("capitals", "A", ""),
    ("benchmark + capitals", "A", "benchmark "),
    ("QA + capitals", "A", "QA "),
    ("Eval + capitals", "A", "Eval "),
    ("Bench + capitals", "A", "Bench "),
    ("we propose + capitals", "A", "we propose "),
    ("capitals and digits", "A9", "benchmark QA "),
    ("capital words", "Aa", "benchmark QA Eval "),
    ("capitals and hyphens", "A-", "benchmark QA "),
    ("capital words with spaces", "A ", "we propose "),
    ("Bench-A- chain", "Bench-A-", "benchmark "),
    ("A-QA words", "A-QA ", "benchmark "),
    ("digits", "9", "ImageNet-"),
    ("digits and dots", "9.", "MNIST-"),
    ("capitals and dots", "A.", ""),
    ("dots", ".", "A"),
    ("opening brackets", "[", ""),
    ("closing brackets", "]", ""),
    ("opening parentheses", "(", "we propose A "),
    ("capital in parentheses", "(A", "we propose "),
    ("braces", "{", "\\emph"),
    ("dollars", "$", ""),
    ("dollar x", "$x", ""),
    ("backslashes", "\\", ""),
    ("emph commands", "\\emph{", ""),
    ("textbf commands", "\\textbf{", "we propose "),
    ("url commands", "\\url{", ""),
    ("carets", "^", "x"),
    ("underscores", "_", "x"),
    ("stars", "*", "a"),
    ("bold stars", "**a", ""),
    ("backticks", "`", ""),
    ("LaTeX quotes", "``a", ""),
    ("tildes", "~", "A"),
    ("markdown links", "[a](", ""),
    ("html tags", "<sup>", ""),
    ("entities", "&#", ""),
    ("colons", "A: ", ""),
    ("naming words", "named ", ""),
    ("cues", "we propose ", ""),
    ("http + dotted host", "a.", "http://"),
    ("repeated http", "http://a.", ""),
    ("www + dotted host", "a.", "www."),
    ("github paths", "a/", "github.com/"),
    ("spaces", " ", "A"),
    ("newlines", "\n", "A"),
    ("hyphens", "-", "A"),
    ("CJK", "中", ""),
    # a run that a pattern's leading or trailing part scans, then the character it waits for
    ("spaces, then a tag", " ", "<sup>", "<"),
    ("spaces, then a command", " ", "\\x", "\\"),
    ("tabs, then a command", "\t", "\\x", "\\"),
    ("spaces, then and", " ", "Ann", "andy"),
    ("spaces, then a comma", " ", "a", ","),
    ("letters, then a slash", "a", "", "/"),
    ("capitals, then Bench", "A", "benchmark ", "Bench"),
    # what a loop over matches redoes from the start of the text at each one
    ("abbreviations", "e.g. A ", "We "),
    ("clauses", "a, which ", "We "),
    ("relative clauses", "We a that ", ""),
    ("sentences", "A. ", ""),
    ("unclosed bold", "__a ", ""),
    ("spaced punctuation", " ,", "a"),
    ("parenthesised capitals", "(A) ", "we propose "),
)


def payloads(size: int = SIZE) -> dict[str, str]:
    """Shape name -> a pathological text of ``size`` characters (or a few fewer)."""
    texts = {}
    for name, unit, prefix, *suffix in _SHAPES:
        end = suffix[0] if suffix else ""
        texts[name] = prefix + unit * ((size - len(prefix) - len(end)) // len(unit)) + end
    return texts


PAYLOADS = payloads()

MODULES = (
    "dashboard.text.extract",
    "dashboard.text.clean",
    "dashboard.text.tokens",
    "dashboard.screen",
    "dashboard.text.links",
    "dashboard.text.enrich",
    "dashboard.readers.venues",
)

# Public functions that take something other than abstract text (a list, a number, a table, a path).
NOT_TEXT = frozenset(
    {
        "dashboard.text.extract.load_dataset_names",  # a path to a list file
        "dashboard.text.tokens.min_df_for",  # a number of documents
        "dashboard.text.tokens.make_vectorizer",  # settings; its analyzer is `ngrams`, fuzzed
        "dashboard.text.enrich.add_derived_columns",  # a table; per row it runs `derive_fields`, fuzzed
        "dashboard.text.enrich.derive_all",  # columns; per row it runs `derive_fields`, fuzzed
        "dashboard.text.enrich.add_derived_columns_within",  # a table, as add_derived_columns
    }
)

# The functions that need more than the text: how to call each with a payload.
ARGUMENTS: dict[str, Callable[[str], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "dashboard.text.extract.derived_title": lambda text: ((text, ["A", "AA"]), {}),
    "dashboard.text.extract.name_meanings": lambda text: (([text, text], [["A", "AA"], ["A", "AA"]]), {}),
    "dashboard.text.links.code_release": lambda text: (([], text), {}),
    "dashboard.text.tokens.ngrams_of_scan": lambda text: ((text.split(" "),), {}),
    "dashboard.screen.visible_frame": lambda text: ((_frame(text),), {"strip": True}),
    "dashboard.text.enrich.derive_fields": lambda text: ((text,), {}),
}


def _frame(text: str) -> Any:
    import pandas as pd

    return pd.DataFrame({"abstract": [text], "title": [text[:300]]})


def _qualified(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__name__}"


def public_functions() -> list[Callable[..., Any]]:
    """Every public function defined in `MODULES` (not the ones they import)."""
    functions = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("_") and function.__module__ == module_name:
                functions.append(function)
    return functions


def _takes_text(function: Callable[..., Any]) -> bool:
    """True when the first parameter and every other one without a default is text."""
    parameters = list(inspect.signature(function).parameters.values())
    required = [p for p in parameters[1:] if p.default is inspect.Parameter.empty]
    return bool(parameters) and all(
        str(p.annotation) in ("str", "object") for p in [parameters[0], *required]
    )


def _with_text(function: Callable[..., Any]) -> Callable[[str], object]:
    """A call of ``function`` with the text for its first parameter and every other required one."""
    parameters = list(inspect.signature(function).parameters.values())
    required = [p for p in parameters[1:] if p.default is inspect.Parameter.empty]
    if not required:
        return function
    positional = [p.name for p in required if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    keywords = [p.name for p in required if p.kind is inspect.Parameter.KEYWORD_ONLY]

    def call(text: str) -> object:
        return function(text, *[text] * len(positional), **dict.fromkeys(keywords, text))

    return call


def unclassified() -> list[str]:
    """Public functions that are neither called with text nor named in `NOT_TEXT`."""
    return [
        _qualified(f)
        for f in public_functions()
        if _qualified(f) not in NOT_TEXT and _qualified(f) not in ARGUMENTS and not _takes_text(f)
    ]


def extractors() -> dict[str, Callable[[str], object]]:
    """Qualified name -> a call of that extractor with one payload."""
    calls: dict[str, Callable[[str], object]] = {}
    for function in public_functions():
        name = _qualified(function)
        if name in ARGUMENTS:
            calls[name] = _calling(function, ARGUMENTS[name])
        elif name not in NOT_TEXT and _takes_text(function):
            calls[name] = _with_text(function)
    return calls


def _calling(
    function: Callable[..., Any], arguments: Callable[[str], tuple[tuple[Any, ...], dict[str, Any]]]
) -> Callable[[str], object]:
    def call(text: str) -> object:
        positional, keywords = arguments(text)
        return function(*positional, **keywords)

    return call


def _record(text: str) -> dict[str, str]:
    return dict.fromkeys(_RECORD_FIELDS, text)


_RECORD_FIELDS = ("title", "abstract", "authors", "keywords", "affiliations", "venue", "year", "decision",
                  "url", "code_url", "arxiv_id", "primary_area", "tldr")  # fmt: skip


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def _csv(text: str) -> bytes:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_RECORD_FIELDS)
    writer.writerow([text] * len(_RECORD_FIELDS))
    return out.getvalue().encode("utf-8")


# Reader name -> (file name, the file's bytes made of a payload, enrich?). The raw files are what a
# visitor may upload as is; the records put the payload in every field, the enriched one through the
# whole upload path (reading, then every derived field).
READERS: dict[str, tuple[str, Callable[[str], bytes], bool]] = {
    **{ext: (f"hostile.{ext}", _utf8, False) for ext in ("txt", "md", "json", "jsonl", "csv", "tsv", "bib")},
    "json record": ("hostile.json", lambda text: json.dumps([_record(text)]).encode("utf-8"), False),
    "csv record": ("hostile.csv", _csv, False),
    "jsonl record, enriched": ("hostile.jsonl", lambda text: json.dumps(_record(text)).encode("utf-8"), True),
}  # fmt: skip


def read_as(reader: str, text: str) -> object:
    """Load a file made of ``text`` the way `READERS` says, through `dashboard.corpus.load_uploads`."""
    from dashboard import corpus

    name, make, derive = READERS[reader]
    return corpus.load_uploads([(name, make(text))], derive=derive)


# The pattern `extract.datasets` used before issue 56: quadratic in a run of capitals (24 s on
# "benchmark " + 20,000 capitals), so a record of one stalls for minutes in the regex engine's C code.
QUADRATIC_BENCH = r"[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-?[Bb]ench(?:-[A-Z][A-Za-z0-9]*)*(?![\w-])"
STALLING_ABSTRACT = "benchmark " + "A" * 60_000  # minutes for QUADRATIC_BENCH


def stalling_datasets(text: str, **_: object) -> list[str]:
    """A stand-in for `extract.datasets` that stalls in C on `STALLING_ABSTRACT` (the old pattern)."""
    import re

    return re.findall(QUADRATIC_BENCH, text)


def prepare_with_stalling_datasets(files: list[tuple[str, bytes]], record_seconds: float) -> Any:
    """`uploads.prepare` with `stalling_datasets` in place of the real one: a job for `worker.run`."""
    from dashboard.server import uploads
    from dashboard.text import enrich

    enrich.datasets = stalling_datasets  # type: ignore[assignment]  # in the worker's process only
    settings = {"dashboard.server.uploads": {"RECORD_SECONDS": record_seconds}}
    return uploads.prepare(files, range(len(files)), "auto", settings)
