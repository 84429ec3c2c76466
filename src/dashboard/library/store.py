"""The personal library: named lists of papers with notes, tags and a read mark, and topic names, in SQLite.

One SQLite file (standard `sqlite3`) outlives sessions, restarts and rebuilds of the corpus:

    >>> lib = Library.open(":memory:")
    >>> lib.add("to read", papers.head(3))  # doctest: +SKIP
    3

Storage choices (the issue leaves these open):

- **Where.** ``--library none|session|FILE`` on the app's command line, else ``PAPER_DASHBOARD_LIBRARY``
  (same values), else ``library.sqlite`` in the user's data directory (``$XDG_DATA_HOME/paper-dashboard``,
  ``~/.local/share/paper-dashboard`` by default; ``%APPDATA%`` on Windows, ``~/Library/Application
  Support`` on macOS). ``none`` switches the feature off; ``session`` keeps an in-memory library per
  browser session (a public deployment: one visitor never sees or changes another's lists).
- **The file.** WAL journal, foreign keys on, a ``schema_version`` table and numbered migrations in
  `MIGRATIONS`; every write is one ``BEGIN IMMEDIATE`` transaction, and a busy timeout lets concurrent
  writers (several sessions, the CLI) wait for each other instead of failing. A file that cannot be
  opened (not a database, locked, from a newer version) raises `LibraryError` with a message naming
  it, and is never rewritten: the app goes on without the library.
- **A paper** is kept by its corpus id *and* a content fingerprint (sha256 of the normalised title and
  abstract: NFKC, case-folded, letters and digits only), with a copy of what an export needs (title,
  authors, venue, year, url, abstract). `resolve` finds it in a corpus by id (checked against the
  title, since ids such as ``file-12`` are positions), else by fingerprint, else by normalised title;
  a paper found nowhere stays in its lists as "not in this corpus".
- **Notes, tags and the read mark belong to the paper**, not to one list, so moving a paper between
  lists keeps them.
- **Topic names** are kept per corpus name with the topic's top terms; `apply_topic_names` puts them
  back on a new fit by matching topics on their terms (Jaccard overlap of the top terms at least
  `TOPIC_MATCH_THRESHOLD`, best pairs first), and reports stored names no topic matched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import sqlite3
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dashboard.system import sqlite as sqlitepolicy

if TYPE_CHECKING:
    from dashboard.server.uploads import SessionTotals

ENV_LIBRARY = "PAPER_DASHBOARD_LIBRARY"
FILE_NAME = "library.sqlite"
APP_DIR = "paper-dashboard"
DEFAULT_LIST = "to read"
BUSY_TIMEOUT_S = sqlitepolicy.BUSY_TIMEOUT_S
MAX_NAME_CHARS = 100
MAX_NOTE_CHARS = 20_000
MAX_TAG_CHARS = 50
TOPIC_MATCH_THRESHOLD = 0.3
TOPIC_TERMS_KEPT = 10


class LibraryError(Exception):
    """The library cannot be used (file not a database, locked, newer schema, bad name...)."""


# --------------------------------------------------------------------- where the library lives


@dataclass(frozen=True)
class Location:
    """Where the library is: ``mode`` is ``off``, ``session`` (in memory) or ``file`` (with ``path``)."""

    mode: str
    path: Path | None = None
    origin: str = "default"

    @property
    def label(self) -> str:
        """For people: ``off``, ``this session only`` or the file."""
        if self.mode == "off":
            return "off"
        if self.mode == "session":
            return "this session only"
        return str(self.path)


def default_path(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """``library.sqlite`` in the user's data directory (XDG on Linux, by hand: no extra dependency).

    >>> default_path({"XDG_DATA_HOME": "/data"}, "linux")
    PosixPath('/data/paper-dashboard/library.sqlite')
    """
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if platform.startswith("win") and env.get("APPDATA"):
        base = Path(env["APPDATA"])
    elif platform == "darwin":
        base = Path(env.get("HOME", str(Path.home()))) / "Library" / "Application Support"
    else:
        xdg = env.get("XDG_DATA_HOME", "").strip()
        base = (
            Path(xdg)
            if xdg and Path(xdg).is_absolute()
            else Path(env.get("HOME", str(Path.home()))) / (".local/share")
        )
    return base / APP_DIR / FILE_NAME


def parse_location(value: str | None, origin: str, environ: Mapping[str, str] | None = None) -> Location:
    """``none``/``off``, ``session`` or a file path (``~`` expanded); empty means the default file.

    >>> parse_location("none", "command line").mode
    'off'
    """
    text = (value or "").strip()
    if text.lower() in ("none", "off"):
        return Location("off", origin=origin)
    if text.lower() == "session":
        return Location("session", origin=origin)
    if not text:
        return Location("file", default_path(environ), origin="default")
    return Location("file", Path(text).expanduser(), origin=origin)


def location_from(argv: Sequence[str], environ: Mapping[str, str]) -> Location:
    """The library the app uses: ``--library`` in ``argv``, else `ENV_LIBRARY`, else the default file."""
    for n, arg in enumerate(argv):
        if arg == "--library" and n + 1 < len(argv):
            return parse_location(argv[n + 1], "command line", environ)
        if arg.startswith("--library="):
            return parse_location(arg.split("=", 1)[1], "command line", environ)
    if environ.get(ENV_LIBRARY, "").strip():
        return parse_location(environ[ENV_LIBRARY], ENV_LIBRARY, environ)
    return parse_location("", "default", environ)


# --------------------------------------------------------------------- fingerprints

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise_text(text: Any) -> str:
    """Letters and digits only, case-folded, single spaces: what two copies of a text share.

    >>> normalise_text("  Attention Is *All* You-Need! ")
    'attention is all you need'
    """
    if not isinstance(text, str):
        text = "" if text is None or (isinstance(text, float) and np.isnan(text)) else str(text)
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", folded).split())


def fingerprint(title: Any, abstract: Any) -> str:
    """Content fingerprint of a paper: the same for any file or parse that holds the same text."""
    body = normalise_text(title) + "\x1f" + normalise_text(abstract)
    return hashlib.sha256(body.encode()).hexdigest()[:32]


# --------------------------------------------------------------------- schema


def _run(db: sqlite3.Connection, script: str) -> None:
    """Run ``;``-separated statements inside the open transaction (``executescript`` would commit it)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _migration_1(db: sqlite3.Connection) -> None:
    """Lists, papers (id, fingerprint and what an export needs), list entries, a note per paper."""
    _run(
        db,
        """
        CREATE TABLE lists (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        );
        CREATE TABLE papers (
            id INTEGER PRIMARY KEY,
            fingerprint TEXT NOT NULL UNIQUE,
            corpus_id TEXT NOT NULL DEFAULT '',
            title_key TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            authors TEXT NOT NULL DEFAULT '[]',
            venue TEXT NOT NULL DEFAULT '',
            year INTEGER,
            url TEXT NOT NULL DEFAULT '',
            abstract TEXT NOT NULL DEFAULT '',
            note TEXT NOT NULL DEFAULT '',
            added_at TEXT NOT NULL
        );
        CREATE INDEX papers_title_key ON papers(title_key);
        CREATE TABLE entries (
            list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
            paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
            added_at TEXT NOT NULL,
            PRIMARY KEY (list_id, paper_id)
        );
        CREATE INDEX entries_paper ON entries(paper_id);
        """,
    )


