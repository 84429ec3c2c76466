"""Uploaded corpora on a shared server: limits per upload and per session, and a memory budget.

One server serves every visitor, so what one visitor uploads must not take the others down. Three
things bound it, all set here (the readers' own per-file limits are in `dashboard.corpus`):

Limits (module constants, read at call time). An *upload* is the files added in one go; a
*session's* files are all the files its uploader holds now (they are read together as one corpus).
    MAX_UPLOAD_FILES / MAX_SESSION_FILES                  number of files
    MAX_UPLOAD_BYTES / MAX_SESSION_BYTES                  bytes as uploaded
    MAX_UPLOAD_DECOMPRESSED / MAX_SESSION_DECOMPRESSED    bytes once gunzipped / unzipped
    MAX_UPLOAD_PAPERS / MAX_SESSION_PAPERS                papers read
The first two are checked before anything is read; decompressed bytes are counted by a bounded
pass before the readers run (a gzip stream is inflated 1 MiB at a time and the count stops at the
limit; a zip archive's declared sizes are summed); papers are counted after reading and before the
topics are fitted. A refusal names the limit: ``this session's files: 160,000 papers, above the
limit of 150,000 papers per session (dashboard.server.uploads.MAX_SESSION_PAPERS); remove some files``.

Reading in a worker process. `prepare` (reading, the limits above, and the first topic model) runs
through `dashboard.server.worker.run` with `PARSE_TIMEOUT_SECONDS` and `PARSE_MEMORY_BYTES`, so one
upload's minutes of parsing and fitting use a core of their own, at a lower priority, and never the
server's global interpreter lock.

Time per record. Each record's derived fields (cleaned text, method names, datasets, links, code
status) may take `RECORD_SECONDS` of CPU (`enrich.add_derived_columns_within`); a record that takes
longer is stopped there, kept without them, and named in the load report (its file, ``record N`` and
its id), so one hostile record cannot hold the worker, and the visitors queued behind it, for minutes.

Memory budget. `UploadStore` holds every session's uploaded corpus (its table, topics and the other
results computed from it) under one budget, `MEMORY_BUDGET` bytes for all sessions together. Each
corpus is charged `CHARGE_FACTOR` times the pickled size of what the worker sent back (measured: the
objects take about twice their pickled size once unpickled). Adding a corpus evicts the least
recently used ones until the total fits; a corpus bigger than the whole budget is refused. Sessions
that share the same files share one copy. When a session ends (Streamlit drops it), it lets go of
its corpus, and a corpus no session holds any more is dropped at once; a session whose corpus was
evicted reads its files again (they stay in the uploader) the next time it needs them.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

MiB = 1 << 20
GiB = 1 << 30

MAX_UPLOAD_FILES = 10
MAX_UPLOAD_BYTES = 200 * MiB
MAX_UPLOAD_DECOMPRESSED = 512 * MiB
MAX_UPLOAD_PAPERS = 100_000
MAX_SESSION_FILES = 20
MAX_SESSION_BYTES = 300 * MiB
MAX_SESSION_DECOMPRESSED = 768 * MiB
MAX_SESSION_PAPERS = 150_000

MEMORY_BUDGET = 3 * GiB
CHARGE_FACTOR = 2.0
PARSE_TIMEOUT_SECONDS = 600.0
# CPU seconds one record's derived fields may take: thousands of times an ordinary abstract's, and
# above the slowest 100 kB pathological text with every extractor linear (bench/fuzz.py --extractors).
RECORD_SECONDS = 2.0
PARSE_MEMORY_BYTES = 4 * GiB

_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"


def _size(n: float) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} bytes"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' * (n != 1)}"


@dataclass(frozen=True)
class Limit:
    """One limit: what it counts, how much, and its constant's name (for the message)."""

    what: str  # "files", "bytes", "decompressed", "papers"
    scope: str  # "upload" or "session"
    value: int
    constant: str

    def message(self, found: int) -> str:
        """Why a set of files is refused, naming this limit.

        >>> Limit("files", "upload", 10, "MAX_UPLOAD_FILES").message(12)[:61]
        'this upload: 12 files, above the limit of 10 files per upload'
        """
        whose = "this upload" if self.scope == "upload" else "this session's files"
        if self.what in ("files", "papers"):
            amount, limit = _plural(found, self.what[:-1]), _plural(self.value, self.what[:-1])
        elif self.what == "decompressed":
            amount, limit = f"{_size(found)} once decompressed", f"{_size(self.value)} decompressed"
        else:
            amount, limit = _size(found), _size(self.value)
        return (
            f"{whose}: {amount}, above the limit of {limit} per {self.scope} "
            f"(dashboard.server.uploads.{self.constant}); remove some files"
        )


