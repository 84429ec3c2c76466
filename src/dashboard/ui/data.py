"""Where the corpus comes from, and the cached heavy steps (load, analyse, count terms).

Everything heavy is cached on the content digest of the corpus, so a rerun (any widget change)
never repeats it. Small results go in `st.cache_data`. The loaded table, the fitted analysis and
the search text go in `st.cache_resource`: `st.cache_data` would unpickle a fresh copy on every
rerun (220 ms and 74 MB for the 27k corpus), so these are shared read-only objects instead, never
mutated by a page (pages derive new frames with ``.assign``/boolean indexing). Raw bytes and tables
go in as ``_``-prefixed arguments so Streamlit does not hash them; the digest in front is the key.

The corpus path comes only from the command line (``streamlit run app.py -- --corpus PATH...``) or
``PAPER_DASHBOARD_CORPUS``, never from the URL.

Uploaded corpora are different: they are read in a worker process (`dashboard.server.worker`, within the
limits of `dashboard.server.uploads`), and they and everything computed from them live in one
`uploads.UploadStore` for all sessions, under a memory budget with least-recently-used eviction,
instead of in Streamlit's caches (whose entries are counted, not weighed). Every per-corpus cache
below is declared with `_per_corpus`, which sends an uploaded corpus's digest to the store.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import inspect
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import corpus, filters, sources
from dashboard import index as paper_index
from dashboard.analytics import analysis, hierarchy, terms
from dashboard.figures import charts
from dashboard.index import diskcache
from dashboard.repocheck import columns as repo_columns
from dashboard.repocheck.store import Store, StoreError
from dashboard.schema import rows_of
from dashboard.server import uploads, worker
from dashboard.system import heap
from dashboard.text import links
from dashboard.ui import keys, tables
from dashboard.ui.url import run_context

LOG = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
ENV_CORPUS = "PAPER_DASHBOARD_CORPUS"
SEEDS_DIR = Path(__file__).resolve().parents[3] / "seeds"


@dataclass(frozen=True)
class HeldUpload:
    """The files a session uploaded: their digest, names and sizes. The bytes stay in the uploader
    (Streamlit keeps them for the session), so a session's state holds no second copy."""

    digest: str
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    file_ids: tuple[str, ...]
    new: tuple[int, ...]  # positions of the files the last upload added

    @property
    def label(self) -> str:
        """E.g. ``uploaded: icml.csv (+2 more)``."""
        more = f" (+{len(self.names) - 1} more)" if len(self.names) > 1 else ""
        return "uploaded: " + (self.names[0] if self.names else "") + more


@dataclass(frozen=True)
class ChosenCorpus:
    """The corpus a session looks at: files on disk (from the command line) or uploaded files."""

    label: str
    digest: str
    paths: tuple[str, ...] = ()
    upload: HeldUpload | None = None
    # the uploaded files' (name, bytes), read from the uploader only when the store lacks the corpus
    files: Callable[[], list[tuple[str, bytes]]] | None = field(default=None, compare=False, repr=False)
    # a large raw corpus's disk-cache entry while it is built: the pages show its raw papers meanwhile
    building: diskcache.Build | None = field(default=None, compare=False, repr=False)
    cache_problem: str = ""  # why a large raw corpus is analysed in memory (its entry could not be built)

    @property
    def is_upload(self) -> bool:
        return self.upload is not None


def corpus_paths(argv: Sequence[str], environ: Mapping[str, str]) -> tuple[list[str], str]:
    """Paths to load and where they came from: ``--corpus`` arguments, the environment, or the seeds.

    >>> corpus_paths(["--corpus", "a.csv", "b/"], {})
    (['a.csv', 'b/'], 'command line')
    """
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    parser.add_argument("--corpus", nargs="+", default=None)
    try:
        known, _ = parser.parse_known_args(list(argv))
    except (argparse.ArgumentError, SystemExit):
        known = argparse.Namespace(corpus=None)
    if known.corpus:
        return list(known.corpus), "command line"
    from_env = [p for p in environ.get(ENV_CORPUS, "").split(os.pathsep) if p.strip()]
    if from_env:
        return from_env, ENV_CORPUS
    return [str(SEEDS_DIR)], "bundled seeds"