def _migration_2(db: sqlite3.Connection) -> None:
    """Tags and the read mark; every corpus id a paper was seen under; topic names; a revision counter."""
    _run(
        db,
        """
        ALTER TABLE papers ADD COLUMN is_read INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE tags (
            paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (paper_id, tag)
        );
        CREATE INDEX tags_tag ON tags(tag);
        CREATE TABLE paper_ids (
            paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
            corpus_id TEXT NOT NULL,
            PRIMARY KEY (corpus_id, paper_id)
        );
        INSERT INTO paper_ids (paper_id, corpus_id) SELECT id, corpus_id FROM papers WHERE corpus_id != '';
        CREATE TABLE topic_names (
            id INTEGER PRIMARY KEY,
            corpus TEXT NOT NULL,
            name TEXT NOT NULL,
            terms TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX topic_names_corpus ON topic_names(corpus);
        CREATE TABLE revision (n INTEGER NOT NULL);
        INSERT INTO revision VALUES (0);
        """,
    )


def _migration_3(db: sqlite3.Connection) -> None:
    """Saved searches (a name and a `Filters` as its URL query) and the corpus versions the user has
    seen, each with the ids and title hashes it was the first to show (`dashboard.library.searches`)."""
    _run(
        db,
        """
        CREATE TABLE saved_searches (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            query TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE seen_versions (
            id INTEGER PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            label TEXT NOT NULL DEFAULT '',
            opened_at TEXT NOT NULL,
            papers INTEGER NOT NULL,
            new_ids BLOB NOT NULL,
            new_titles BLOB NOT NULL
        );
        """,
    )


# Numbered migrations: MIGRATIONS[n - 1] takes a library from version n - 1 to n. Never edit one that
# has shipped; add the next.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_migration_1, _migration_2, _migration_3)
SCHEMA_VERSION = len(MIGRATIONS)


# The busy timeout and retries are the package's one policy for SQLite stores (`dashboard.system.sqlite`).
connect = sqlitepolicy.connect
with_retries = sqlitepolicy.with_retries


LIBRARY_TABLES = frozenset({"lists", "papers", "entries"})
REPOSITORY_CACHE_TABLES = frozenset({"answers", "responses"})


