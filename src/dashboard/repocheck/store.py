"""The repository cache: one SQLite file with its schema in code.

WAL mode (readers never wait for the writer; many app sessions and CLI runs share one file), a
``schema_version`` table and numbered migrations, every write in one ``BEGIN IMMEDIATE``
transaction, so a killed process leaves either the whole answer for a repository or none of it.

Tables: ``answers`` (one row per repository: state, stars, licence, dates, when checked),
``responses`` (per API path: the ETag and the trimmed body it came with, so a 304 reuses the body)
and ``limits`` (the last known rate limit of each API, so the app can say how many requests remain).
Tokens are never passed to this module.

The default file is ``$XDG_DATA_HOME/paper-dashboard/repositories.sqlite`` (else
``~/.local/share/...``); ``PAPER_DASHBOARD_CACHE`` or ``--cache FILE`` choose another.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from dashboard.schema import REPO_STATES
from dashboard.system import sqlite as sqlitepolicy

ENV_CACHE = "PAPER_DASHBOARD_CACHE"
DEFAULT_MAX_AGE_DAYS = 7.0
BUSY_TIMEOUT_MS = int(sqlitepolicy.BUSY_TIMEOUT_S * 1000)  # the package's one policy, with its retries

ANSWER_COLUMNS: tuple[str, ...] = (
    "key", "host", "repo", "state", "stars", "license", "created_at", "pushed_at", "moved_to", "detail",
    "checked_at",
)  # fmt: skip


def default_path(environ: Mapping[str, str]) -> Path:
    """Where the cache lives: ``PAPER_DASHBOARD_CACHE``, else the user's data directory."""
    chosen = environ.get(ENV_CACHE, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    data_home = environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
    return Path(data_home) / "paper-dashboard" / "repositories.sqlite"


def _migration_1(connection: sqlite3.Connection) -> None:
    connection.execute(
        """CREATE TABLE answers (
            key TEXT PRIMARY KEY, host TEXT NOT NULL, repo TEXT NOT NULL, state TEXT NOT NULL,
            stars INTEGER, license TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL DEFAULT '',
            pushed_at TEXT NOT NULL DEFAULT '', moved_to TEXT NOT NULL DEFAULT '',
            detail TEXT NOT NULL DEFAULT '', checked_at REAL NOT NULL)"""
    )
    connection.execute(
        """CREATE TABLE responses (
            api TEXT NOT NULL, path TEXT NOT NULL, etag TEXT NOT NULL, status INTEGER NOT NULL,
            body BLOB NOT NULL, stored_at REAL NOT NULL, PRIMARY KEY (api, path))"""
    )


def _migration_2(connection: sqlite3.Connection) -> None:
    connection.execute(
        "CREATE TABLE limits ("
        "api TEXT PRIMARY KEY, remaining INTEGER, reset_at REAL, updated_at REAL NOT NULL)"
    )
    connection.execute("CREATE INDEX answers_checked_at ON answers (checked_at)")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_migration_1, _migration_2)


MAX_STARS = 2**53 - 1
LATEST_TIME = 4102444800.0  # 2100-01-01: a check or reset time after it is no time this cache wrote
MAX_REMAINING = 10**9


_ONE_LINE = ("key", "host", "repo", "state", "license", "created_at", "pushed_at", "moved_to")
_LINE_BREAK = re.compile(r"[\x00-\x1f\x7f]")
_POSITION = {column: i for i, column in enumerate(ANSWER_COLUMNS)}
_SOUND_STATES = [state for state in REPO_STATES if state != "moved"]


def row_problem(row: Mapping[str, object]) -> str:
    """Why an answer row cannot be kept or shown (``""`` when it can): the checks every row passes
    before it is written and after it is read, so an edited or foreign file never raises on a page."""
    return _values_problem(tuple(row.get(column) for column in ANSWER_COLUMNS))


def _values_problem(values: tuple[object, ...]) -> str:
    """`row_problem` of a row as `ANSWER_COLUMNS` values (what a query gives: no dict per row)."""
    texts = [values[_POSITION[column]] for column in _ONE_LINE]
    for column, value in zip(_ONE_LINE, texts, strict=True):
        if type(value) is not str:
            return f"{column} is not text"
    detail = values[_POSITION["detail"]]
    if type(detail) is not str:
        return "detail is not text"
    lines = [str(value) for value in texts]
    if _LINE_BREAK.search("".join(lines)):
        bad = next(c for c, v in zip(_ONE_LINE, lines, strict=True) if _LINE_BREAK.search(v))
        return f"{bad} is not one line of text"
    state = values[_POSITION["state"]]
    if state not in REPO_STATES:
        return f"state {str(state)[:30]!r} is not a repository state"
    stars = values[_POSITION["stars"]]
    if stars is not None and not (type(stars) is int and 0 <= stars <= MAX_STARS):
        return f"stars {str(stars)[:30]!r} is not a count"
    checked = values[_POSITION["checked_at"]]
    if not (type(checked) in (int, float) and 0 <= checked <= LATEST_TIME):  # type: ignore[operator]
        return f"checked_at {str(checked)[:30]!r} is not a time"
    if state == "moved":
        from dashboard.repocheck.states import valid_segment

        moved = str(values[_POSITION["moved_to"]])
        if not (moved and all(valid_segment(s) for s in moved.split("/"))):
            return f"moved_to {moved[:80]!r} is not a repository name"
    return ""