def limits() -> dict[tuple[str, str], Limit]:
    """Every upload limit by (what, scope), with the values the constants hold now."""
    table = [
        ("files", "upload", "MAX_UPLOAD_FILES"),
        ("bytes", "upload", "MAX_UPLOAD_BYTES"),
        ("decompressed", "upload", "MAX_UPLOAD_DECOMPRESSED"),
        ("papers", "upload", "MAX_UPLOAD_PAPERS"),
        ("files", "session", "MAX_SESSION_FILES"),
        ("bytes", "session", "MAX_SESSION_BYTES"),
        ("decompressed", "session", "MAX_SESSION_DECOMPRESSED"),
        ("papers", "session", "MAX_SESSION_PAPERS"),
    ]
    return {(what, scope): Limit(what, scope, int(globals()[name]), name) for what, scope, name in table}


def check(what: str, upload_total: int, session_total: int) -> str | None:
    """The message of the first limit on ``what`` that the totals pass, or None when both fit.

    >>> check("files", 3, 3) is None
    True
    """
    table = limits()
    for scope, total in (("upload", upload_total), ("session", session_total)):
        limit = table[(what, scope)]
        if total > limit.value:
            return limit.message(total)
    return None


def check_files(
    files: Sequence[tuple[str, int]], new: Iterable[int], imported: SessionTotals | None = None
) -> str | None:
    """Files and bytes: ``files`` are the session's (name, size) pairs, ``new`` the indices just added,
    ``imported`` what the session imported into the library (BibTeX), which counts against the same
    session limits."""
    added = [files[i] for i in new]
    before = imported.bytes if imported is not None else 0
    return check("files", len(added), len(files)) or check(
        "bytes", sum(size for _, size in added), sum(size for _, size in files) + before
    )


@dataclass(frozen=True)
class SessionTotals:
    """What a session has uploaded so far, for the per-session limits: its corpus files (as they are
    now) and the BibTeX files it imported into the library (summed over the session)."""

    bytes: int = 0
    papers: int = 0

    def plus(self, other: SessionTotals) -> SessionTotals:
        """Both totals together.

        >>> SessionTotals(10, 2).plus(SessionTotals(5, 1))
        SessionTotals(bytes=15, papers=3)
        """
        return SessionTotals(self.bytes + other.bytes, self.papers + other.papers)


def check_import(name: str, what: str, amount: int, before: SessionTotals) -> str | None:
    """Why an imported file (a BibTeX file into the library) is refused, naming it and the limit; or
    None. ``what`` is "bytes" or "papers" (its entries); ``before`` is what the session uploaded and
    imported until now. An import counts against the same limits as a corpus upload.

    >>> check_import("refs.bib", "papers", 3, SessionTotals(0, 149_999))[:60]
    'refs.bib: 3 entries, and 149,999 papers uploaded or imported'
    """
    table = limits()
    upload, session = table[(what, "upload")], table[(what, "session")]
    session_total = (before.bytes if what == "bytes" else before.papers) + amount
    if what == "bytes":
        found, earlier = _size(amount), _size(session_total - amount)
        upload_limit, session_limit = _size(upload.value), _size(session.value)
    else:
        found, earlier = f"{amount:,} entries", _plural(session_total - amount, "paper")
        upload_limit, session_limit = _plural(upload.value, "paper"), _plural(session.value, "paper")
    if amount > upload.value:
        return (
            f"{name}: {found}, above the limit of {upload_limit} per upload "
            f"(dashboard.server.uploads.{upload.constant}); import a smaller file"
        )
    if session_total > session.value:
        return (
            f"{name}: {found}, and {earlier} uploaded or imported in this session before it, "
            f"above the limit of {session_limit} per session (dashboard.server.uploads.{session.constant}); "
            "import a smaller file (a new session, after a reload, counts from nothing)"
        )
    return None