def default_source(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> ChosenCorpus:
    """The corpus the server was started on (`corpus_paths` of its arguments and environment): what a
    page shows without an upload, and what the server warms as it starts (`dashboard.ui.warmup`)."""
    chosen = sys.argv[1:] if argv is None else argv
    return paths_source(*corpus_paths(chosen, os.environ if environ is None else environ))


def describe_paths(paths: Sequence[str], origin: str) -> str:
    """A short name for the corpus, e.g. ``bundled seeds`` or ``icml.jsonl (+2 more)``."""
    if origin == "bundled seeds":
        return "bundled seeds"
    names = [Path(p).name or p for p in paths]
    return names[0] + (f" (+{len(names) - 1} more)" if len(names) > 1 else "")


def _stat_signature(paths: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """Cheap fingerprint (name, size, mtime) of every file under the paths: reused while unchanged."""
    signature: list[tuple[str, int, int]] = []
    for raw in paths:
        path = Path(raw)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            try:
                stat = file.stat()
            except OSError:
                signature.append((str(file), -1, -1))
                continue
            signature.append((str(file), stat.st_size, stat.st_mtime_ns))
    return tuple(signature)


@st.cache_data(show_spinner=False, max_entries=16)
def _paths_digest(signature: tuple[tuple[str, int, int], ...], _paths: tuple[str, ...]) -> str:
    # Hashing file contents costs a full read; the stat signature decides when to do it again.
    return corpus.digest_paths(_paths)


# digest -> index directory, filled when a corpus path turns out to be an index (a prebuilt one, or the
# disk cache's). Content-keyed and the same for every session: it holds no per-session data.
_INDEX_PATHS: dict[str, str] = {}


def _index_digest(path: str) -> str | None:
    """The cache key of the index at ``path`` (its manifest's digest), or None when it is not one."""
    if not paper_index.is_index(path):
        return None
    try:
        digest = str(paper_index.read_manifest(path)["digest"])
    except paper_index.IndexFormatError as error:
        # Opening will report the problem; the key changes when the manifest does.
        digest = "unreadable-index-" + hashlib.sha256(str(error).encode()).hexdigest()
    _INDEX_PATHS[digest] = str(path)
    return digest


@st.cache_resource(show_spinner=False, max_entries=4)
def _opened_index(digest: str, path: str) -> sources.IndexSource:
    with heap.long_lived():  # millions of objects, not walked by the collector (`dashboard.system.heap`)
        return sources.IndexSource.open(path)


def source_of(digest: str, paths: Sequence[str] = ()) -> sources.CorpusSource:
    """The core source behind a corpus digest (`dashboard.sources`): its opened index when the corpus
    is one (opened once per server, shared by every session), else its raw files."""
    path = _INDEX_PATHS.get(digest)
    if path is not None:
        return _opened_index(digest, path)
    return sources.FilesSource(paths)


def index_path(digest: str) -> str | None:
    """The index directory behind ``digest`` (None when the corpus is not an index)."""
    return _INDEX_PATHS.get(digest)


def paths_source(paths: Sequence[str], origin: str) -> ChosenCorpus:
    """The on-disk corpus, with its content digest (recomputed only when a file changes).

    A prebuilt index directory (``paper-dashboard index``) is keyed on its manifest's digest instead.
    A large raw corpus (`diskcache.wanted`) is its disk-cache entry once that is built; while it is
    built (at the server's first start on it), the raw files themselves with `ChosenCorpus.building`
    set: the pages answer filters on the papers at once and say how far the topics are. The first run
    after the build ends switches to the entry.
    """
    index_digest = _index_digest(paths[0]) if len(paths) == 1 else None
    if index_digest is not None:
        label = describe_paths(paths, origin) + " (index)"
        return ChosenCorpus(label=label, digest=index_digest, paths=tuple(paths))
    digest = _paths_digest(_stat_signature(paths), tuple(paths))
    entry: str | None = None
    problem = ""
    if diskcache.wanted(paths):  # large: built once (behind its raw papers), then opened at every start
        build = _disk_build(digest, tuple(paths))
        if not build.done:
            return ChosenCorpus(
                label=describe_paths(paths, origin),
                digest=digest + BEFORE_TOPICS,
                paths=tuple(paths),
                building=build,
            )
        _release_raw(digest + BEFORE_TOPICS, tuple(paths))
        entry = str(build.entry) if build.entry is not None else None
        problem = CACHE_FAILED if entry is None else ""
    elif diskcache.keeps_small():  # small: analysed in memory now, opened from disk at the next start
        entry = _small_entry(digest, tuple(paths))
    cached_digest = _index_digest(entry) if entry is not None else None
    if entry is not None and cached_digest is not None:
        label = describe_paths(paths, origin) + " (analysis cached on disk)"
        return ChosenCorpus(label=label, digest=cached_digest, paths=(entry,))
    return ChosenCorpus(
        label=describe_paths(paths, origin), digest=digest, paths=tuple(paths), cache_problem=problem
    )


# The cache key of a raw corpus's papers while its entry is built: everything cached per corpus for
# them (its papers with repository columns, its facets, its map's bounds...) is made without topics,
# and must not be served once the corpus is analysed in memory under its own digest (a failed build).
BEFORE_TOPICS = "+before-topics"
# Said on the page; the reason (which may name the server's paths) goes to the server's log only.
CACHE_FAILED = (
    "The analysis of this corpus could not be kept on disk (the server's log says why): its topics "
    "are found in memory instead, at every start of the server."
)


@st.cache_resource(show_spinner=False, max_entries=8)
def _small_entry(digest: str, _paths: tuple[str, ...]) -> str | None:
    """A small corpus's disk entry when one is kept; else None, and its build starts behind the page
    (`diskcache.build_behind`), once per server: this server goes on analysing the corpus in memory."""
    try:
        entry = diskcache.existing(digest)
    except OSError as error:
        LOG.warning("the disk cache could not be read: %s", error)
        return None
    if entry is None:
        diskcache.build_behind(_paths, digest)
    return str(entry) if entry is not None else None


@st.cache_resource(show_spinner=False, max_entries=8)
def _disk_build(digest: str, _paths: tuple[str, ...]) -> diskcache.Build:
    """The disk-cache entry of a large raw corpus: found, or built once per server in a thread while
    the pages show the raw papers (`diskcache.Build`); a failed build leaves the corpus in memory."""
    return diskcache.Build.start(_paths, digest)


_RELEASED: set[str] = set()  # raw corpora whose table was let go once their entry's build ended


def _release_raw(digest: str, paths: tuple[str, ...]) -> None:
    """Let the raw papers read while the entry was built go, once: the pages now read the entry's (or
    the corpus's own, analysed in memory)."""
    if digest not in _RELEASED:
        _RELEASED.add(digest)
        _load_paths.clear(digest, paths)


def upload_source(held: HeldUpload, files: Callable[[], list[tuple[str, bytes]]]) -> ChosenCorpus:
    """A corpus of uploaded files; ``files`` gives their (name, bytes) when they must be read."""
    return ChosenCorpus(label=held.label, digest=held.digest, upload=held, files=files)


@st.cache_resource(show_spinner=False, max_entries=8)
def _load_paths(digest: str, paths: tuple[str, ...]) -> corpus.LoadResult:
    # Keyed on the paths too: two index folders may share a manifest's digest (a copy), and a damaged
    # copy must not be served the sound one's table.
    with heap.long_lived():  # (`dashboard.system.heap`)
        return source_of(digest, paths).load()


def load(source: ChosenCorpus, n_topics: int | str = "auto") -> corpus.LoadResult:
    """The paper table and load report of a corpus (cached on its digest).

    An upload is read in a worker process, which also fits its first topic model (``n_topics``),
    and kept in the upload store; a refused upload gives an empty table whose report says why.
    """
    if source.is_upload:
        return _load_upload(source, n_topics)
    return _load_paths(source.digest, source.paths)


@st.cache_resource(show_spinner=False)
def upload_store() -> uploads.UploadStore:
    """The one store of uploaded corpora, shared by every session of this server."""
    return uploads.UploadStore()


class AnalysisFailed(Exception):
    """Topics could not be fitted for an uploaded corpus; the message is the page's explanation."""


def session_id() -> str:
    """This browser session's id (the store's holder name); ``""`` outside a session."""
    context = run_context()
    return str(context.session_id) if context is not None else ""


def live_sessions() -> list[str] | None:
    """The ids of the sessions the server still keeps (connected, or closed less than two minutes
    ago), or None where they cannot be listed (AppTest, another Streamlit)."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return None
        manager = Runtime.instance()._session_mgr  # no public API lists the sessions
        return [str(info.session.id) for info in manager.list_sessions()]
    except Exception:  # a private API: if it moves, sessions are still bounded by the budget
        return None


def forget_ended_sessions() -> None:
    """Let the corpora of sessions that ended go (what no session holds is dropped at once)."""
    alive = live_sessions()
    if alive is not None:
        upload_store().keep_only(alive)


def _refused(source: ChosenCorpus, message: str) -> corpus.LoadResult:
    empty = corpus.load_uploads([])
    name = source.upload.names[0] if source.upload and len(source.upload.names) == 1 else "upload"
    report = corpus.FileReport(name, "upload", None, 0, [corpus.Problem(name, "", message)])
    return corpus.LoadResult(papers=empty.papers, report=corpus.LoadReport([report]))


def _load_upload(source: ChosenCorpus, n_topics: int | str) -> corpus.LoadResult:
    store = upload_store()
    holder = session_id()
    forget_ended_sessions()
    known = store.get(source.digest, "load", holder)
    if known is not None:
        return known
    assert source.upload is not None
    files = source.files() if source.files is not None else []
    if not files or corpus.digest_uploads(files) != source.digest:
        return _refused(source, "the uploaded files are no longer in this session: upload them again")
    try:
        imported = st.session_state.get(keys.LIBRARY_IMPORTED)  # BibTeX imported into the library
        prepared, size = sources.UploadSource(files, source.upload.new, imported).prepare(n_topics)
    except worker.WorkerError as error:
        LOG.warning("upload %s refused: %s", source.digest[:12], error)
        result = _refused(
            source,
            f"reading {error} (dashboard.server.uploads.PARSE_TIMEOUT_SECONDS, PARSE_MEMORY_BYTES): refused; "
            "upload fewer or smaller files",
        )
        store.put(source.digest, "load", result, charge=1 << 10, holder=holder)
        return result
    del files
    if prepared.refused:
        result = _refused(source, prepared.refused)
        store.put(source.digest, "load", result, charge=1 << 10, holder=holder)
        return result
    try:
        store.put(
            source.digest, "load", prepared.result, charge=int(size * uploads.CHARGE_FACTOR), holder=holder
        )
    except MemoryError as error:
        return _refused(source, str(error))
    LOG.info("upload %s read in %.1f s, %d bytes", source.digest[:12], prepared.seconds, size)
    if prepared.analysis is not None:
        store.put(source.digest, ("analyze", prepared.n_topics), prepared.analysis, charge=0)
    elif prepared.analysis_problem:
        store.put(source.digest, ("analysis_problem", prepared.n_topics), prepared.analysis_problem, charge=0)
    return prepared.result


def _analyse_in_worker(
    digest: str, papers: pd.DataFrame, n_topics: int | str
) -> tuple[analysis.Analysis, int]:
    # The embeddings of the upload's first fit, when it was fitted in that space: a refit reuses them.
    first = upload_store().get(digest, ("analyze", "auto"))
    vectors = getattr(first.model, "semantic_", None) if first is not None else None
    try:
        fitted, size = sources.UploadSource.fit_in_worker(papers, n_topics, vectors)
    except worker.WorkerError as error:
        raise AnalysisFailed(f"Topics could not be computed for this corpus: fitting {error}.") from None
    return fitted, int(size * uploads.CHARGE_FACTOR)


def _per_corpus(max_entries: int) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """A cache per corpus digest (the first argument): `st.cache_resource` for corpora on disk, the
    upload store for uploaded ones (weighed with `uploads.approx_bytes` against the budget)."""

    def decorate(function: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(function)
        def compute_once(*args: P.args, **kwargs: P.kwargs) -> T:
            with heap.long_lived():  # kept for the corpus's life (`dashboard.system.heap`)
                return function(*args, **kwargs)

        cached = st.cache_resource(show_spinner=False, max_entries=max_entries)(compute_once)
        signature = inspect.signature(function)

        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> T:
            bound = signature.bind(*args, **kwargs)
            digest = str(next(iter(bound.arguments.values())))
            store = upload_store()
            if not store.holds(digest):
                return cached(*args, **kwargs)
            key = (function.__name__,) + tuple(
                value for name, value in list(bound.arguments.items())[1:] if not name.startswith("_")
            )

            def compute() -> tuple[T, int]:
                value = compute_once(*args, **kwargs)
                return value, uploads.approx_bytes(value)

            return store.memo(digest, key, compute)

        return call

    return decorate


def analyze(
    digest: str, n_topics: int | str, _papers: pd.DataFrame, refit: bool = False
) -> analysis.Analysis:
    """Topics, areas, map and similarity for a corpus (cached on digest and number of topics).

    A number of topics up to the fitted one (``auto``) is a cut of the fitted topics' tree
    (`topic_tree`, `dashboard.analytics.analysis.cut`: a fraction of a second, no refit); more topics than
    that, or ``refit``, fit the model again at that number. For an uploaded corpus: fitted in a
    worker process at each number and kept in the upload store; raises `AnalysisFailed` when it
    cannot be fitted.
    """
    store = upload_store()
    if store.holds(digest):
        problem = store.get(digest, ("analysis_problem", n_topics))
        if problem is not None:
            raise AnalysisFailed(problem)
        return store.memo(
            digest, ("analyze", n_topics), lambda: _analyse_in_worker(digest, _papers, n_topics)
        )
    if n_topics == "auto" or refit:
        return _analyze_on_disk(digest, n_topics, _papers)
    fitted = _analyze_on_disk(digest, "auto", _papers)
    tree = topic_tree(digest, fitted)
    if int(n_topics) > tree.n_leaves:
        return _analyze_on_disk(digest, n_topics, _papers)
    return _cut(digest, int(n_topics), fitted, tree)


@st.cache_resource(show_spinner=False, max_entries=4)
def topic_tree(digest: str, _fitted: analysis.Analysis) -> hierarchy.TopicTree:
    """The tree over the fitted (``auto``) topics of a corpus: from its index when stored there,
    else computed once from the analysis (one pass over the papers' TF-IDF rows and embeddings)."""
    return source_of(digest).topic_tree(_fitted)


def fitted_tree(digest: str, _papers: pd.DataFrame) -> tuple[hierarchy.TopicTree, list[str]] | None:
    """The tree over a corpus's fitted topics and those topics' labels (cached); None for an upload
    (every number of topics of an upload is fitted in its worker)."""
    if upload_store().holds(digest):
        return None
    fitted = _analyze_on_disk(digest, "auto", _papers)
    labels = fitted.topics.loc[fitted.topics["topic"] >= 0].sort_values("topic")["label"]
    return topic_tree(digest, fitted), [str(label) for label in labels]


@st.cache_data(show_spinner=False, max_entries=4)
def tree_node_labels(digest: str, _tree: hierarchy.TopicTree) -> list[str]:
    """A label for every node of the corpus's topic tree (`TopicTree.node_labels`), once per corpus."""
    return _tree.node_labels()


@st.cache_resource(show_spinner=False, max_entries=8)
def _cut(digest: str, k: int, _fitted: analysis.Analysis, _tree: hierarchy.TopicTree) -> analysis.Analysis:
    with heap.long_lived():
        return analysis.cut(_fitted, _tree, k)


@st.cache_resource(show_spinner=False, max_entries=8)
def _analyze_on_disk(digest: str, n_topics: int | str, _papers: pd.DataFrame) -> analysis.Analysis:
    with heap.long_lived():
        return source_of(digest).analysis(_papers, n_topics)


@_per_corpus(max_entries=8)
def search_text(digest: str, _papers: pd.DataFrame) -> pd.Series:
    """The text the search looks in (title, abstract, method names), built once per corpus."""
    return filters.search_text(_papers)


def mask(digest: str, selection: filters.Filters, papers: pd.DataFrame) -> pd.Series:
    """Which papers pass the filters (cached per corpus and filters, number of topics included).

    The repository filter is applied outside the cache: its column changes whenever a check answers.
    """
    rest = selection.without("repo") if selection.repo else selection
    keep = _mask(digest, _mask_key(rest), rest, papers)
    if selection.repo and "repo_state" in papers.columns:
        keep = keep & papers["repo_state"].isin(list(selection.repo)).to_numpy(dtype=bool)
    return keep


def mask_array(digest: str, selection: filters.Filters, papers: pd.DataFrame) -> np.ndarray:
    """`mask` as a read-only boolean array: the same array in every run for the same corpus and filters
    (but the repository filter's, whose column changes as checks answer). `trends.Axes.cells` keeps
    its counts per array: a Trends run with the filters of the run before counted its dozen tables
    again (3-5 ms each at a million papers), as the mask came back from `st.cache_data` as a copy."""
    if selection.repo:
        return read_only(mask(digest, selection, papers))
    return _mask_array(digest, _mask_key(selection), selection, papers)


def read_only(keep: pd.Series) -> np.ndarray:
    """A mask as a read-only boolean array of its own (a copy: the Series may be shared)."""
    array = keep.to_numpy(dtype=bool, copy=True)
    array.setflags(write=False)
    return array


def _mask_key(selection: filters.Filters) -> str:
    """The filters' URL form, the masks' cache key (it includes the number of topics, ``k``)."""
    return repr(sorted(selection.to_query().items()))


@_per_corpus(max_entries=32)
def _mask_array(digest: str, key: str, _selection: filters.Filters, _papers: pd.DataFrame) -> np.ndarray:
    return read_only(_mask(digest, key, _selection, _papers))


@st.cache_data(show_spinner=False, max_entries=256)
def _mask(digest: str, key: str, _selection: filters.Filters, _papers: pd.DataFrame) -> pd.Series:
    # ``key`` is the filters' URL form, which includes the number of topics (``k``).
    return source_of(digest).mask(_selection, _papers, text=lambda: search_text(digest, _papers))


@_per_corpus(max_entries=16)
def term_counts(digest: str, ngram: int, keep_stop_words: bool, _papers: pd.DataFrame) -> terms.TermCounts:
    """Counts of n-grams per paper for fast sums over any subset (cached per corpus and setting)."""
    counts = source_of(digest).term_counts(_papers, ngram, keep_stop_words)
    counts.subset_counts()  # the corpus totals, now (under the page's spinner), not on a filter change
    return counts


CLOUD_IMPORTS = ("wordcloud",)  # what the helper imports for the cloud, beyond `charts`


def start_cloud_helper() -> None:
    """Start the helper process the word cloud is drawn in (`worker.start_helper`), if none runs."""
    worker.start_helper(charts.word_cloud_png, imports=CLOUD_IMPORTS)


@functools.lru_cache(maxsize=64)  # not st.cache_data: it is made in a thread of its own (`word_cloud`)
def _word_cloud(frequencies: tuple[tuple[str, float], ...], theme: str) -> bytes:
    return worker.in_helper(charts.word_cloud_png, dict(frequencies), theme=theme, imports=CLOUD_IMPORTS)


def word_cloud(frequencies: tuple[tuple[str, float], ...], theme: str = "light") -> Future[bytes]:
    """PNG of a word cloud in ``theme``'s colours (cached per terms, theme), made in the server's
    helper process (`worker.in_helper`) while the page goes on: ``.result()`` gives it, or raises
    ValueError when no term can be drawn.

    Its layout and picture hold the interpreter (65-80 ms at a million papers); drawn in a thread of
    the server, they held up the Terms page's own thread for as long."""
    return in_background(_word_cloud, frequencies, theme)


@functools.cache
def _background() -> ThreadPoolExecutor:
    """Threads for a page's steps that need no Streamlit call, shared by every session of the server.

    Apart from the term sums' pool (`terms._sum_pool`): a step here waits on those sums, and tasks
    that wait on tasks of their own pool can hold every thread and wait forever."""
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="page-steps")


def in_background(step: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
    """Run ``step(*args, **kwargs)`` in a thread while the page goes on; ``.result()`` gives its value
    (or raises its error) where the page needs it. ``step`` must make no Streamlit call."""
    return _background().submit(step, *args, **kwargs)


# Counting any filtered subset: the papers' columns as integer codes, made once per corpus (see
# `tables.Groups`); a filter change is then a few `np.bincount` calls instead of exploding and
# grouping up to a million rows. Keyed on the digest; the number of topics too where the column
# comes from the analysis (the rows keep their order for every number of topics).


TOPIC_COLUMNS = ("topic", "topic_label")  # the columns another topic model changes


def groups(digest: str, model: str, column: str, _papers: pd.DataFrame) -> tables.Groups:
    """A column's values (or list elements) as codes, as `tables.release_in_view` groups them.

    ``model`` is `Filters.model`: only the topic columns are coded again for another model.
    """
    return _groups(digest, model if column in TOPIC_COLUMNS else "", column, _papers)


@_per_corpus(max_entries=32)
def _groups(digest: str, model: str, column: str, _papers: pd.DataFrame) -> tables.Groups:
    return tables.group_codes(_papers[column])


@_per_corpus(max_entries=16)
def word_bounds(digest: str, _papers: pd.DataFrame) -> tuple[int, int] | None:
    """The fewest and most words of an abstract in the corpus (the sidebar's slider); None when every
    abstract has the same length or none is known (read once per corpus: a million lengths a run)."""
    n_words = pd.to_numeric(_papers["n_words"], errors="coerce").dropna()
    if n_words.empty or n_words.min() >= n_words.max():
        return None
    return int(n_words.min()), int(n_words.max())


@_per_corpus(max_entries=16)
def list_items(digest: str, column: str, once_per_row: bool, _papers: pd.DataFrame) -> tables.Groups:
    """The non-blank elements of a list column (datasets, method names) as codes."""
    return tables.list_items(_papers[column], once_per_row=once_per_row)


@_per_corpus(max_entries=8)
def method_meanings(digest: str, _papers: pd.DataFrame) -> tables.Groups:
    """The method names as the Overview counts them, per meaning (`extract.name_meanings`), as codes:
    from the index when stored there, else read from the abstracts (`index.method_meanings`)."""
    meanings = source_of(digest).method_meanings(_papers)
    return tables.list_items(pd.Series(meanings, index=_papers.index, dtype=object), once_per_row=False)


@_per_corpus(max_entries=8)
def map_bounds(digest: str, _papers: pd.DataFrame) -> tuple[float, float, float, float, np.ndarray] | None:
    """(x from, x to, y from, y to, placed) of the paper map: its coordinates' range rounded out to
    tenths (each range at least 0.1 wide: a slider's ends), and per paper whether it has both
    coordinates (read-only); None without a map. Once per corpus: the keyboard's region picker read a
    million coordinates four times a run."""
    if "x" not in _papers.columns or "y" not in _papers.columns or not len(_papers):
        return None
    xs, ys = _papers["x"].to_numpy(dtype=float), _papers["y"].to_numpy(dtype=float)
    placed = ~(np.isnan(xs) | np.isnan(ys))
    if not placed.any():
        return None
    placed.setflags(write=False)
    low_x, high_x = float(np.floor(np.nanmin(xs) * 10) / 10), float(np.ceil(np.nanmax(xs) * 10) / 10)
    low_y, high_y = float(np.floor(np.nanmin(ys) * 10) / 10), float(np.ceil(np.nanmax(ys) * 10) / 10)
    return low_x, max(high_x, low_x + 0.1), low_y, max(high_y, low_y + 0.1), placed


@_per_corpus(max_entries=16)
def name_options(digest: str, field: str, limit: int, _counts: pd.Series) -> dict[Any, str]:
    """The first ``limit`` names of a name filter's corpus-wide counts (authors, institutions), each
    with its label, ``"name (count)"``, in order: made once per corpus, not each run (the 5,000 of a
    million papers' 52,000 authors: 1.9 ms of every page's run, a copy of this dict 0.2 ms)."""
    names, numbers = _counts.index[:limit].tolist(), _counts.to_numpy()[:limit].tolist()
    return {name: f"{name} ({n:,})" for name, n in zip(names, numbers, strict=True)}


MAP_HOVERS_KEPT = 4 * charts.MAP_POINTS  # papers first in the map's order whose hover texts are kept
MAP_HOVER_COLUMNS = ("title", "authors", "year", "method_names")  # what `charts.map_hover` reads


@_per_corpus(max_entries=4)
def sample_order(digest: str, _papers: pd.DataFrame) -> np.ndarray:
    """A seeded permutation of the papers, once per corpus (read-only): the order in which samples
    of them are drawn (`charts.sample_in_order`: the paper map, the Terms page's group comparison)."""
    order = np.random.default_rng(0).permutation(len(_papers))
    order.setflags(write=False)
    return order


@_per_corpus(max_entries=4)
def map_sample_order(digest: str, _papers: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, rank, hovers) of the paper map's sample (`charts.sample_in_order`), once per corpus.

    ``order`` is `sample_order` and ``rank`` each paper's place in it; ``hovers``
    are the hover texts of the first `MAP_HOVERS_KEPT` papers of it, which hold the whole sample of any
    filter keeping a quarter of the papers or more (a filter change wrote 10,000 of them: 0.1 s of
    every Topics run at a million papers). Read-only.
    """
    order = sample_order(digest, _papers)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    first = np.sort(order[:MAP_HOVERS_KEPT])
    hovers = np.empty(len(order[:MAP_HOVERS_KEPT]), dtype=object)
    hovers[rank[first]] = charts.map_hover(rows_of(_papers, first, MAP_HOVER_COLUMNS))
    for array in (rank, hovers):
        array.setflags(write=False)
    return order, rank, hovers


def released(digest: str, _papers: pd.DataFrame) -> np.ndarray:
    """Per paper: whether it released code (read-only)."""
    return has_code_status(digest, tables.RELEASED, _papers)


@_per_corpus(max_entries=16)
def has_code_status(digest: str, status: str, _papers: pd.DataFrame) -> np.ndarray:
    """Per paper: whether its ``code_status`` is ``status`` (read-only; a million string comparisons
    are 10 ms, done once per corpus)."""
    flags = _papers["code_status"].eq(status).to_numpy(dtype=bool, na_value=False)
    flags.setflags(write=False)
    return flags


@_per_corpus(max_entries=8)
def link_counts(digest: str, _papers: pd.DataFrame) -> np.ndarray:
    """Per paper: how many links its abstract has (read-only)."""
    counts = _papers["links"].map(len).to_numpy(dtype=np.int64)
    counts.setflags(write=False)
    return counts


@_per_corpus(max_entries=8)
def link_table(digest: str, _papers: pd.DataFrame) -> pd.DataFrame:
    """Every link of every paper with its host and repository (`tables.link_table`)."""
    return tables.link_table(_papers, links.url_host, links.repo_of)


@_per_corpus(max_entries=8)
def repo_groups(digest: str, _papers: pd.DataFrame) -> tables.RepoGroups:
    """The papers naming a repository, grouped case-insensitively (`tables.shared_repos_in_view`)."""
    return tables.repo_groups(_papers)


# Repository answers (`dashboard.repocheck`): read from the SQLite cache on every run (one small
# query says whether anything changed), joined to the papers once per change. Nothing here asks the
# network; only the Links & code page's "Check repositories" button does.


def repo_cache_path() -> Path:
    """The repository cache this server uses (``PAPER_DASHBOARD_CACHE`` or the user's data folder)."""
    return repo_columns.default_cache(os.environ)


def repo_generation(path: Path) -> tuple[int, float, str]:
    """(answers, latest check, problem): changes whenever an answer is written; (0, 0, "") with no file."""
    try:
        store = Store.open_existing(path)
    except StoreError as error:
        return 0, 0.0, str(error)
    if store is None:
        return 0, 0.0, ""
    try:
        with store:
            count, latest = store.generation()
    except Exception as error:  # a damaged cache degrades the feature, never the page
        return 0, 0.0, f"cannot read the repository cache {path}: {error}"
    return count, latest, ""


# The repositories and their answers do not depend on the topic model: they are worked out once per
# corpus (and cache change), and only joined to each number of topics' papers (working them out again
# was a visible part of the first run of every new number of topics at a million papers).


@st.cache_resource(show_spinner=False, max_entries=4)
def repo_keys(digest: str, _papers: pd.DataFrame) -> pd.Series:
    """Per paper, the cache key of its own repository (``""``: none), once per corpus."""
    from dashboard.repocheck.targets import paper_targets

    return paper_targets(_papers)


@st.cache_resource(show_spinner=False, max_entries=4)
def _repo_table(digest: str, generation: tuple[int, float], path: str, _papers: pd.DataFrame) -> pd.DataFrame:
    answers, _ = repo_columns.read_answers(Path(path))
    return repo_columns.repo_columns(repo_keys(digest, _papers), answers)


@st.cache_resource(show_spinner=False, max_entries=4)
def with_repo_columns(
    digest: str, model: str, generation: tuple[int, float], path: str, _papers: pd.DataFrame
) -> pd.DataFrame:
    """The papers with `dashboard.schema.REPO_COLUMNS` from the cache (a new frame per cache change).

    An entry shares the papers' column arrays and adds only the repository columns (four entries for
    the 27k corpus hold 0.7 MB more than the corpus itself), so it is not charged to the uploads'
    memory budget (`dashboard.server.uploads.MEMORY_BUDGET`); the upload it was made from is.
    """
    added = _repo_table(digest, generation, path, _papers)
    kept = _papers.drop(columns=[c for c in added.columns if c in _papers.columns])
    return pd.concat([kept, added], axis=1)


@st.cache_resource(show_spinner=False, max_entries=4)
def repo_states(digest: str, generation: tuple[int, float], _papers: pd.DataFrame) -> tables.Groups:
    """The papers' repository states as codes (papers without a repository left out), once per
    corpus and cache change (`tables.crosstab_in_view` counts them per group)."""
    states = _papers["repo_state"]
    return tables.group_codes(states.mask(states.eq("")))


@st.cache_resource(show_spinner=False, max_entries=4)
def with_repository(digest: str, _papers: pd.DataFrame) -> np.ndarray:
    """Per paper: whether it names a repository of its own (read-only)."""
    flags = repo_keys(digest, _papers).ne("").to_numpy(dtype=bool)
    flags.setflags(write=False)
    return flags


@st.cache_data(show_spinner=False, max_entries=16)
def repo_state_counts(digest: str, generation: tuple[int, float], _states: pd.Series) -> pd.Series:
    """Papers per repository state (papers without a repository left out), for the sidebar filter."""
    counts = _states[_states.ne("")].value_counts()
    counts.index.name = "repo"
    return counts.rename("papers")