def _refusal(path: Path, timeout: float) -> str | None:
    """Why an existing file must not be opened as the library (None when it may), found read-only so a
    foreign or newer file is never changed: not SQLite, the repository cache, another program's
    database, or a library of a newer schema."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    ro = connect(path, timeout, read_only=True)
    try:
        tables = {row[0] for row in ro.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = schema_version(ro) if "schema_version" in tables else 0
    finally:
        ro.close()
    left = "it was left as it is"
    if not tables:
        return None
    if tables >= REPOSITORY_CACHE_TABLES:
        return (
            "this is the repository cache of check-code, not a library: give the library its own file "
            f"(--library FILE or {ENV_LIBRARY}); {left}"
        )
    if not tables >= LIBRARY_TABLES:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        return f"not a Paper Dashboard library (another program's database, with tables {shown}); {left}"
    if version > SCHEMA_VERSION:
        return (
            f"the library was written by a newer Paper Dashboard (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); {left}"
        )
    return None


def schema_version(db: sqlite3.Connection) -> int:
    """The version a library file is at (0 for a new, empty file)."""
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(db: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the library up to ``target`` (each step in its own transaction); the version reached."""
    version = schema_version(db)
    if version > SCHEMA_VERSION:
        raise LibraryError(
            f"the library was written by a newer Paper Dashboard (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); it is left as it is"
        )
    while version < target:
        with _transaction(db):
            if schema_version(db) != version:  # another process migrated it meanwhile
                version = schema_version(db)
                continue
            if version == 0:
                db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)")
            MIGRATIONS[version](db)
            version += 1
            db.execute("INSERT INTO schema_version VALUES (?, ?)", (version, _now()))
    return version


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (``BEGIN IMMEDIATE``) so two writers queue, not deadlock;
    taking it is retried (`with_retries`) when the busy timeout alone did not get the lock."""
    with_retries(lambda: db.execute("BEGIN IMMEDIATE"))
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------- the store


@dataclass(frozen=True)
class ListSummary:
    """One list: its name, how many papers it holds, when it was made."""

    name: str
    size: int
    created_at: str


ENTRY_COLUMNS: tuple[str, ...] = (
    "fingerprint",
    "corpus_id",
    "title",
    "authors",
    "venue",
    "year",
    "url",
    "abstract",
    "note",
    "tags",
    "read",
    "list",
    "added_at",
)


def clean_name(name: Any, what: str = "list name") -> str:
    """A list name or tag as kept: single spaces, at most `MAX_NAME_CHARS`; LibraryError if blank."""
    text = " ".join(str(name or "").split())
    limit = MAX_TAG_CHARS if what == "tag" else MAX_NAME_CHARS
    if not text:
        raise LibraryError(f"a {what} cannot be empty")
    if len(text) > limit:
        raise LibraryError(f"a {what} has at most {limit} characters")
    return text


class Library:
    """A library file (or an in-memory one): lists, papers, notes, tags, topic names.

    Thread-safe: one connection guarded by a lock; several `Library` objects (threads, processes,
    the CLI) may open the same file, and their writes queue on SQLite's lock.
    """

    def __init__(self, db: sqlite3.Connection, path: Path | None) -> None:
        self._db = db
        self.path = path
        self._lock = threading.RLock()

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | Path, *, timeout: float = BUSY_TIMEOUT_S) -> Library:
        """Open (creating or migrating) the library at ``path`` (``:memory:`` for a throw-away one).

        Raises LibraryError, naming the file, when it is not a library or cannot be opened.
        """
        in_memory = str(path) == ":memory:"
        where = "the in-memory library" if in_memory else str(path)

        def attempt() -> sqlite3.Connection:
            db = connect(path, timeout)
            try:
                db.execute("PRAGMA foreign_keys = ON")
                if not in_memory:
                    mode = db.execute("PRAGMA journal_mode = WAL").fetchone()
                    if mode is None:
                        raise LibraryError(f"{where}: the journal mode could not be set")
                migrate(db)
            except BaseException:
                db.close()
                raise
            return db

        try:
            if not in_memory:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                refused = _refusal(Path(path), timeout)  # read-only: a file refused is never changed
                if refused:
                    raise LibraryError(refused)
            db = with_retries(attempt)  # several processes opening a new file at once: one creates it
        except LibraryError as error:
            raise LibraryError(f"{where}: {error}") from error
        except (sqlite3.Error, OSError) as error:
            raise LibraryError(f"cannot open the library {where}: {_why(error)}") from error
        return cls(db, None if in_memory else Path(path))

    def close(self) -> None:
        """Close the connection (the file stays as it is)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def where(self) -> str:
        return "the in-memory library" if self.path is None else str(self.path)

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors(), _transaction(self._db) as db:
            yield db
            db.execute("UPDATE revision SET n = n + 1")

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            raise LibraryError(f"the library {self.where}: {_why(error)}") from error

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._errors():
            return self._db.execute(sql, params).fetchall()

    def revision(self) -> int:
        """A number that grows with every write (by anyone): a cache key for what was read."""
        return int(self._read("SELECT n FROM revision")[0][0])

    # ------------------------------------------------------------ lists

    def lists(self) -> list[ListSummary]:
        """Every list with its size, by name."""
        rows = self._read(
            "SELECT l.name, COUNT(e.paper_id), l.created_at FROM lists l "
            "LEFT JOIN entries e ON e.list_id = l.id GROUP BY l.id ORDER BY l.name COLLATE NOCASE"
        )
        return [ListSummary(name, int(size), created) for name, size, created in rows]

    def list_names(self) -> list[str]:
        """The names of every list."""
        return [summary.name for summary in self.lists()]

    def create_list(self, name: str) -> str:
        """Make an empty list (nothing happens when it exists); the name as kept."""
        name = clean_name(name)
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO lists (name, created_at) VALUES (?, ?)", (name, _now()))
        return name

    def rename_list(self, old: str, new: str) -> str:
        """Give a list another name; LibraryError if it does not exist or the name is taken."""
        new = clean_name(new)
        with self._write() as db:
            list_id = self._list_id(db, old)
            taken = db.execute("SELECT id FROM lists WHERE name = ?", (new,)).fetchone()
            if taken and taken[0] != list_id:
                raise LibraryError(f'there is already a list "{new}" (merge the two instead)')
            db.execute("UPDATE lists SET name = ? WHERE id = ?", (new, list_id))
        return new

    def merge_lists(self, sources: Iterable[str], into: str) -> int:
        """Move every paper of ``sources`` into ``into`` (made if needed) and delete them; papers added."""
        into = clean_name(into)
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO lists (name, created_at) VALUES (?, ?)", (into, _now()))
            target = self._list_id(db, into)
            before = self._size(db, target)
            for source in sources:
                source_id = self._list_id(db, source)
                if source_id == target:
                    continue
                db.execute(
                    "INSERT OR IGNORE INTO entries (list_id, paper_id, added_at) "
                    "SELECT ?, paper_id, added_at FROM entries WHERE list_id = ?",
                    (target, source_id),
                )
                db.execute("DELETE FROM lists WHERE id = ?", (source_id,))
            return self._size(db, target) - before

    def delete_list(self, name: str) -> None:
        """Delete a list; its papers stay in the library's other lists (and keep their notes)."""
        with self._write() as db:
            db.execute("DELETE FROM lists WHERE id = ?", (self._list_id(db, name),))
            self._drop_orphans(db)

    @staticmethod
    def _list_id(db: sqlite3.Connection, name: str) -> int:
        row = db.execute("SELECT id FROM lists WHERE name = ?", (" ".join(str(name).split()),)).fetchone()
        if row is None:
            raise LibraryError(f'no list "{name}" in the library')
        return int(row[0])

    @staticmethod
    def _size(db: sqlite3.Connection, list_id: int) -> int:
        return int(db.execute("SELECT COUNT(*) FROM entries WHERE list_id = ?", (list_id,)).fetchone()[0])

    @staticmethod
    def _drop_orphans(db: sqlite3.Connection) -> None:
        # A paper in no list has no reason to be kept: no note or tag is reachable without a list.
        db.execute("DELETE FROM papers WHERE id NOT IN (SELECT paper_id FROM entries)")

    # ------------------------------------------------------------ papers in lists

    def add(self, list_name: str, papers: pd.DataFrame) -> int:
        """Add these corpus rows to a list (made if needed), in one transaction; how many were new to it.

        A paper already in the library (same fingerprint, or same corpus id and title) is the same
        library paper: its note and tags stay, and the corpus id it has here is remembered.
        """
        name = clean_name(list_name)
        records = [_paper_record(row) for row in _rows(papers)]
        now = _now()
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO lists (name, created_at) VALUES (?, ?)", (name, now))
            list_id = self._list_id(db, name)
            before = self._size(db, list_id)
            db.executemany(
                "INSERT INTO papers (fingerprint, corpus_id, title_key, title, authors, venue, year, url, "
                "abstract, added_at) VALUES (:fingerprint, :corpus_id, :title_key, :title, :authors, :venue, "
                ":year, :url, :abstract, :added_at) ON CONFLICT (fingerprint) DO UPDATE SET "
                "corpus_id = excluded.corpus_id",
                [{**r, "added_at": now} for r in records],
            )
            db.executemany(
                "INSERT OR IGNORE INTO paper_ids (paper_id, corpus_id) "
                "SELECT id, :corpus_id FROM papers WHERE fingerprint = :fingerprint AND :corpus_id != ''",
                records,
            )
            db.executemany(
                "INSERT OR IGNORE INTO entries (list_id, paper_id, added_at) "
                "SELECT ?, id, ? FROM papers WHERE fingerprint = ?",
                [(list_id, now, r["fingerprint"]) for r in records],
            )
            return self._size(db, list_id) - before

    def remove(self, list_name: str, fingerprints: Iterable[str]) -> int:
        """Take papers out of one list; how many were removed."""
        prints = list(fingerprints)
        with self._write() as db:
            list_id = self._list_id(db, list_name)
            before = self._size(db, list_id)
            db.executemany(
                "DELETE FROM entries WHERE list_id = ? "
                "AND paper_id = (SELECT id FROM papers WHERE fingerprint = ?)",
                [(list_id, p) for p in prints],
            )
            removed = before - self._size(db, list_id)
            self._drop_orphans(db)
            return removed

    def move(self, fingerprints: Iterable[str], source: str, target: str) -> int:
        """Move papers from one list to another (made if needed); how many moved."""
        prints = list(fingerprints)
        target = clean_name(target)
        with self._write() as db:
            source_id = self._list_id(db, source)
            db.execute("INSERT OR IGNORE INTO lists (name, created_at) VALUES (?, ?)", (target, _now()))
            target_id = self._list_id(db, target)
            if source_id == target_id:
                return 0
            moved = 0
            for paper in prints:
                row = db.execute(
                    "SELECT e.paper_id, e.added_at FROM entries e JOIN papers p ON p.id = e.paper_id "
                    "WHERE e.list_id = ? AND p.fingerprint = ?",
                    (source_id, paper),
                ).fetchone()
                if row is None:
                    continue
                db.execute(
                    "INSERT OR IGNORE INTO entries (list_id, paper_id, added_at) VALUES (?, ?, ?)",
                    (target_id, row[0], row[1]),
                )
                db.execute("DELETE FROM entries WHERE list_id = ? AND paper_id = ?", (source_id, row[0]))
                moved += 1
            return moved

    def set_note(self, paper: str, note: str) -> None:
        """The paper's note (one per paper, shown in every list holding it)."""
        text = str(note or "")[:MAX_NOTE_CHARS]
        with self._write() as db:
            self._paper_id(db, paper)
            db.execute("UPDATE papers SET note = ? WHERE fingerprint = ?", (text, paper))

    def set_read(self, paper: str, read: bool = True) -> None:
        """Mark the paper read (or not)."""
        with self._write() as db:
            self._paper_id(db, paper)
            db.execute("UPDATE papers SET is_read = ? WHERE fingerprint = ?", (int(bool(read)), paper))

    def set_tags(self, paper: str, tags: Iterable[str]) -> list[str]:
        """Replace the paper's tags; the tags as kept (cleaned, de-duplicated, sorted)."""
        kept = sorted({clean_name(t, "tag") for t in tags if str(t).strip()})
        with self._write() as db:
            paper_id = self._paper_id(db, paper)
            db.execute("DELETE FROM tags WHERE paper_id = ?", (paper_id,))
            db.executemany("INSERT INTO tags (paper_id, tag) VALUES (?, ?)", [(paper_id, t) for t in kept])
        return kept

    def tag(self, fingerprints: Iterable[str], tag: str) -> None:
        """Add one tag to several papers."""
        tag = clean_name(tag, "tag")
        with self._write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO tags (paper_id, tag) SELECT id, ? FROM papers WHERE fingerprint = ?",
                [(tag, p) for p in fingerprints],
            )

    @staticmethod
    def _paper_id(db: sqlite3.Connection, paper: str) -> int:
        row = db.execute("SELECT id FROM papers WHERE fingerprint = ?", (paper,)).fetchone()
        if row is None:
            raise LibraryError("that paper is not in the library")
        return int(row[0])

    def annotate(self, notes: Iterable[tuple[str, str, Sequence[str]]]) -> None:
        """(fingerprint, note, tags) for several papers in one transaction: a non-empty note replaces
        the paper's note, the tags are added to its tags (an import brings them in this way)."""
        items = list(notes)
        with self._write() as db:
            db.executemany(
                "UPDATE papers SET note = ? WHERE fingerprint = ?",
                [(str(note)[:MAX_NOTE_CHARS], paper) for paper, note, _ in items if str(note).strip()],
            )
            db.executemany(
                "INSERT OR IGNORE INTO tags (paper_id, tag) SELECT id, ? FROM papers WHERE fingerprint = ?",
                [
                    (clean_name(tag, "tag"), paper)
                    for paper, _, tags in items
                    for tag in tags
                    if str(tag).strip()
                ],
            )

    def tags(self) -> list[str]:
        """Every tag in use, sorted."""
        return [t for (t,) in self._read("SELECT DISTINCT tag FROM tags ORDER BY tag COLLATE NOCASE")]

    def entries(self, list_name: str | None = None, *, tag: str | None = None) -> pd.DataFrame:
        """The papers of one list (every list when None), oldest first, as `ENTRY_COLUMNS`.

        A paper in two lists is two rows when ``list_name`` is None. ``tag`` keeps papers with that tag.
        """
        where, params = [], []
        if list_name is not None:
            where.append("l.name = ?")
            params.append(" ".join(str(list_name).split()))
        if tag is not None:
            where.append("p.id IN (SELECT paper_id FROM tags WHERE tag = ?)")
            params.append(tag)
        sql = (
            "SELECT p.fingerprint, p.corpus_id, p.title, p.authors, p.venue, p.year, p.url, p.abstract, "
            "p.note, (SELECT group_concat(tag, char(31)) FROM "
            "(SELECT tag FROM tags t WHERE t.paper_id = p.id ORDER BY tag)), p.is_read, l.name, e.added_at "
            "FROM entries e JOIN papers p ON p.id = e.paper_id JOIN lists l ON l.id = e.list_id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY l.name, e.rowid"
        )
        rows = self._read(sql, params)
        if list_name is not None and not rows and " ".join(str(list_name).split()) not in self.list_names():
            raise LibraryError(f'no list "{list_name}" in the library')
        frame = pd.DataFrame(rows, columns=list(ENTRY_COLUMNS))
        frame["authors"] = [json.loads(a) if isinstance(a, str) and a else [] for a in frame["authors"]]
        frame["tags"] = [t.split("\x1f") if isinstance(t, str) and t else [] for t in frame["tags"]]
        frame["read"] = frame["read"].astype(bool)
        frame["year"] = pd.array(frame["year"].tolist(), dtype="Int64")
        return frame

    def corpus_ids(self) -> dict[str, list[str]]:
        """Every corpus id each library paper (by fingerprint) has been seen under."""
        rows = self._read(
            "SELECT p.fingerprint, i.corpus_id FROM paper_ids i JOIN papers p ON p.id = i.paper_id "
            "ORDER BY i.rowid"
        )
        ids: dict[str, list[str]] = {}
        for paper, corpus_id in rows:
            ids.setdefault(paper, []).append(corpus_id)
        return ids

    # ------------------------------------------------------------ topic names

    def rename_topic(self, corpus: str, terms: Sequence[str], name: str) -> None:
        """Name the topic with these top terms in ``corpus`` (replacing a name it had)."""
        name = clean_name(name, "topic name")
        kept = [str(t) for t in terms][:TOPIC_TERMS_KEPT]
        with self._write() as db:
            for row_id, old_terms in db.execute(
                "SELECT id, terms FROM topic_names WHERE corpus = ?", (corpus,)
            ).fetchall():
                if _overlap(json.loads(old_terms), kept) >= TOPIC_MATCH_THRESHOLD:
                    db.execute("DELETE FROM topic_names WHERE id = ?", (row_id,))
            db.execute(
                "INSERT INTO topic_names (corpus, name, terms, updated_at) VALUES (?, ?, ?, ?)",
                (corpus, name, json.dumps(kept), _now()),
            )

    def merge_topics(self, corpus: str, topics: Sequence[Sequence[str]], name: str) -> None:
        """Give several topics (each its top terms) one name: shown, and filtered, as one."""
        for terms in topics:
            self.rename_topic(corpus, terms, name)

    def forget_topic_name(self, corpus: str, name: str) -> int:
        """Remove a kept topic name; how many topics lost it."""
        with self._write() as db:
            return db.execute(
                "DELETE FROM topic_names WHERE corpus = ? AND name = ?", (corpus, name)
            ).rowcount

    def topic_names(self, corpus: str) -> list[tuple[str, list[str]]]:
        """The kept (name, top terms) of a corpus, oldest first."""
        rows = self._read("SELECT name, terms FROM topic_names WHERE corpus = ? ORDER BY id", (corpus,))
        return [(name, json.loads(terms)) for name, terms in rows]

    def apply_topic_names(
        self, corpus: str, topics: Mapping[int, Sequence[str]]
    ) -> tuple[dict[int, str], list[str]]:
        """Names for this fit's topics (topic number -> name) and the kept names no topic matched."""
        return match_topic_names(self.topic_names(corpus), topics)