def decompressed_size(data: bytes, stop_after: int) -> int:
    """How many bytes ``data`` holds once decompressed, counting at most a little past ``stop_after``.

    gzip (every member) is inflated 1 MiB at a time and dropped as it goes; a zip archive (.xlsx) is
    the sum of the sizes its directory declares (the workbook reader checks them against the real
    ones); anything else is its own size.
    """
    if data.startswith(_ZIP_MAGIC):
        import io
        import zipfile

        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                return sum(max(0, info.file_size) for info in archive.infolist())
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return len(data)
    if not data.startswith(_GZIP_MAGIC):
        return len(data)
    total = 0
    view = memoryview(data)
    position = 0
    while position < len(data) and view[position : position + 2] == _GZIP_MAGIC:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        chunk: bytes | memoryview = view[position:]
        try:
            while True:
                out = inflater.decompress(chunk, MiB)
                total += len(out)
                if total > stop_after:
                    return total
                chunk = inflater.unconsumed_tail
                if inflater.eof or not chunk:
                    break
        except zlib.error:
            return total  # corrupt or truncated: the reader reports it; what came before counts
        if not inflater.eof:
            break
        position = len(data) - len(inflater.unused_data)
    return total


# ------------------------------------------------------------------------------ the job in the worker


@dataclass
class Prepared:
    """What the worker sends back: the corpus read, its first topics, or why it was refused."""

    result: Any = None  # corpus.LoadResult
    analysis: Any = None  # analysis.Analysis, or None
    analysis_problem: str = ""
    n_topics: int | str = "auto"
    refused: str = ""
    decompressed: list[int] = field(default_factory=list)
    seconds: float = 0.0


LIMIT_MODULES = (
    "dashboard.readers.limits",
    "dashboard.readers.safexml",
    "dashboard.readers.workbook",
    "dashboard.server.uploads",
)


def current_settings() -> dict[str, dict[str, Any]]:
    """The limits (upper-case numbers) of the reading modules as they are now in this process.

    The worker process was forked from a server that imported them at start; a caller that raised a
    limit since (``dashboard.corpus.MAX_INPUT_BYTES = ...``) sends them along with the job.
    """
    import importlib

    settings: dict[str, dict[str, Any]] = {}
    for name in LIMIT_MODULES:
        module = importlib.import_module(name)
        settings[name] = {
            key: value
            for key, value in vars(module).items()
            if key.isupper() and isinstance(value, (int, float)) and not isinstance(value, bool)
        }
    return settings


def apply_settings(settings: dict[str, dict[str, Any]]) -> None:
    import importlib

    for name, values in settings.items():
        module = importlib.import_module(name)
        for key, value in values.items():
            setattr(module, key, value)


def fit(papers: Any, n_topics: int | str, setting: str | None, vectors: Any = None) -> Any:
    """Topics of uploaded papers, in the worker (`worker.run` passes arguments by position): the server's
    topic space ``setting`` (`topicspace.configured`, read by the server), and the papers' ``vectors``
    from their first fit, if any, so a refit does not encode them again."""
    from dashboard.search.topicspace import fit_topics

    return fit_topics(papers, n_topics, vectors=vectors, setting=setting)


def prepare(
    files: Sequence[tuple[str, bytes]],
    new: Sequence[int],
    n_topics: int | str,
    settings: dict[str, dict[str, Any]] | None = None,
    imported: SessionTotals | None = None,
    setting: str | None = None,
) -> Prepared:
    """Read a session's files within the limits and fit the first topic model (runs in the worker).

    ``settings`` (from `current_settings` in the server) are applied first; ``imported`` (what the
    session imported into the library) counts against the session's limits; ``setting`` is the server's
    topic space setting (`topicspace.configured`: the worker's own environment may predate it). Never
    raises for bad input: a limit refusal is `Prepared.refused`; a failed topic model is
    `Prepared.analysis_problem` (the table still shows).
    """
    from dashboard import corpus
    from dashboard.search.topicspace import fit_topics
    from dashboard.text import enrich

    if settings:
        apply_settings(settings)
    started = time.perf_counter()
    prepared = Prepared(n_topics=n_topics)
    allowance = max(MAX_UPLOAD_DECOMPRESSED, MAX_SESSION_DECOMPRESSED)
    sizes: list[int] = []
    for _, data in files:
        sizes.append(decompressed_size(data, allowance - sum(sizes)))
        if sum(sizes) > allowance:
            break
    prepared.decompressed = sizes
    added = set(new)
    refused = check(
        "decompressed", sum(s for i, s in enumerate(sizes) if i in added), sum(sizes)
    ) or check_files([(name, len(data)) for name, data in files], new, imported)
    if refused:
        prepared.refused = refused
        return prepared
    read = corpus.load_uploads(files, derive=False)
    per_file = [report.papers for report in read.report.files]
    earlier = imported.papers if imported is not None else 0
    refused = check("papers", sum(n for i, n in enumerate(per_file) if i in added), sum(per_file) + earlier)
    if refused:
        prepared.refused = refused
        return prepared
    papers, over_budget = enrich.add_derived_columns_within(read.papers, RECORD_SECONDS)
    report_over_budget(read.report, papers, over_budget)
    result = corpus.LoadResult(papers=papers, report=read.report)
    prepared.result = result
    if len(result.papers) >= 2:
        try:
            prepared.analysis = fit_topics(result.papers, n_topics, setting=setting)
        except Exception as error:  # the table still shows; the pages say topics failed
            prepared.analysis_problem = (
                f"Topics could not be computed for this corpus ({type(error).__name__}: {error})."
            )
    prepared.seconds = time.perf_counter() - started
    return prepared


