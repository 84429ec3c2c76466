"""The analysis of a large raw-file corpus, kept on disk so a server restart does not redo it.

A raw corpus of `MIN_BYTES` or more is turned into a prebuilt index (the format of
:mod:`dashboard.index.build`) in a cache directory, once; every later server start opens that index
(memory-mapped) instead of reading and analysing the files again. At the first start the index is
built in a thread (`Build`) while the server reads the raw files itself and its pages answer filters
on those papers; the build's stage lines (`dashboard.index.progress`) give the pages a progress bar,
and the first page run after it ends opens the index.

A smaller corpus is analysed in memory (a second or two: its first start never waits for a build),
and its entry is built **behind** it (`build_behind`), in a child process at the lowest CPU priority:
the next server start opens the entry (`existing`) and shows its first page as soon as a warm one
(the seeds: no topic fit and no scikit-learn import in a start). ``PAPER_DASHBOARD_CACHE_SMALL=0``
keeps small corpora in memory only.

- **Where:** ``PAPER_DASHBOARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/paper-dashboard/analysis``, else
  ``~/.cache/paper-dashboard/analysis``.
- **Keyed** on the corpus digest (its bytes), the build settings and the index format: a changed file
  changes the key, and the old entry is left for eviction.
- **Never trusted blindly:** an entry is used only when its manifest reads, names this corpus, and
  every file matches its size and SHA-256; otherwise it is moved aside and rebuilt.
- **Written atomically:** the build goes to a temporary directory, renamed into place when complete;
  when two servers build the same entry at once, the first rename wins and the other's copy is dropped.
- **Switched off** with ``PAPER_DASHBOARD_CACHE_DIR=none``; ``PAPER_DASHBOARD_CACHE_MIN_MB`` moves the
  size from which a corpus is cached (default 8 MB). Uploads are never written to disk.
- **Bounded:** ``PAPER_DASHBOARD_CACHE_MAX_MB`` (default 4,096 MB) in all; after a write the least
  recently used entries are removed until the rest fits (the entry just written is kept).

The build runs ``paper-dashboard index`` in a child process, so the server's own threads (other
sessions) keep their speed while it works.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dashboard import corpus
from dashboard.index import format as paper_index
from dashboard.index import progress as stages
from dashboard.system.cachedir import cache_root, enabled

ENV_CACHE_MAX_MB = "PAPER_DASHBOARD_CACHE_MAX_MB"
ENV_CACHE_MIN_MB = "PAPER_DASHBOARD_CACHE_MIN_MB"
ENV_CACHE_SMALL = "PAPER_DASHBOARD_CACHE_SMALL"
BEHIND_NICE = 19  # a build behind a served corpus takes only the CPU nobody else wants
# A first start's build yields to the server that shows the raw papers meanwhile (its page runs, the
# visitor's filters), and has the processors whenever the pages are idle.
FIRST_START_NICE = 10
DEFAULT_MAX_BYTES = 4096 << 20
MIN_BYTES = paper_index.SMALL_CORPUS_BYTES
LAST_USED = ".last-used"
BUILD_TIMEOUT_S = 6 * 3600
LOG = logging.getLogger(__name__)

Builder = Callable[[Sequence[str], Path], None]


class CacheError(Exception):
    """The cache could not give an index (the build failed); the message says why."""


def max_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The cache's size limit in bytes (``PAPER_DASHBOARD_CACHE_MAX_MB``; a bad value keeps the default)."""
    try:
        return max(0, int(float(environ.get(ENV_CACHE_MAX_MB, "")) * (1 << 20)))
    except ValueError:
        return DEFAULT_MAX_BYTES


def min_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """Input size from which a raw corpus is cached (``PAPER_DASHBOARD_CACHE_MIN_MB``, default 8 MB)."""
    try:
        return max(0, int(float(environ.get(ENV_CACHE_MIN_MB, "")) * (1 << 20)))
    except ValueError:
        return MIN_BYTES