def match_topic_names(
    kept: Sequence[tuple[str, Sequence[str]]], topics: Mapping[int, Sequence[str]]
) -> tuple[dict[int, str], list[str]]:
    """Match kept names to topics by their top terms, best overlap first, each used once.

    >>> match_topic_names([("Graphs", ["graph", "node", "edge"])], {0: ["graph", "edge", "gnn"], 1: ["text"]})
    ({0: 'Graphs'}, [])
    """
    pairs = []
    for n, (_, terms) in enumerate(kept):
        for topic, topic_terms in topics.items():
            score = _overlap(terms, list(topic_terms)[:TOPIC_TERMS_KEPT])
            if score >= TOPIC_MATCH_THRESHOLD:
                pairs.append((-score, n, topic))
    names: dict[int, str] = {}
    used: set[int] = set()
    for _, n, topic in sorted(pairs):
        if n in used or topic in names:
            continue
        names[topic] = kept[n][0]
        used.add(n)
    matched_names = {kept[n][0] for n in used}
    missing = list(dict.fromkeys(name for n, (name, _) in enumerate(kept) if n not in used))
    return names, [name for name in missing if name not in matched_names]


def _overlap(a: Sequence[str], b: Sequence[str]) -> float:
    left, right = {str(t).lower() for t in a}, {str(t).lower() for t in b}
    return len(left & right) / len(left | right) if left or right else 0.0