def report_over_budget(report: Any, papers: Any, rows: Sequence[int]) -> None:
    """Add to ``report`` (a `corpus.LoadReport`) a warning on each of ``rows`` of ``papers``: a record
    kept without its derived fields because they took longer than `RECORD_SECONDS`."""
    from dashboard.readers import limits
    from dashboard.readers.load_report import Problem

    files = {file.source: file for file in report.files}
    for row in rows:
        paper = papers.iloc[row]
        file = files.get(paper["source"]) or (report.files[-1] if report.files else None)
        if file is None:
            continue
        message = (
            f"paper {paper['id']}: its cleaned text, method names, datasets and links took longer than "
            f"{RECORD_SECONDS:g} s of CPU (dashboard.server.uploads.RECORD_SECONDS); kept without them"
        )
        if len(file.warnings) < limits.MAX_PROBLEMS_PER_FILE:
            file.warnings.append(Problem(file.source, f"record {paper['position']}", message))
        file.n_warnings += 1


# ------------------------------------------------------------------------------------ the memory store


@dataclass
class _Entry:
    charge: int
    holders: set[str]
    values: dict[Hashable, Any]
    charges: dict[Hashable, int]


class UploadStore:
    """Uploaded corpora and what is computed from them, for all sessions, under one memory budget.

    Thread-safe. Values are kept per corpus digest under a key (``"load"``, ``("analyze", 8)``...);
    `memo` computes a missing value once. Every value has a charge in bytes; the sum over all corpora
    stays within ``budget()``, least recently used corpora going first.

        >>> store = UploadStore(budget=lambda: 100)
        >>> store.put("d1", "load", "table", charge=60, holder="s1")
        >>> store.put("d2", "load", "table", charge=60, holder="s2")  # evicts d1
        >>> store.holds("d1"), store.holds("d2")
        (False, True)
    """

    def __init__(self, budget: Callable[[], int] = lambda: MEMORY_BUDGET) -> None:
        self.budget = budget
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.RLock()
        self._computing: dict[tuple[str, Hashable], threading.Lock] = {}
        self.evictions = 0

    def holds(self, digest: str) -> bool:
        """Whether a corpus is in the store (its table was read and not evicted since)."""
        with self._lock:
            return digest in self._entries

    def get(self, digest: str, key: Hashable, holder: str | None = None) -> Any:
        """The value under ``key`` for a corpus, or None; marks the corpus as just used."""
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return None
            self._entries.move_to_end(digest)
            if holder is not None:
                entry.holders.add(holder)
            return entry.values.get(key)

    def put(self, digest: str, key: Hashable, value: Any, *, charge: int, holder: str | None = None) -> None:
        """Keep ``value`` for a corpus, evicting least recently used corpora until the budget holds.

        Raises `MemoryError` when the corpus alone would be above the whole budget.
        """
        with self._lock:
            entry = self._entries.get(digest)
            current = entry.charge if entry is not None else 0
            old = entry.charges.get(key, 0) if entry is not None else 0
            if current - old + charge > self.budget():
                raise MemoryError(
                    f"this corpus needs about {_size(current - old + charge)} of memory, more than the "
                    f"{_size(self.budget())} the server keeps for all uploads "
                    "(dashboard.server.uploads.MEMORY_BUDGET): refused; upload fewer papers"
                )
            if entry is None:
                entry = self._entries[digest] = _Entry(0, set(), {}, {})
            entry.values[key] = value
            entry.charges[key] = charge
            entry.charge = current - old + charge
            if holder is not None:
                entry.holders.add(holder)
            self._entries.move_to_end(digest)
            self._evict(keep=digest)

    def memo(self, digest: str, key: Hashable, compute: Callable[[], tuple[Any, int]]) -> Any:
        """The value under ``key``, computed once by ``compute() -> (value, charge)`` if missing."""
        value = self.get(digest, key)
        if value is not None:
            return value
        with self._lock:
            lock = self._computing.setdefault((digest, key), threading.Lock())
        try:
            with lock:  # two sessions asking at once compute it once
                value = self.get(digest, key)
                if value is not None:
                    return value
                value, charge = compute()
                if self.holds(digest):
                    self.put(digest, key, value, charge=charge)
                return value
        finally:
            with self._lock:
                self._computing.pop((digest, key), None)

    def release(self, holder: str) -> None:
        """A session ended: it lets go of its corpora; those no session holds any more are dropped."""
        with self._lock:
            for digest in list(self._entries):
                entry = self._entries[digest]
                entry.holders.discard(holder)
                if not entry.holders:
                    del self._entries[digest]

    def keep_only(self, alive: Iterable[str]) -> None:
        """Release every holder not in ``alive`` (the sessions the server still has)."""
        alive_set = set(alive)
        with self._lock:
            gone = {h for entry in self._entries.values() for h in entry.holders} - alive_set
        for holder in gone:
            self.release(holder)

    def let_go(self, digest: str, holder: str) -> None:
        """One session stops looking at one corpus (it uploaded others, or went back to the bundled)."""
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return
            entry.holders.discard(holder)
            if not entry.holders:
                del self._entries[digest]

    def total(self) -> int:
        """Bytes charged now, over all corpora."""
        with self._lock:
            return sum(entry.charge for entry in self._entries.values())

    def digests(self) -> list[str]:
        """The corpora held, least recently used first."""
        with self._lock:
            return list(self._entries)

    def _evict(self, keep: str) -> None:
        while sum(e.charge for e in self._entries.values()) > self.budget():
            victim = next((d for d in self._entries if d != keep), None)
            if victim is None:
                return
            del self._entries[victim]
            self.evictions += 1