def limit_problem(remaining: object, reset_at: object) -> str:
    """Why a stored rate limit cannot be used (``""`` when it can)."""
    if remaining is not None and not (
        isinstance(remaining, int) and not isinstance(remaining, bool) and 0 <= remaining <= MAX_REMAINING
    ):
        return f"remaining {str(remaining)[:30]!r} is not a count"
    if reset_at is not None and not (
        isinstance(reset_at, int | float) and math.isfinite(reset_at) and 0 <= reset_at <= LATEST_TIME
    ):
        return f"reset_at {str(reset_at)[:30]!r} is not a time"
    return ""


class StoreError(Exception):
    """The cache file cannot be opened or read (the feature degrades; the app goes on)."""


@dataclass(frozen=True)
class Stored:
    """A stored response: its ETag, status and (trimmed) body."""

    etag: str
    status: int
    body: bytes


class Store:
    """The cache. Thread-safe: one connection, one lock; other processes share the file through WAL.

    with Store.open(path) as store:
        store.save_answer(...)
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._connection = connection
        self._lock = threading.Lock()
        self.skipped: list[str] = []  # rows read and left out (`row_problem`, `limit_problem`), said why

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: Path | str) -> Store:
        """Open (creating it and its folder when needed) and migrate to the current schema."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                         isolation_level=None)  # fmt: skip
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            sqlitepolicy.with_retries(lambda: connection.execute("PRAGMA journal_mode = WAL"))
            connection.execute("PRAGMA synchronous = NORMAL")
            _migrate(connection)
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"cannot open the repository cache {path}: {error}") from None
        return cls(connection, path)

    @classmethod
    def open_existing(cls, path: Path | str) -> Store | None:
        """Open for reading only, or None when the file does not exist (nothing is created)."""
        path = Path(path)
        if not path.is_file():
            return None
        try:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                         timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)  # fmt: skip
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            version = _version(connection)
        except sqlite3.Error as error:
            raise StoreError(f"cannot read the repository cache {path}: {error}") from None
        if version < 1:
            return None
        if version > len(MIGRATIONS):
            raise StoreError(f"the repository cache {path} is from a newer version (schema {version})")
        return cls(connection, path, read_only=True)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    def schema_version(self) -> int:
        """The schema version of the file."""
        with self._lock:
            return _version(self._connection)

    def fresh_keys(self, keys: Iterable[str], max_age_days: float, now: float | None = None) -> set[str]:
        """The keys answered less than ``max_age_days`` ago (``error`` answers are never fresh)."""
        oldest = (time.time() if now is None else now) - max_age_days * 86400
        wanted = list(dict.fromkeys(keys))
        fresh: set[str] = set()
        # A row that would be skipped on reading (`row_problem`) is not fresh either: it is asked again.
        states = ",".join(f"'{state}'" for state in REPO_STATES if state not in ("error", "not_checked"))
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._connection.execute(
                    f"SELECT key FROM answers WHERE key IN ({marks})"
                    f" AND checked_at >= ? AND checked_at <= {LATEST_TIME} AND state IN ({states})"
                    " AND (stars IS NULL OR (typeof(stars) = 'integer' AND stars >= 0))",
                    (*chunk, oldest),
                )
                fresh.update(row[0] for row in rows)
        return fresh

    def response(self, api: str, path: str) -> Stored | None:
        """The stored response of an API path, for a conditional request."""
        with self._lock:
            row = self._connection.execute(
                "SELECT etag, status, body FROM responses WHERE api = ? AND path = ?", (api, path)
            ).fetchone()
        return Stored(row[0], int(row[1]), bytes(row[2])) if row else None

    def answers(self, keys: Sequence[str] | None = None) -> pd.DataFrame:
        """Stored answers (every column of `ANSWER_COLUMNS`), all of them or those of ``keys``.

        A row that cannot be shown (`row_problem`: an edited or foreign file) is left out, and said
        in `skipped`.
        """
        columns = ", ".join(ANSWER_COLUMNS)
        with self._lock:
            if keys is None:
                rows = self._connection.execute(f"SELECT {columns} FROM answers ORDER BY key").fetchall()
            else:
                rows = []
                wanted = list(dict.fromkeys(keys))
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows += self._connection.execute(
                        f"SELECT {columns} FROM answers WHERE key IN ({marks})", chunk
                    ).fetchall()
        frame = pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))

        # Whole columns at a time: every row of the cache is read on each change of it. Only rows
        # these cannot vouch for (moved ones, whose new name is checked, and bad ones) go one by one.
        def texts(column: str) -> np.ndarray | bool:
            # One pass in C when the whole column is text (the usual case), else value by value.
            if infer_dtype(frame[column], skipna=False) in ("string", "empty"):
                return True
            return frame[column].map(type).eq(str).to_numpy(dtype=bool)

        def numbers(column: str, top: float, kinds: tuple[type, ...], whole: bool) -> np.ndarray:
            values = frame[column]
            found = pd.to_numeric(values, errors="coerce")
            ok = found.between(0, top).to_numpy(dtype=bool)
            if whole:
                ok = ok & (found % 1 == 0).to_numpy(dtype=bool)
            if values.dtype == object:  # text or blobs among them: only numbers of these types count
                ok = ok & values.map(type).isin(kinds).to_numpy(dtype=bool)
            return ok

        sound = frame["state"].isin(_SOUND_STATES).to_numpy(dtype=bool)
        for column in (*_ONE_LINE, "detail"):
            sound = sound & texts(column)
        stars_ok = frame["stars"].isna().to_numpy(dtype=bool) | numbers("stars", MAX_STARS, (int,), True)
        times_ok = numbers("checked_at", LATEST_TIME, (int, float), False)
        sound = sound & stars_ok & times_ok
        if not sound.all():
            kept = sound.copy()
            for position in np.flatnonzero(~sound):
                values = rows[position]
                problem = _values_problem(values)
                if problem:
                    self._skip(f"answer {str(values[0])[:80]!r}: {problem}")
                else:
                    kept[position] = True
            frame = frame[kept].reset_index(drop=True)
        frame["stars"] = pd.array(frame["stars"].tolist(), dtype="Int64")
        return frame

    def _skip(self, message: str) -> None:
        if message not in self.skipped and len(self.skipped) < 1000:
            self.skipped.append(message)

    def generation(self) -> tuple[int, float]:
        """(answers, latest check time): changes whenever an answer is written."""
        with self._lock:
            count, latest = self._connection.execute(
                "SELECT count(*), max(checked_at) FROM answers"
            ).fetchone()
        return int(count), float(latest or 0.0)

    def limits(self) -> dict[str, tuple[int | None, float | None]]:
        """The last known (remaining, reset time) per API."""
        with self._lock:
            rows = self._connection.execute("SELECT api, remaining, reset_at FROM limits").fetchall()
        kept: dict[str, tuple[int | None, float | None]] = {}
        for api, remaining, reset_at in rows:
            problem = limit_problem(remaining, reset_at)
            if problem:
                self._skip(f"rate limit of {str(api)[:30]!r}: {problem}")
            else:
                kept[str(api)] = (remaining, None if reset_at is None else float(reset_at))
        return kept

    # ------------------------------------------------------------------ writing (one transaction each)

    def save_answer(
        self, answer: Mapping[str, object], responses: Iterable[tuple[str, str, Stored]] = ()
    ) -> None:
        """Write one repository's answer and the responses it came from, all or nothing."""
        values = [answer.get(column) for column in ANSWER_COLUMNS]
        placeholders = ",".join("?" * len(ANSWER_COLUMNS))
        stored_at = float(answer.get("checked_at") or time.time())  # type: ignore[arg-type]
        with self._lock, _transaction(self._connection):
            self._connection.execute(
                f"INSERT OR REPLACE INTO answers ({', '.join(ANSWER_COLUMNS)}) VALUES ({placeholders})",
                values,
            )
            for api, path, stored in responses:
                self._connection.execute(
                    "INSERT OR REPLACE INTO responses (api, path, etag, status, body, stored_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (api, path, stored.etag, stored.status, stored.body, stored_at),
                )

    def save_limits(self, limits: Mapping[str, tuple[int | None, float | None]]) -> None:
        """Remember each API's last known rate limit."""
        if not limits:
            return
        now = time.time()
        with self._lock, _transaction(self._connection):
            for api, (remaining, reset_at) in limits.items():
                if limit_problem(remaining, reset_at):
                    continue  # the client never notes such a limit; kept out all the same
                self._connection.execute(
                    "INSERT OR REPLACE INTO limits (api, remaining, reset_at, updated_at)"
                    " VALUES (?, ?, ?, ?)",
                    (api, remaining, reset_at, now),
                )


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error): the write lock is taken up front,
    so two writers never deadlock upgrading a read lock."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> None:
        sqlitepolicy.with_retries(lambda: self.connection.execute("BEGIN IMMEDIATE"))

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.connection.execute("COMMIT" if kind is None else "ROLLBACK")


def _version(connection: sqlite3.Connection) -> int:
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = connection.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def _migrate(connection: sqlite3.Connection) -> None:
    """Apply the migrations the file lacks, each with its version bump in one transaction."""
    with _transaction(connection):
        connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        current = _version(connection)
        if current > len(MIGRATIONS):
            raise sqlite3.DatabaseError(f"schema {current} is newer than this version knows")
        for number, migration in enumerate(MIGRATIONS[current:], start=current + 1):
            migration(connection)
            connection.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))


def file_size(path: Path) -> int:
    """Bytes on disk of the cache with its WAL and shared-memory files."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())