def _why(error: BaseException) -> str:
    text = str(error)
    if "not a database" in text or "malformed" in text:
        return f"{text} (the file is not a readable library; it was left untouched)"
    if "locked" in text or "busy" in text:
        return f"{text} (another program holds it; try again when it is done)"
    return text or type(error).__name__


# --------------------------------------------------------------------- corpus rows in, library rows out


def _rows(papers: pd.DataFrame) -> Iterator[dict[str, Any]]:
    columns = [
        c for c in ("id", "title", "abstract", "authors", "venue", "year", "url", "paper_url") if c in papers
    ]
    yield from papers[columns].to_dict("records")


def _paper_record(row: Mapping[str, Any]) -> dict[str, Any]:
    title = _text(row.get("title"))
    abstract = _text(row.get("abstract"))
    authors = row.get("authors")
    author_list = [str(a) for a in authors] if isinstance(authors, list | tuple | np.ndarray) else []
    year = row.get("year")
    url = _text(row.get("url")) or _text(row.get("paper_url"))
    return {
        "fingerprint": fingerprint(title, abstract),
        "corpus_id": _text(row.get("id")),
        "title_key": normalise_text(title),
        "title": title,
        "authors": json.dumps(author_list, ensure_ascii=False),
        "venue": _text(row.get("venue")),
        "year": _year_number(year),
        "url": url,
        "abstract": abstract,
    }


def _year_number(value: Any) -> int | None:
    """A year SQLite can keep and a person would write (1000-2999), else None."""
    try:
        if value is None or pd.isna(value):
            return None
        year = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return year if 1000 <= year <= 2999 else None


def _text(value: Any) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return str(value)


# --------------------------------------------------------------------- finding library papers in a corpus


class CorpusLookup:
    """A corpus seen from the library: rows by id, and (built on first need) by normalised title.

    ``positions`` is an id -> row mapping the caller may already have (the analysis keeps one).
    """

    def __init__(self, papers: pd.DataFrame, positions: Mapping[str, int] | None = None) -> None:
        self.papers = papers
        self._positions = positions
        self._titles: dict[str, list[int]] | None = None

    @property
    def positions(self) -> Mapping[str, int]:
        if self._positions is None:
            ids = self.papers["id"].astype("str").tolist()
            self._positions = {paper_id: n for n, paper_id in enumerate(ids)}
        return self._positions

    @property
    def titles(self) -> dict[str, list[int]]:
        if self._titles is None:
            titles: dict[str, list[int]] = {}
            for n, title in enumerate(self.papers["title"].tolist()):
                titles.setdefault(normalise_text(title), []).append(n)
            self._titles = titles
        return self._titles

    def row_fingerprint(self, row: int) -> str:
        return fingerprint(self.papers["title"].iat[row], self.papers["abstract"].iat[row])

    def row_title_key(self, row: int) -> str:
        return normalise_text(self.papers["title"].iat[row])

    def find(self, paper: str, corpus_ids: Sequence[str], title_key: str) -> tuple[int, str]:
        """(row, how) for one library paper; how is ``id``, ``content``, ``title`` or ``missing`` (row -1)."""
        positions = self.positions
        for corpus_id in corpus_ids:
            row = positions.get(corpus_id)
            # Same id and same title: the paper (its abstract may have been re-cleaned). Comparing
            # titles is enough, and cheap: equal fingerprints imply equal titles.
            if row is not None and self.row_title_key(row) == title_key:
                return int(row), "id"
        if title_key:
            candidates = self.titles.get(title_key, [])
            for row in candidates:
                if self.row_fingerprint(row) == paper:
                    return row, "content"
            if candidates:
                return candidates[0], "title"
        return -1, "missing"