def wanted(paths: Sequence[str | Path], environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a raw corpus is worth an index on disk: caching is on and the input is `min_bytes` or more."""
    if not enabled(environ):
        return False
    size = 0
    for item in corpus.input_files(paths):
        if isinstance(item, Path):
            try:
                size += item.stat().st_size
            except OSError:
                continue
    return size >= min_bytes(environ)


def keeps_small(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a corpus under `min_bytes` gets an entry built behind it (``PAPER_DASHBOARD_CACHE_SMALL``)."""
    return enabled(environ) and environ.get(ENV_CACHE_SMALL, "").strip() not in ("0", "false", "no", "off")


def existing(digest: str, *, root: Path | None = None) -> Path | None:
    """The sound entry of the corpus ``digest`` (marked as used now), or None: nothing is built here."""
    entry = (cache_root() if root is None else root) / entry_name(digest)
    if not is_valid(entry, digest):
        return None
    touch(entry)
    return entry


def entry_name(digest: str, settings: Mapping[str, object] | None = None) -> str:
    """The directory name of a corpus's entry: its digest, the settings, the index format, the
    version of the analysis (an entry made by an older analysis is not opened, and is evicted in time)
    and the operator's topic space setting (`topicspace.configured`: a server switched to ``lsa`` does
    not open the embedding's topics)."""
    from dashboard.search.topicspace import configured

    key = json.dumps(
        {
            "digest": digest,
            "settings": dict(settings or {}),
            "format": paper_index.FORMAT_VERSION,
            "analysis": paper_index.ANALYSIS_VERSION,
            "topic_space": configured(),
        },
        sort_keys=True,
    )
    return "index-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def is_valid(entry: Path, digest: str) -> bool:
    """True when ``entry`` is a complete index of the corpus ``digest`` whose files match their checksums."""
    if not paper_index.is_index(entry):
        return False
    try:
        manifest = paper_index.read_manifest(entry)
        if manifest.get("corpus_digest") != digest:
            return False
        paper_index.check_files(entry, manifest, verify=True)
    except paper_index.IndexFormatError:
        return False
    return True


# The child asks Linux to end it when the server that started it ends (PR_SET_PDEATHSIG, kept across
# exec), then runs the CLI: a stopped server leaves no build running. Elsewhere the timeout bounds it.
_CHILD = (
    "import os, signal, sys\n"
    "try:\n"
    "    import ctypes; ctypes.CDLL(None).prctl(1, signal.SIGTERM)\n"
    "except Exception:\n"
    "    pass\n"
    "if str(os.getppid()) != sys.argv.pop(1):\n"  # the server ended before the line above ran
    "    sys.exit(3)\n"
    "os.nice(int(sys.argv.pop(1)))\n"
    "from dashboard.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def build_with_cli(paths: Sequence[str], out: Path, *, nice: int = 0, log: Path | None = None) -> None:
    """Build the index of ``paths`` into ``out`` with ``paper-dashboard index`` in a child process.

    The child ends with the server (a stopped server leaves no build running) and after
    `BUILD_TIMEOUT_S` at the latest; what it wrote is then removed by `cached_index`. ``nice`` lowers
    its CPU priority (`os.nice`). Its output (the stage lines `dashboard.index.progress` reads, then
    its report) goes to ``log`` as it comes, else to a temporary file.
    """
    command = [sys.executable, "-c", _CHILD, str(os.getpid()), str(nice), "index", *map(str, paths)]
    command += ["--out", str(out)]
    # Its messages go to a file, not a pipe: the build's life must not hang on anyone reading them.
    with (
        log.open("w+", encoding="utf-8")
        if log is not None
        else tempfile.TemporaryFile("w+", encoding="utf-8")
    ) as log_file:
        try:
            code = subprocess.run(
                command, stdout=log_file, stderr=log_file, timeout=BUILD_TIMEOUT_S
            ).returncode
        except subprocess.TimeoutExpired as error:
            raise CacheError(f"building the analysis took over {BUILD_TIMEOUT_S} s; stopped") from error
        if code not in (0, 1) or not paper_index.is_index(out):  # 1: built, some records skipped
            log_file.seek(0)
            last = " / ".join(log_file.read().strip().splitlines()[-3:]) or f"exit {code}"
            raise CacheError(f"the analysis could not be built: {last}")


def cached_index(
    paths: Sequence[str],
    digest: str,
    *,
    root: Path | None = None,
    limit: int | None = None,
    build: Builder = build_with_cli,
) -> Path:
    """The index directory of the corpus at ``paths`` (content digest ``digest``), built once if needed.

    Raises CacheError when the build fails (the caller falls back to analysing in memory).
    """
    root = cache_root() if root is None else root
    root.mkdir(parents=True, exist_ok=True)
    found = existing(digest, root=root)
    if found is not None:
        return found
    entry = root / entry_name(digest)
    if entry.exists():  # damaged, half-removed or of another corpus: move it aside, never reuse it
        _discard(entry)
    work = root / f".building-{entry.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        build(paths, work)
        if not is_valid(work, digest):
            raise CacheError(f"the analysis built into {work} does not match its own manifest")
        touch(work)
        try:
            work.rename(entry)
        except OSError:
            # Another process renamed its copy into place first: keep that one if it is sound.
            if not is_valid(entry, digest):
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    evict(root, max_bytes() if limit is None else limit, keep=entry)
    return entry


def build_behind(paths: Sequence[str], digest: str, *, build: Builder | None = None) -> threading.Thread:
    """Start building the entry of a served corpus in a daemon thread (`cached_index`), the child at
    `BEHIND_NICE`, for the next server start; a failure is logged and changes nothing."""

    def run() -> None:
        try:
            cached_index(paths, digest, build=build or functools.partial(build_with_cli, nice=BEHIND_NICE))
        except (CacheError, OSError) as error:
            LOG.warning("the analysis could not be kept on disk for the next start: %s", error)

    thread = threading.Thread(target=run, name="paper-dashboard-cache-behind", daemon=True)
    thread.start()
    return thread


class Build:
    """The entry of a large raw corpus, built in a thread of this process while the server shows the
    corpus's papers read from its raw files (`start`): how far the build is and what came of it.

    The default build runs ``paper-dashboard index`` (`build_with_cli`) with its output in a file of
    the cache directory, whose stage lines say how far it is (`progress`, `dashboard.index.progress`);
    the file goes when the build ends. The outcome is `entry`, the built index, or `problem`, why
    there is none (the caller then analyses the corpus in memory). One per corpus and server: the
    caller keeps it (`dashboard.ui.data`).
    """

    def __init__(
        self, paths: Sequence[str], digest: str, *, root: Path | None = None, build: Builder | None = None
    ) -> None:
        self.paths = tuple(str(p) for p in paths)
        self.digest = digest
        self.root = cache_root() if root is None else root
        self.build = build
        self.log = self.root / f".progress-{entry_name(digest)}-{os.getpid()}-{uuid.uuid4().hex[:8]}.log"
        self.entry: Path | None = None
        self.problem = ""
        self.started = time.monotonic()
        self.seconds: float | None = None  # how long the build took, once it ended
        self._ended = threading.Event()
        self._last = stages.BuildProgress()

    @classmethod
    def start(
        cls, paths: Sequence[str], digest: str, *, root: Path | None = None, build: Builder | None = None
    ) -> Build:
        """The corpus's sound entry at once when there is one (nothing is built: `done` at once), else
        a build started in a daemon thread (`cached_index`)."""
        made = cls(paths, digest, root=root, build=build)
        try:
            found = existing(digest, root=made.root)
        except OSError:
            found = None  # the build says what is wrong with the cache, if anything
        if found is not None:
            made.entry = found
            made._end()
            return made
        threading.Thread(target=made._run, name="paper-dashboard-cache-build", daemon=True).start()
        return made

    def _run(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            build = self.build or functools.partial(build_with_cli, log=self.log, nice=FIRST_START_NICE)
            self.entry = cached_index(self.paths, self.digest, root=self.root, build=build)
        except (CacheError, OSError) as error:
            LOG.warning("no disk cache for this corpus, analysing it in memory: %s", error)
            self.problem = str(error)
        except Exception as error:  # a bug here must not leave the page waiting for a build forever
            LOG.exception("the disk cache's build failed")
            self.problem = f"{type(error).__name__}: {error}"
        finally:
            self._last = stages.read(self.log)
            with contextlib.suppress(OSError):
                self.log.unlink()
            self._end()

    def _end(self) -> None:
        self.seconds = time.monotonic() - self.started
        self._ended.set()

    @property
    def done(self) -> bool:
        """Whether the build has ended (built, found, or failed: see `entry` and `problem`)."""
        return self._ended.is_set()

    def progress(self) -> stages.BuildProgress:
        """How far the build is, from its stage lines so far (its last state once it has ended)."""
        return self._last if self.done else stages.read(self.log)

    def elapsed(self) -> float:
        """Seconds since the build started (its whole time once it has ended)."""
        return self.seconds if self.seconds is not None else time.monotonic() - self.started

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the build has ended, ``timeout`` seconds at most; whether it has."""
        return self._ended.wait(timeout)


def touch(entry: Path) -> None:
    """Mark ``entry`` as used now (least-recently-used eviction reads this)."""
    with contextlib.suppress(OSError):  # a read-only cache still serves; it only cannot order its entries
        (entry / LAST_USED).write_text(f"{time.time():.3f}\n", encoding="utf-8")


def last_used(entry: Path) -> float:
    """When ``entry`` was last used (its mark, else the directory's time)."""
    try:
        return float((entry / LAST_USED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        try:
            return entry.stat().st_mtime
        except OSError:
            return 0.0


def entry_bytes(entry: Path) -> int:
    """Bytes of every file under ``entry``."""
    total = 0
    for file in entry.rglob("*"):
        try:
            total += file.stat().st_size if file.is_file() else 0
        except OSError:
            continue
    return total


def evict(root: Path, limit: int, *, keep: Path | None = None) -> list[Path]:
    """Remove the least recently used entries until the cache fits ``limit`` bytes; returns those removed."""
    entries = [p for p in root.glob("index-*") if p.is_dir()]
    sizes = {entry: entry_bytes(entry) for entry in entries}
    total = sum(sizes.values())
    removed: list[Path] = []
    for entry in sorted(entries, key=last_used):
        if total <= limit:
            break
        if keep is not None and entry == keep:
            continue
        _discard(entry)
        total -= sizes[entry]
        removed.append(entry)
    return removed


def _discard(entry: Path) -> None:
    """Move ``entry`` aside (one atomic rename, so no reader sees half of it), then delete it."""
    trash = entry.with_name(f".trash-{entry.name}-{uuid.uuid4().hex[:8]}")
    try:
        entry.rename(trash)
    except OSError:
        return  # gone already (another process discarded it)
    shutil.rmtree(trash, ignore_errors=True)