def approx_bytes(value: Any, depth: int = 0) -> int:
    """About how many bytes ``value`` holds: arrays and tables exactly, other objects by a sample.

    Used to charge the memory budget for what pages compute from an uploaded corpus (term counts,
    link tables, codes per column); the table and topics are charged from their pickled size instead.
    """
    import sys

    import numpy as np
    import pandas as pd

    if depth > 4:
        return 0
    if isinstance(value, np.ndarray):
        if value.dtype == object and value.size:
            picked = value.ravel()[:: max(1, value.size // 100)]
            return int(value.nbytes + value.size * sum(sys.getsizeof(v) for v in picked) / len(picked))
        return int(value.nbytes)
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        usage = value.memory_usage(deep=True)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    if hasattr(value, "data") and hasattr(value, "indices") and hasattr(value, "indptr"):  # scipy sparse
        return int(value.data.nbytes + value.indices.nbytes + value.indptr.nbytes)
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return sys.getsizeof(value)
    if isinstance(value, dict):
        items = list(value.items())
        pairs = items[:: max(1, len(items) // 100)]
        each = sum(approx_bytes(k, depth + 1) + approx_bytes(v, depth + 1) for k, v in pairs)
        return sys.getsizeof(value) + (each * len(items) // len(pairs) if pairs else 0)
    if isinstance(value, (list, tuple, set, frozenset)):
        members = list(value)
        some = members[:: max(1, len(members) // 100)]
        each = sum(approx_bytes(v, depth + 1) for v in some)
        return sys.getsizeof(value) + (each * len(members) // len(some) if some else 0)
    attributes = getattr(value, "__dict__", None)
    if attributes is None and hasattr(value, "__slots__"):
        attributes = {name: getattr(value, name, None) for name in value.__slots__}
    if isinstance(attributes, dict):
        return sys.getsizeof(value) + sum(approx_bytes(v, depth + 1) for v in attributes.values())
    return sys.getsizeof(value)