def resolve(
    entries: pd.DataFrame, lookup: CorpusLookup, known_ids: Mapping[str, Sequence[str]]
) -> pd.DataFrame:
    """``entries`` with ``row`` (the corpus row, -1 when not in this corpus) and ``found`` (how) added.

    First by id, for every entry at once (the corpus titles at those rows are read in one go: a
    row-by-row look-up costs a pandas call each), then the rest one by one through `CorpusLookup.find`.
    """
    titles = dict(zip(entries["fingerprint"], entries["title"], strict=True))
    corpus_ids = dict(zip(entries["fingerprint"], entries["corpus_id"], strict=True))
    found: dict[str, tuple[int, str]] = {}
    pairs: list[tuple[str, int]] = []
    positions = lookup.positions
    for paper in titles:
        for corpus_id in dict.fromkeys([corpus_ids[paper], *known_ids.get(paper, [])]):
            row = positions.get(corpus_id) if corpus_id else None
            if row is not None:
                pairs.append((paper, int(row)))
    if pairs:
        at_rows = lookup.papers["title"].iloc[[row for _, row in pairs]].tolist()
        for (paper, row), title in zip(pairs, at_rows, strict=True):
            if paper not in found and normalise_text(title) == normalise_text(titles[paper]):
                found[paper] = (row, "id")
    for paper, title in titles.items():
        if paper not in found:
            found[paper] = lookup.find(paper, [], normalise_text(title))
    rows = [found[paper][0] for paper in entries["fingerprint"]]
    how = [found[paper][1] for paper in entries["fingerprint"]]
    return entries.assign(row=np.asarray(rows, dtype=np.int64), found=how)


def list_members(
    names: Sequence[str], papers: pd.DataFrame, environ: Mapping[str, str] | None = None
) -> tuple[np.ndarray, list[str]]:
    """For code outside the app (e.g. ``paper-dashboard report``): the rows of ``papers`` in these lists
    of the library `location_from` finds (no ``--library`` argument), and notices (missing lists,
    papers not in this corpus, a library that cannot be opened: then no paper is in a list).
    """
    where = location_from([], os.environ if environ is None else environ)
    if where.mode != "file" or where.path is None or not where.path.exists():
        return np.zeros(len(papers), dtype=bool), [
            f"reading list: no library ({where.label}); no paper is in a list"
        ]
    try:
        with Library.open(where.path) as lib:
            entries = lib.entries()
            known = lib.corpus_ids()
            existing = set(lib.list_names())
    except LibraryError as error:
        return np.zeros(len(papers), dtype=bool), [f"reading list: {error}"]
    notices = [f'reading list: no "{name}" in the library' for name in names if name not in existing]
    chosen = resolve(entries[entries["list"].isin(list(names))], CorpusLookup(papers), known)
    missing = int((chosen["row"] < 0).sum())
    if missing:
        notices.append(f"reading list: {missing:,} of its papers are not in this corpus")
    return member_mask(len(papers), chosen["row"]), notices


def member_mask(n_papers: int, rows: Iterable[int]) -> np.ndarray:
    """Boolean array over the corpus: True at these rows (the ``list`` filter)."""
    keep = np.zeros(n_papers, dtype=bool)
    found = np.fromiter((r for r in rows if r >= 0), dtype=np.int64)
    keep[found[found < n_papers]] = True
    return keep


# --------------------------------------------------------------------- exports

EXPORT_FORMATS: dict[str, str] = {"bibtex": "bib", "csv": "csv", "ris": "ris", "md": "md"}
EXPORT_MIME_TYPES: dict[str, str] = {
    "bibtex": "application/x-bibtex",
    "csv": "text/csv",
    "ris": "application/x-research-info-systems",
    "md": "text/markdown",
}


def export_list(entries: pd.DataFrame, fmt: str) -> str:
    """A list's papers as BibTeX, CSV, RIS or Markdown text (``fmt`` a key of `EXPORT_FORMATS`)."""
    makers: dict[str, Callable[[pd.DataFrame], str]] = {
        "bibtex": to_bibtex,
        "csv": to_csv,
        "ris": to_ris,
        "md": to_markdown,
    }
    if fmt not in makers:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(makers)}")
    return makers[fmt](entries)


# What a BibTeX value must escape, and how; `_bib_unescape` undoes exactly this.
_BIB_ESCAPES: dict[str, str] = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "$": r"\$",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_BIB_SPECIAL = re.compile("[" + re.escape("".join(_BIB_ESCAPES)) + "]")
_BIB_ESCAPED = re.compile(
    "|".join(re.escape(v) for v in sorted(_BIB_ESCAPES.values(), key=len, reverse=True))
)
_BIB_UNESCAPES = {v: k for k, v in _BIB_ESCAPES.items()}
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_KEY_STOP = frozenset({"a", "an", "the", "on", "of", "for", "in", "to", "and", "with", "towards", "via"})


def bibtex_keys(entries: pd.DataFrame) -> list[str]:
    """Entry keys: ``surname + year + first title word`` (``anon`` without authors), made unique by
    ``a``, ``b``... in list order after sorting by fingerprint, so the same paper keeps its key
    whichever order the list is in and whatever else the list holds of other names.
    """
    bases = []
    for authors, year, title in zip(entries["authors"], entries["year"], entries["title"], strict=True):
        surname = "anon"
        if isinstance(authors, list | tuple) and authors:
            first = _ascii(str(authors[0]))
            # "Last, First" or "First Last"
            name = first.split(",")[0] if "," in first else (first.split() or [""])[-1]
            surname = "".join(_ASCII_WORD.findall(name)) or "anon"
        words = [w for w in _ASCII_WORD.findall(_ascii(str(title))) if w not in _KEY_STOP]
        year_text = "" if year is None or pd.isna(year) else str(int(year))
        bases.append(f"{surname[:30]}{year_text}{words[0][:20] if words else 'paper'}")
    order = sorted(range(len(bases)), key=lambda n: (bases[n], str(entries["fingerprint"].iat[n])))
    keys = [""] * len(bases)
    seen: dict[str, int] = {}
    counts = pd.Series(bases).value_counts().to_dict() if bases else {}
    for n in order:
        base = bases[n]
        if counts[base] == 1:
            keys[n] = base
            continue
        index = seen.get(base, 0)
        seen[base] = index + 1
        keys[n] = base + _suffix(index)
    return keys


def _suffix(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _bib_value(text: Any) -> str:
    """Text as a BibTeX value: one line, every special character escaped (`bib_unescape` reverses it)."""
    return _BIB_SPECIAL.sub(lambda m: _BIB_ESCAPES[m.group(0)], " ".join(_text(text).split()))


def bib_unescape(value: str) -> str:
    """A BibTeX value as text: this module's escapes undone exactly, other LaTeX (``{\\"u}``) decoded.

    >>> bib_unescape(r"50\\% of {BERT} in M{\\"u}nchen")
    '50% of BERT in München'
    """
    rest = _BIB_ESCAPED.sub("", value)
    if "\\" in rest:  # LaTeX this module does not write: let pylatexenc read it (maths kept as is)
        from pylatexenc.latex2text import LatexNodes2Text

        return " ".join(LatexNodes2Text(math_mode="verbatim").latex_to_text(value).split())
    parts = re.split("(" + _BIB_ESCAPED.pattern + ")", value)
    text = "".join(_BIB_UNESCAPES.get(p, p.replace("{", "").replace("}", "")) for p in parts)
    return " ".join(text.split())


def to_bibtex(entries: pd.DataFrame) -> str:
    """``@inproceedings`` entries (``@misc`` without a venue) with author, title, booktitle, year, url,
    abstract, note (the paper's note) and keywords (its tags), in list order."""
    chunks = []
    for key, row in zip(bibtex_keys(entries), entries.to_dict("records"), strict=True):
        fields: list[tuple[str, str]] = []
        authors = row.get("authors") or []
        if authors:
            fields.append(("author", " and ".join(_bib_value(a) for a in authors)))
        fields.append(("title", "{" + _bib_value(row.get("title")) + "}"))
        venue = _bib_value(row.get("venue"))
        if venue:
            fields.append(("booktitle", venue))
        year = row.get("year")
        if year is not None and not pd.isna(year):
            fields.append(("year", str(int(year))))
        if _web_url(row.get("url")):
            fields.append(("url", _web_url(row.get("url")).replace("{", "%7B").replace("}", "%7D")))
        if _text(row.get("abstract")):
            fields.append(("abstract", _bib_value(row.get("abstract"))))
        if _text(row.get("note")).strip():
            fields.append(("note", _bib_value(row.get("note"))))
        if len(row.get("tags") or []):
            fields.append(("keywords", ", ".join(_bib_value(t) for t in row["tags"])))
        kind = "inproceedings" if venue else "misc"
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        chunks.append(f"@{kind}{{{key},\n{body}\n}}\n")
    return "\n".join(chunks)


def _note_text(row: Mapping[str, Any]) -> str:
    parts = []
    if _text(row.get("note")).strip():
        parts.append(_text(row.get("note")).strip())
    tags = row.get("tags") or []
    if len(tags):
        parts.append("tags: " + ", ".join(tags))
    if row.get("read"):
        parts.append("read")
    return "; ".join(parts)


def to_csv(entries: pd.DataFrame) -> str:
    """One row per paper: title, authors (``; ``), venue, year, url, abstract, note, tags, read, list."""
    from dashboard import export  # the shared exporter quotes formula-like cells for spreadsheets

    table = entries.assign(
        authors=entries["authors"].map(lambda a: "; ".join(a)),
        tags=entries["tags"].map(lambda t: "; ".join(t)),
    )[
        [
            "title",
            "authors",
            "venue",
            "year",
            "url",
            "abstract",
            "note",
            "tags",
            "read",
            "list",
            "fingerprint",
            "corpus_id",
        ]
    ]
    return export.to_bytes(table, "csv").decode("utf-8-sig")


def to_ris(entries: pd.DataFrame) -> str:
    """RIS records (``TY CONF``, ``GEN`` without a venue) with AU, TI, T2, PY, UR, AB, N1."""
    lines = []
    for row in entries.to_dict("records"):
        venue = _text(row.get("venue"))
        lines.append(f"TY  - {'CONF' if venue else 'GEN'}")
        lines.extend(f"AU  - {_one_line(a)}" for a in row.get("authors") or [])
        lines.append(f"TI  - {_one_line(row.get('title'))}")
        if venue:
            lines.append(f"T2  - {_one_line(venue)}")
        year = row.get("year")
        if year is not None and not pd.isna(year):
            lines.append(f"PY  - {int(year)}")
        if _web_url(row.get("url")):
            lines.append(f"UR  - {_web_url(row.get('url'))}")
        if _text(row.get("abstract")):
            lines.append(f"AB  - {_one_line(row.get('abstract'))}")
        note = _note_text(row)
        if note:
            lines.append(f"N1  - {_one_line(note)}")
        lines.append("ER  - ")
        lines.append("")
    return "\n".join(lines)


def _one_line(text: Any) -> str:
    return " ".join(_text(text).split())


def to_markdown(entries: pd.DataFrame) -> str:
    """A reading list: one bullet per paper, linked title, authors, venue and year, the note below."""
    lines = []
    for name, group in entries.groupby("list", sort=False) if len(entries) else []:
        lines.append(f"## {_md(name)}\n")
        for row in group.to_dict("records"):
            title = _md(row.get("title"))
            url = _web_url(row.get("url"))  # http(s) only, percent-encoded: it cannot end the link early
            check = "[x]" if row.get("read") else "[ ]"
            head = f"- {check} [{title}](<{url}>)" if url else f"- {check} {title}"
            facts = [", ".join(row.get("authors") or [])]
            facts.append(" ".join(p for p in (_text(row.get("venue")), year_of(row.get("year"))) if p))
            shown = " · ".join(_md(f) for f in facts if f)
            lines.append(head + (f" — {shown}" if shown else ""))
            if len(row.get("tags") or []):
                lines.append("  tags: " + ", ".join(_md(t) for t in row["tags"]))
            if _text(row.get("note")).strip():
                lines.append("  > " + _md(row.get("note")))
        lines.append("")
    return "\n".join(lines)


def year_of(value: Any) -> str:
    return "" if value is None or pd.isna(value) else str(int(value))


def _md(text: Any) -> str:
    """One line of Markdown that shows ``text`` as it is (`dashboard.export.markdown_text`)."""
    from dashboard import export

    return export.markdown_text(_text(text))


def _web_url(value: Any) -> str:
    """An http(s) link, made safe to write (`dashboard.export.web_url`); "" for any other scheme."""
    from dashboard import export

    return export.web_url(_text(value))


# --------------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportResult:
    """What an import did: papers added to the list, and the entries matched to no paper of the corpus."""

    added: int
    matched: int
    unmatched: tuple[str, ...]
    problems: tuple[str, ...] = ()


# How deep braces may nest for LaTeX to be decoded by pylatexenc (a recursive reader); deeper text
# (3,000 nested ``\\textbf{`` is an attack, not a title) is rendered by the corpus reader's linear pass.
MAX_LATEX_DEPTH = 50
# A report lists at most this many unmatched titles (the count says how many there were).
MAX_UNMATCHED_LISTED = 200


def _brace_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "}":
            depth = max(depth - 1, 0)
    return deepest


def _unescaped(value: str) -> str:
    """`bib_unescape`, bounded: text nested deeper than `MAX_LATEX_DEPTH` goes through the corpus
    reader's linear rendering instead of pylatexenc's recursion."""
    if _brace_depth(value) > MAX_LATEX_DEPTH:
        from dashboard.readers.bibtex import render_text

        return render_text(value)
    return bib_unescape(value)


def read_bibtex(text: str, source: str = "the BibTeX file") -> tuple[list[dict[str, Any]], list[str]]:
    """Entries (title, authors, venue, year, url, abstract, note, key) of a BibTeX text, and problems.

    Read by the corpus's BibTeX reader (`dashboard.readers.bibtex`, ``bibtexparser`` 2) with this
    module's exact unescaping; a broken entry is reported by place and skipped, the rest kept. Fields
    are bounded as a corpus's are (`dashboard.readers.limits`): a year that is not a year is none, a
    long title or venue is cut, an abstract longer than an abstract may be is dropped.
    """
    from dashboard.readers import limits
    from dashboard.readers.bibtex import bib_year, bibtex_records
    from dashboard.readers.load_report import FileLog, FileRefused

    log = FileLog(source)
    try:
        entries = bibtex_records(text, log, render=_unescaped)
    except FileRefused as error:
        return [], [f"{source}: {error}"]
    problems = [str(problem) for problem in log.skipped]
    records = []
    for entry in entries:
        fields = entry.value

        def field(name: str, *, cut: bool = True, fields: dict[str, Any] = fields) -> str:
            value = _text(fields.get(name))
            return value[: limits.MAX_FIELD_CHARS] if cut else value

        authors = fields.get("author", [])
        abstract = _unescaped(field("abstract", cut=False))
        if len(abstract) > limits.MAX_ABSTRACT_CHARS:
            problems.append(
                f"{source} {entry.place}: an abstract of {len(abstract):,} characters, more than "
                f"{limits.MAX_ABSTRACT_CHARS:,}: left out"
            )
            abstract = ""
        keywords = _unescaped(field("keywords"))
        records.append(
            {
                "key": _text(fields.get("id"))[:MAX_NAME_CHARS],
                "title": field("title"),
                "authors": [str(a)[: limits.MAX_FIELD_CHARS] for a in authors][: limits.MAX_LIST_ITEMS],
                "venue": field("booktitle") or field("journal"),
                "year": bib_year(fields.get("year")),
                "url": field("url").strip(),  # a URL is not LaTeX: % and ~ stay as they are
                "abstract": abstract,
                "note": _unescaped(field("note", cut=False))[:MAX_NOTE_CHARS],
                "tags": [t.strip()[:MAX_TAG_CHARS] for t in re.split(r"[,;]", keywords) if t.strip()],
            }
        )
        if not records[-1]["title"]:
            problems.append(
                f"{source} {entry.place}: entry {records[-1]['key']} has no title and was skipped"
            )
    return records, problems


@dataclass
class BibtexRead:
    """What `read_bibtex_upload` sends back from the worker: the entries and problems, or a refusal."""

    records: list[dict[str, Any]]
    problems: list[str]
    refused: str = ""


def read_bibtex_upload(
    name: str,
    data: bytes,
    settings: dict[str, dict[str, Any]] | None = None,
    session: SessionTotals | None = None,
) -> BibtexRead:
    """Read an uploaded BibTeX file within the upload limits (runs in `dashboard.server.worker`, like a corpus
    upload: the worker bounds its time and memory). Never raises for bad input: a file above a limit
    is `BibtexRead.refused`, naming the file and the limit.

    ``session`` (a `dashboard.server.uploads.SessionTotals`): the bytes and papers this session uploaded
    and imported before this file; the file's bytes and entries count against the per-session limits
    on top of them, as a corpus upload's do.
    """
    from dashboard.server import uploads

    if settings:
        uploads.apply_settings(settings)
    before = session if session is not None else uploads.SessionTotals()
    refused = uploads.check_import(name, "bytes", len(data), before)
    if refused:
        return BibtexRead([], [], refused)
    text = bytes(data).decode("utf-8-sig", errors="replace")
    del data
    records, problems = read_bibtex(text, name)
    refused = uploads.check_import(name, "papers", len(records), before)
    if refused:
        return BibtexRead([], [], refused)
    return BibtexRead(records, problems)


def import_bibtex(
    library: Library,
    text: str,
    list_name: str,
    lookup: CorpusLookup | None,
    *,
    source: str = "the BibTeX file",
) -> ImportResult:
    """Add the entries of a BibTeX text to a list: each matched to the corpus by normalised title.

    Without a corpus (``lookup`` None) every entry is kept as it is read. With one, matched entries
    become the corpus's paper (its id, abstract...); the unmatched are reported by title and kept
    too, as papers "not in this corpus", so nothing in the file is lost.
    """
    records, problems = read_bibtex(text, source)
    return import_records(library, records, problems, list_name, lookup)


def import_records(
    library: Library,
    records: Sequence[dict[str, Any]],
    problems: Sequence[str],
    list_name: str,
    lookup: CorpusLookup | None,
) -> ImportResult:
    """Add entries read by `read_bibtex` (or `read_bibtex_upload`) to a list, as `import_bibtex` does."""
    matched_rows: list[int] = []
    unmatched: list[dict[str, Any]] = []
    notes: list[tuple[str, str, list[str]]] = []
    for record in records:
        if not record["title"]:
            continue
        rows = lookup.titles.get(normalise_text(record["title"]), []) if lookup is not None else []
        if rows and lookup is not None:
            matched_rows.append(rows[0])
            paper = lookup.row_fingerprint(rows[0])
        else:
            unmatched.append(record)
            paper = fingerprint(record["title"], record["abstract"])
        notes.append((paper, record["note"], record["tags"]))
    library.create_list(list_name)
    added = 0
    if matched_rows and lookup is not None:
        added += library.add(list_name, lookup.papers.iloc[matched_rows])
    if unmatched:
        added += library.add(list_name, pd.DataFrame(unmatched))
    library.annotate(notes)
    return ImportResult(
        added=added,
        matched=len(matched_rows),
        unmatched=tuple(r["title"] for r in unmatched) if lookup is not None else (),
        problems=tuple(problems),
    )
