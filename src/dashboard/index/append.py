"""An index that grows: add papers to a prebuilt index without refitting anything.

    paper-dashboard index --append new-papers.jsonl --to papers.index

`append_index` runs the build's own map steps on the new papers only (`maps.count_files`, then
`maps.assign_part` with the fitted model's parts, `steps.TopicTransform`) and joins what they give to
the stored files:

- **topics**: each new paper gets the topic, weight and outlier flag the fitted model assigns it, the
  way a build assigns the papers outside its fit sample. The build keeps the model's parts in the
  index (`TRANSFORM_FILE`, `keep_model`); an index built before it did has them derived by its first
  append from what it stores (and kept from then on): the LSA projection is the SVD of the fit
  sample's stored TF-IDF rows (the fit's own solver and seed, checked against the stored LSA
  vectors), the centroids are means of the stored vectors.
- **map**: the existing papers keep their ``x, y`` exactly. A t-SNE keeps no projection that could
  place a new point, so each new paper is placed as `papermap.layout` places every paper beyond its
  fit sample: at the similarity-weighted mean of the positions of its `papermap.PLACE_NEIGHBORS`
  nearest papers of the map's fit sample, by cosine of the stored LSA vectors (``lsa.npy``; for an
  index whose topics were found in the sentence embedding, of those, ``semantic.npy``, as the map was). The
  sample is drawn again from the stored vectors with the map's seed; where the manifest's map facts
  do not match that draw, the neighbours are taken among all the papers the index had.
- **counts**: TF-IDF rows, the Terms page's counts (over the stored vocabularies: a term no stored
  paper had is not counted, as a rebuild with the same vocabulary would not), BM25's postings and
  lengths, the search words (a sorted union), research areas, facets, method meanings (read from
  the new papers' abstracts), topic sizes and the topic tree's sizes and term mass (its merges are
  the fitted ones) all take the new papers in; nothing about an existing paper changes.
- **duplicates**: a new paper whose id or normalised title (`title_key`) is already in the index, or
  earlier in the same append, is reported (`AppendResult.duplicates`) and not added.
- **versions**: the manifest keeps a list of the index's versions (``versions``: the build, then each
  append with its date, the digest of the files it read, the papers it added and their rows and ids),
  so "new since last time" works on an index (`rows_since`).

It appends safely. The new index is written as new files in a folder next to the index
(``.NAME.append-PID``; unchanged files are hard links) and switched in at the end with one atomic
exchange of the two folders (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, with the
old index kept aside as ``.NAME.previous`` until the new one is in place, and put back by the next
append if the process died between them). A killed append leaves the index as it was. Appends (and
refits) of one index take turns: each holds an exclusive ``fcntl.flock`` on ``.NAME.lock`` next to the
index for its whole run; a second one waits up to ``wait`` seconds (default 0) and then refuses with
`IndexBusyError`, which names the process holding the lock. The kernel releases the lock of a
process that dies, so a killed append never leaves the index locked.

**When to refit** (`refit_status`, printed after each append and kept in the manifest as ``refit``):
the appended papers are compared with the papers the topics were fitted on, both assigned by the
same stored model (a seeded sample of at most `BASELINE_SAMPLE` fitted papers, measured once). A
refit is due when any of these passes its threshold:

- the papers added since the fit reach `REFIT_SHARE` (25 %) of the papers the topics were fitted
  over: topics fitted on three quarters of a corpus are missing what the last quarter brought;
- their mean assignment weight (the cosine to their topic's centre) falls `REFIT_WEIGHT_DROP`
  (10 %) below the fitted papers': the new papers fit the topics loosely;
- the share of them assigned to no topic (outliers) rises `REFIT_OUTLIER_RISE` (10 points) above
  the fitted papers': new subjects the topics do not cover.

Costs (`bench/append.py`): reading and counting the new papers grows with their number; joining
them rewrites every per-paper file of the index (one sequential copy: the paper table, TF-IDF, term
counts, postings), checks the new ids and titles against all stored ones, and hashes the files it
wrote, so an append also grows linearly with the index's size on disk.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy.sparse as sp

from dashboard import corpus
from dashboard.analytics import papermap
from dashboard.analytics.areas import areas_from_scores, parse_taxonomy
from dashboard.analytics.representations import get as get_representation
from dashboard.filters import facet_counts
from dashboard.index.format import (
    _STR,
    MANIFEST,
    MEANINGS_FILE,
    TREE_FILE,
    IndexBuildError,
    IndexFormatError,
    _file_sha256,
    _read_checked,
    _read_topics,
    arrow_to_table,
    check_files,
    has_map,
    load_csr,
    load_npy,
    manifest_digest,
    read_arrow,
    read_manifest,
    table_to_arrow,
    write_arrow,
)
from dashboard.schema import OUTLIER_LABEL, OUTLIER_TOPIC

TRANSFORM_FILE = "topic_transform.npz"
REFIT_SHARE = 0.25
REFIT_WEIGHT_DROP = 0.10
REFIT_OUTLIER_RISE = 0.10
BASELINE_SAMPLE = 5_000
# Test hook: seconds to sleep just before the switch, so a test can kill an append at its worst moment.
PAUSE_ENV = "PAPER_DASHBOARD_APPEND_PAUSE"

Progress = Callable[[str], None]


class IndexBusyError(IndexBuildError):
    """Another append or refit holds the index's lock; the message names its process."""


@dataclass(frozen=True)
class Duplicate:
    """A new paper not added: already in the index (or earlier in the same append)."""

    source: str  # the file it was read from
    id: str  # its id in that file
    reason: str  # "same id" or "same title"
    existing_id: str  # the paper it repeats
    where: str  # "index" or "this append"


@dataclass(frozen=True)
class AppendResult:
    """What an append did: papers added, duplicates passed over, the new manifest, the refit advice."""

    added: int
    duplicates: list[Duplicate]
    manifest: dict[str, Any]
    refit: dict[str, Any]
    report: corpus.LoadReport
    seconds: float
    notes: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------ identity


def title_keys(titles: pa.Array | Sequence[Any]) -> pa.Array:
    """Titles as two copies of one share them: NFKC, lower case, letters and digits only, single spaces
    (empty for a missing title). Vectorised in Arrow: a million stored titles take about a second.

    The library's `normalise_text` rule (which the index may not import), but for case folding: Arrow
    lowers case, so ``ß`` stays ``ß``; both sides of a comparison use this one.

    >>> title_keys(["  Attention Is *All* You-Need! ", None]).to_pylist()
    ['attention is all you need', '']
    """
    values = titles if isinstance(titles, pa.Array) else pa.array(list(titles), type=pa.large_string())
    values = pc.fill_null(values.cast(pa.large_string()), "")
    lowered = pc.utf8_lower(pc.utf8_normalize(values, "NFKC"))
    return pc.utf8_trim(pc.replace_substring_regex(lowered, r"[^\p{L}\p{N}]+", " "), " ")


def title_key(title: Any) -> str:
    """One title's key (`title_keys`).

    >>> title_key("Graph   NETS!")
    'graph nets'
    """
    return str(title_keys([title if isinstance(title, str) else None])[0].as_py())


def _positional(paper_id: str, source: str) -> bool:
    """True when ``paper_id`` is the one a reader makes for a record without an id (``stem-N``)."""
    stem = Path(source).name.split(".")[0]
    return re.fullmatch(re.escape(stem) + r"-\d+", paper_id) is not None


def find_duplicates(
    existing_ids: pa.Array | Sequence[str], existing_titles: pa.Array | Sequence[Any], new: pd.DataFrame
) -> tuple[np.ndarray, list[Duplicate], dict[int, str]]:
    """Which rows of ``new`` to add: (keep mask, the duplicates, new ids for clashing positional ids).

    A paper is the same as a stored one when its id or its normalised title (`title_keys`, when not
    empty) is; later papers of ``new`` are checked against the earlier ones too. One exception: an id
    a reader made from the record's position (``stem-N``, a file without ids) names no paper, so when
    the titles differ the paper is added under the next free ``id-2``, ``id-3``. The stored papers are
    looked up in Arrow (hash joins), so the cost of a large index is a pass over its ids and titles.
    """
    stored_ids = (
        pa.array(existing_ids).cast(pa.large_string())
        if not isinstance(existing_ids, pa.Array)
        else existing_ids.cast(pa.large_string())
    )
    stored_keys = title_keys(existing_titles)
    stored_keys = pc.if_else(pc.equal(stored_keys, ""), pa.scalar(None, pa.large_string()), stored_keys)
    new_ids = new["id"].astype("str").tolist()
    new_keys = title_keys(new["title"].tolist()).to_pylist()
    id_rows = pc.index_in(pa.array(new_ids, pa.large_string()), value_set=stored_ids).to_pylist()
    keyed = pa.array([k or None for k in new_keys], pa.large_string())
    key_rows = pc.index_in(keyed, value_set=stored_keys, skip_nulls=True).to_pylist()
    ids_added: dict[str, str] = {}  # id -> title key, of the papers of this append kept so far
    titles_added: dict[str, str] = {}  # title key -> id
    keep = np.zeros(len(new), dtype=bool)
    duplicates: list[Duplicate] = []
    renamed: dict[int, str] = {}
    sources = new["source"].astype("str").tolist() if "source" in new.columns else [""] * len(new)

    def taken(paper_id: str) -> bool:
        return (
            paper_id in ids_added
            or pc.is_in(pa.array([paper_id], pa.large_string()), value_set=stored_ids)[0].as_py()
        )

    for row, (paper_id, key, source) in enumerate(zip(new_ids, new_keys, sources, strict=True)):
        stored_row = id_rows[row]
        seen: tuple[str, str] | None = None
        if stored_row is not None:
            seen = (paper_id, "index")
            stored_key = stored_keys[stored_row].as_py() or ""
        elif paper_id in ids_added:
            seen = (paper_id, "this append")
            stored_key = ids_added[paper_id]
        if seen is not None and _positional(paper_id, source) and key and stored_key != key:
            n = 2
            while taken(f"{paper_id}-{n}"):
                n += 1
            renamed[row] = paper_id = f"{paper_id}-{n}"
            seen = None
        if seen is not None:
            duplicates.append(Duplicate(source, new_ids[row], "same id", seen[0], seen[1]))
            continue
        if key and key_rows[row] is not None:
            existing = str(stored_ids[key_rows[row]].as_py())
            duplicates.append(Duplicate(source, paper_id, "same title", existing, "index"))
            continue
        if key and key in titles_added:
            duplicates.append(Duplicate(source, paper_id, "same title", titles_added[key], "this append"))
            continue
        keep[row] = True
        ids_added[paper_id] = key
        if key:
            titles_added[key] = paper_id
    return keep, duplicates, renamed


# ------------------------------------------------------------------------------------------ versions


def index_versions(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The index's versions, oldest first: the build, then each append (`append_index`).

    An index never appended to has one version, described from its build facts.
    """
    stored = manifest.get("versions")
    if isinstance(stored, list) and stored:
        return [dict(v) for v in stored if isinstance(v, dict)]
    n = int(manifest.get("papers", 0))
    return [
        {
            "version": 1,
            "date": manifest.get("built_at", ""),
            "kind": "build",
            "papers_added": n,
            "papers": n,
            "rows": [0, n],
            "digest": manifest.get("corpus_digest", ""),
            "sources": list(manifest.get("sources", [])),
        }
    ]


def rows_since(manifest: Mapping[str, Any], version: int) -> range:
    """The rows (positions in the paper table) of the papers added after ``version`` of the index.

    >>> rows_since({"papers": 5, "versions": [{"version": 1, "rows": [0, 3]},
    ...                                       {"version": 2, "rows": [3, 5]}]}, 1)
    range(3, 5)
    """
    versions = index_versions(manifest)
    later = [v for v in versions if int(v.get("version", 0)) > version]
    if not later:
        return range(0, 0)
    return range(int(later[0]["rows"][0]), int(manifest["papers"]))


# ------------------------------------------------------------------------------------------ safety


def _sibling(target: Path, what: str) -> Path:
    return target.with_name(f".{target.name}.{what}")


@contextlib.contextmanager
def index_lock(target: Path, what: str, wait: float = 0.0) -> Iterator[None]:
    """Hold the exclusive lock of the index at ``target`` (``.NAME.lock`` next to it, `fcntl.flock`).

    Waits up to ``wait`` seconds for another holder, then raises `IndexBusyError` naming it. The
    kernel lets go of the lock when its process ends, however it ends.
    """
    path = _sibling(target, "lock")
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + max(wait, 0.0)
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    holder = os.pread(handle, 4096, 0).decode("utf-8", "replace").strip() or "another process"
                    waited = f" after waiting {wait:g} s" if wait > 0 else ""
                    raise IndexBusyError(
                        f"{target}: {holder} is changing this index; refused{waited} (try again when it "
                        "ends, or pass --wait SECONDS to wait for it)"
                    ) from None
                time.sleep(0.1)
        os.ftruncate(handle, 0)
        since = datetime.now(timezone.utc).isoformat(timespec="seconds")
        os.pwrite(handle, f"{what} (process {os.getpid()}, since {since})".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(handle, 0)
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def recover(target: Path) -> None:
    """Under the lock: put back an index left aside by a switch that died half-way, and remove the
    folders of appends that died (no process holds them: the lock is ours)."""
    previous = _sibling(target, "previous")
    if previous.exists() and not target.exists():
        previous.rename(target)
    for leftover in target.parent.glob(f".{target.name}.*"):
        if leftover.is_dir() and leftover.name.split(".")[-1].split("-")[0] in (
            "append",
            "replaced",
            "refit",
        ):
            shutil.rmtree(leftover, ignore_errors=True)
    if previous.exists():
        shutil.rmtree(previous, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one atomic step (Linux ``renameat2``); False where that is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def switch(work: Path, target: Path) -> None:
    """Make the complete index in ``work`` the index at ``target``; the old one is removed after.

    One atomic exchange where the system has it; else the old index is renamed aside first
    (`recover` puts it back if the process dies before the new one is in place).
    """
    replaced = _sibling(target, f"replaced-{os.getpid()}")
    if _exchange(work, target):
        work.rename(replaced)
    else:
        previous = _sibling(target, "previous")
        target.rename(previous)
        try:
            work.rename(target)
        except BaseException:
            previous.rename(target)
            raise
        previous.rename(replaced)
    shutil.rmtree(replaced, ignore_errors=True)


# ------------------------------------------------------------------------------------------ the model


def _fit_rows(root: Path, n_papers: int) -> np.ndarray:
    rows = np.asarray(load_npy(root / "fit_rows.npy"), dtype=np.int64)
    if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= n_papers)):
        raise IndexFormatError(f"{root / 'fit_rows.npy'}: rows outside the index; rebuild it")
    return rows


def load_transform(root: Path, manifest: Mapping[str, Any]) -> Any:
    """The fitted model's parts stored in the index (`TRANSFORM_FILE`), shapes checked; None if absent."""
    from dashboard.index.steps import TopicTransform

    if TRANSFORM_FILE not in manifest.get("files", {}):
        return None
    path = root / TRANSFORM_FILE
    n_terms = int(manifest["arrays"]["tfidf"]["shape"][1])
    n_topics = int(manifest["topics"])
    try:
        with np.load(path, allow_pickle=False) as stored:
            parts = {name: np.asarray(stored[name], dtype=np.float64) for name in stored.files}
        transform = TopicTransform(
            idf=parts["idf"],
            projection=parts["projection"],
            guidance=float(parts["guidance"]),
            centroids=parts["centroids"],
            text_centroids=parts["text_centroids"],
            typical=parts["typical"],
            outlier_ratio=float(parts["outlier_ratio"]),
            space=str(manifest.get("representation", "lsa")),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None
    dims = transform.projection.shape[1] if transform.projection.ndim == 2 else -1
    expected = {
        "idf": (n_terms,),
        "projection": (n_terms, dims),
        "centroids": (n_topics, transform.centroids.shape[-1]),
        "text_centroids": (n_topics, dims),
        "typical": (n_topics,),
    }
    for name, shape in expected.items():
        value = getattr(transform, name)
        if value.shape != shape or not np.isfinite(value).all():
            raise IndexFormatError(
                f"{path}: {name} of shape {value.shape}, expected {shape}; rebuild the index"
            )
    return transform


def derive_transform(root: Path, manifest: Mapping[str, Any], topic: np.ndarray) -> Any:
    """The fitted model's parts, from what any index stores (for an index built before it kept them).

    The LSA projection repeats the fit's SVD (`lsa.lsa_fit`: today's solver, then the older one) on the fit
    sample's stored TF-IDF rows and must reproduce the stored LSA vectors (cosine 0.99 each); the
    centroids, text centroids and typical strengths are what `steps.TopicTransform.from_model`
    computes, from the stored embedding, LSA vectors and topics of the fitted papers.
    """
    from sklearn.preprocessing import normalize

    from dashboard.analytics.lsa import OLD_SOLVER, SOLVER, lsa_fit
    from dashboard.analytics.topics import TopicModel
    from dashboard.index import steps
    from dashboard.index.maps import one_thread

    if manifest.get("representation", "lsa") != "lsa":
        raise IndexBuildError(
            f"{root}: its topics were fitted in the {manifest['representation']} space and it lacks the "
            f"model's parts ({TRANSFORM_FILE}); rebuild the index with the new papers instead"
        )
    n_papers = int(manifest["papers"])
    fit_rows = _fit_rows(root, n_papers)
    tfidf = load_csr(root / "tfidf", manifest["arrays"]["tfidf"]["shape"])[fit_rows]
    lsa = np.asarray(load_npy(root / "lsa.npy")[fit_rows], dtype=np.float64)
    embedding = np.asarray(load_npy(root / "embedding.npy")[fit_rows], dtype=np.float64)
    labels = np.asarray(topic[fit_rows], dtype=np.int64)
    n_docs, n_terms = tfidf.shape
    dims = lsa.shape[1]
    if dims < 2 or dims >= n_terms or dims >= n_docs:
        raise IndexBuildError(
            f"{root}: its topics were fitted on too few papers or terms to place new papers by them; "
            "rebuild the index with the new papers instead"
        )
    defaults = TopicModel()
    # Papers without a term (no abstract) have no direction to reproduce: the exact small-corpus
    # solution may give them one from its null space.
    with_text = (np.linalg.norm(lsa, axis=1) > 0) & (np.asarray(tfidf.getnnz(axis=1)) > 0)
    agreement = np.zeros(0)
    # Today's solver first, then the one older indexes were fitted with.
    for solver in (SOLVER, OLD_SOLVER):
        with one_thread():
            projection = lsa_fit(tfidf, dims, manifest["settings"]["random_state"], solver)[1]
        agreement = np.einsum("ij,ij->i", normalize(np.asarray(tfidf @ projection)), lsa)[with_text]
        if not len(agreement) or float(np.min(agreement)) >= 0.99:
            break
    else:
        raise IndexBuildError(
            f"{root}: the topic model's LSA step could not be reproduced from the stored TF-IDF rows "
            f"(cosine {float(np.min(agreement)):.3f}): rebuild the index with the new papers instead"
        )
    n_topics = int(manifest["topics"])
    assigned = labels.copy()
    centroids = steps._unit_means(embedding, assigned, n_topics)
    outliers = assigned < 0
    if outliers.any():
        assigned[outliers] = np.argmax(embedding[outliers] @ centroids.T, axis=1)
    text_centroids = steps._unit_means(lsa, assigned, n_topics)
    strength = np.einsum("ij,ij->i", lsa, text_centroids[assigned])
    typical = np.array([steps._median(strength[assigned == t]) for t in range(n_topics)])
    idf = pq.read_table(root / "tfidf" / "terms.parquet").column("idf").to_numpy()
    guided = embedding.shape[1] > dims
    return steps.TopicTransform(
        idf=np.asarray(idf, dtype=np.float64),
        projection=projection,
        guidance=float(defaults.guidance) if guided else 0.0,
        centroids=centroids,
        text_centroids=text_centroids,
        typical=typical,
        outlier_ratio=float(defaults.outlier_ratio),
    )


def save_transform(transform: Any, path: Path) -> None:
    """The model's parts as plain arrays (``np.load(allow_pickle=False)`` reads them back)."""
    np.savez(
        path,
        idf=transform.idf,
        projection=transform.projection,
        guidance=np.float64(transform.guidance),
        centroids=transform.centroids,
        text_centroids=transform.text_centroids,
        typical=transform.typical,
        outlier_ratio=np.float64(transform.outlier_ratio),
    )


def keep_model(
    root: Path, manifest: Mapping[str, Any], model: Any, vectors: np.ndarray | None = None
) -> dict[str, Any]:
    """At build time, into the new index at ``root``: the fitted model's parts (`TRANSFORM_FILE`, so no
    append has to derive them) and the refit advice's starting point (`fit_baseline`), returned for
    the manifest's ``refit``. Where the model's LSA step cannot be repeated, nothing is kept (an empty
    advice): the first append tries to derive the parts from the stored files again. ``vectors`` are
    every paper's embeddings, for a model fitted in a space that clusters them.
    """
    from dashboard.index.steps import TopicTransform

    topic = np.asarray(
        read_arrow(root / "papers.arrow").column("topic").to_numpy(zero_copy_only=False), dtype=np.int64
    )
    try:
        transform = TopicTransform.from_model(model)
    except (ValueError, RuntimeError):
        # Its check counts papers without text (a zero row cannot be reproduced); the stored files'
        # derivation leaves them out.
        try:
            settings = {"random_state": model.random_state}
            transform = derive_transform(root, {**manifest, "settings": settings}, topic)
        except IndexBuildError:
            return {}
    save_transform(transform, root / TRANSFORM_FILE)
    baseline = fit_baseline(root, manifest, transform, topic, vectors)
    state = {"papers_at_fit": int(manifest["papers"]), "added": 0, "weight_sum": 0.0, "outliers": 0}
    return refit_status({**state, "baseline": baseline})


def fit_baseline(
    root: Path,
    manifest: Mapping[str, Any],
    transform: Any,
    topic: np.ndarray,
    vectors: np.ndarray | None = None,
) -> dict[str, Any]:
    """How the fitted papers themselves fit the stored model: a seeded sample of at most
    `BASELINE_SAMPLE` of them assigned as new papers are (mean weight, outlier share, and how many keep
    the topic the fit gave them). New papers are measured against this (`refit_status`)."""
    fit_rows = _fit_rows(root, int(manifest["papers"]))
    rng = np.random.default_rng(0)
    if len(fit_rows) > BASELINE_SAMPLE:
        fit_rows = np.sort(rng.choice(fit_rows, BASELINE_SAMPLE, replace=False))
    tfidf = load_csr(root / "tfidf", manifest["arrays"]["tfidf"]["shape"])[fit_rows]
    scores = np.asarray(load_npy(root / "area_scores.npy")[fit_rows])
    assigned = transform.assign(tfidf, scores, None if vectors is None else np.asarray(vectors[fit_rows]))
    with_text = np.asarray(tfidf.getnnz(axis=1) > 0)
    stored = topic[fit_rows][with_text]
    same = assigned["hard_topic"][with_text] == np.where(
        stored < 0, assigned["hard_topic"][with_text], stored
    )
    return {
        "papers": int(with_text.sum()),
        "mean_weight": round(float(assigned["topic_weight"][with_text].mean()), 4)
        if with_text.any()
        else 0.0,
        "outlier_share": round(float(assigned["is_outlier"][with_text].mean()), 4)
        if with_text.any()
        else 0.0,
        "same_topic_share": round(float(same.mean()), 4) if with_text.any() else 0.0,
    }


def refit_status(state: Mapping[str, Any]) -> dict[str, Any]:
    """Whether a refit is due, from the running figures of the papers added since the last fit.

    ``state``: ``papers_at_fit``, ``added`` (papers added since the fit, with text), ``weight_sum``,
    ``outliers`` and ``baseline`` (`fit_baseline`). Returns them with ``share``, ``mean_weight``,
    ``outlier_share``, ``due`` and ``reasons`` (one sentence per threshold passed).

    >>> status = refit_status({"papers_at_fit": 100, "added": 30, "weight_sum": 12.0, "outliers": 3,
    ...                        "baseline": {"mean_weight": 0.5, "outlier_share": 0.1}})
    >>> status["due"], status["reasons"][0]
    (True, 'papers added since the fit are 30 % of the 100 fitted over (threshold 25 %)')
    """
    added = int(state.get("added", 0))
    at_fit = max(int(state.get("papers_at_fit", 0)), 1)
    baseline = state.get("baseline") or {}
    share = added / at_fit
    mean_weight = float(state.get("weight_sum", 0.0)) / added if added else 0.0
    outlier_share = int(state.get("outliers", 0)) / added if added else 0.0
    reasons = []
    if share >= REFIT_SHARE:
        reasons.append(
            f"papers added since the fit are {_percent(share)} of the {at_fit:,} fitted over "
            f"(threshold {_percent(REFIT_SHARE)})"
        )
    base_weight = float(baseline.get("mean_weight", 0.0))
    if added and base_weight > 0 and mean_weight < (1 - REFIT_WEIGHT_DROP) * base_weight:
        reasons.append(
            f"their mean topic weight {mean_weight:.3f} is {_percent(1 - mean_weight / base_weight)} below "
            f"the fitted papers' {base_weight:.3f} (threshold {_percent(REFIT_WEIGHT_DROP)})"
        )
    base_outliers = float(baseline.get("outlier_share", 0.0))
    if added and outlier_share - base_outliers >= REFIT_OUTLIER_RISE:
        reasons.append(
            f"{_percent(outlier_share)} of them are outliers against {_percent(base_outliers)} of the "
            f"fitted papers (threshold +{REFIT_OUTLIER_RISE * 100:.0f} points)"
        )
    return {
        **{
            key: state[key]
            for key in ("papers_at_fit", "added", "weight_sum", "outliers", "baseline")
            if key in state
        },
        "share": round(share, 4),
        "mean_weight": round(mean_weight, 4),
        "outlier_share": round(outlier_share, 4),
        "thresholds": {
            "share": REFIT_SHARE,
            "weight_drop": REFIT_WEIGHT_DROP,
            "outlier_rise": REFIT_OUTLIER_RISE,
        },
        "due": bool(reasons),
        "reasons": reasons,
    }


def describe_refit(status: Mapping[str, Any]) -> str:
    """One line for people: whether a refit is due and why (`refit_status`)."""
    if status.get("due"):
        return "refit due: " + "; ".join(status["reasons"]) + " (paper-dashboard index --refit --to INDEX)"
    baseline = status.get("baseline") or {}
    return (
        f"no refit due: {status.get('added', 0):,} papers added since the fit "
        f"({_percent(status.get('share', 0))} of {status.get('papers_at_fit', 0):,}), mean topic weight "
        f"{status.get('mean_weight', 0):.3f} against {baseline.get('mean_weight', 0):.3f}, outliers "
        f"{_percent(status.get('outlier_share', 0))} against {_percent(baseline.get('outlier_share', 0))}"
    )


def _percent(share: float) -> str:
    return f"{share * 100:.0f} %"


# ------------------------------------------------------------------------------------------ map


POSTINGS_BLOCK = 1 << 23  # stored postings moved at a time when the search index is merged
MAP_PROBE = 200  # stored papers placed again to check a redrawn map sample (`map_sample`)


def map_sample(manifest: Mapping[str, Any], lsa: np.ndarray, coords: np.ndarray) -> np.ndarray | None:
    """The rows of the map's fit sample (the papers t-SNE laid out), drawn again; None when unknown.

    `papermap.layout` fits the map on every paper with a vector (at most its ``fit_size``: the
    manifest's ``map.fit_papers``), else on a seeded sample of that many, and places the rest from
    it. The sample is drawn again from the stored vectors of the papers the layout saw, then checked:
    `MAP_PROBE` stored papers outside it, placed again from it, must land where the index has them
    (so a map computed another way is never taken for this one). None for an index without a map or
    where the check fails.
    """
    facts = manifest.get("map") if has_map(manifest) else None
    if not isinstance(facts, Mapping):
        return None
    n_layout = int(facts.get("layout_papers", len(lsa)))
    norms = np.linalg.norm(np.asarray(lsa[:n_layout], dtype=np.float32), axis=1)
    with_text = np.flatnonzero(norms > 0)
    fitted = int(facts.get("fit_papers", -1))
    if fitted == len(with_text):
        return with_text
    if not 0 < fitted < len(with_text):
        return None
    rng = np.random.default_rng(facts.get("random_state", 0))
    rows = np.sort(rng.choice(with_text, fitted, replace=False))
    rest = np.setdiff1d(with_text, rows, assume_unique=True)
    probe = rest[:: max(1, len(rest) // MAP_PROBE)][:MAP_PROBE]
    again = papermap.place(np.asarray(lsa[probe]), np.asarray(lsa[rows]), np.asarray(coords[rows]))
    if not np.allclose(np.round(again, 4), coords[probe], atol=1e-3, equal_nan=True):
        return None
    return rows


def place_new(
    manifest: Mapping[str, Any], lsa: np.ndarray, coords: np.ndarray, new: np.ndarray
) -> tuple[np.ndarray, str]:
    """Map positions of the new papers' vectors ``new`` among the stored papers (``lsa``, ``coords``), in
    the space the map was drawn in (LSA, or the topics' embedding space).

    As `papermap.layout` places papers beyond its fit sample: `papermap.place` from the map's fit
    sample (`map_sample`); where that cannot be drawn again (or the index has no map), from all stored
    papers with a position. Returns the positions (rounded as the index keeps them) and which was used.
    """
    rows = map_sample(manifest, lsa, coords)
    how = "nearest papers of the map's fit sample"
    if rows is None:
        how = "nearest stored papers"
        rows = np.flatnonzero(
            (np.linalg.norm(np.asarray(lsa, dtype=np.float32), axis=1) > 0) & np.isfinite(coords).all(axis=1)
        )
    fitted = np.asarray(lsa[rows], dtype=np.float32)
    placed = papermap.place(
        np.asarray(new, dtype=np.float32), fitted, np.asarray(coords[rows], dtype=np.float64)
    )
    return np.round(placed, 4), how


# ------------------------------------------------------------------------------------------ writing


class _Writer:
    """The new index's folder: files written or linked, each with its size and checksum."""

    def __init__(self, old: Path, work: Path, manifest: Mapping[str, Any]) -> None:
        self.old, self.work, self.old_files = old, work, dict(manifest["files"])
        self.files: dict[str, dict[str, Any]] = {}

    def path(self, name: str) -> Path:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def written(self, name: str) -> None:
        file = self.work / name
        self.files[name] = {"bytes": file.stat().st_size, "sha256": _file_sha256(file)}

    def link(self, name: str) -> None:
        """An unchanged file: a hard link to the old one (never written to: both stay as they are)."""
        target = self.path(name)
        try:
            os.link(self.old / name, target)
        except OSError:
            shutil.copyfile(self.old / name, target)
        self.files[name] = dict(self.old_files[name])


def _append_rows(old: np.ndarray, new: np.ndarray, path: Path) -> None:
    """A .npy of the old rows then the new ones (written through a memory map)."""
    new = np.asarray(new, dtype=old.dtype).reshape((-1, *old.shape[1:]))
    out = np.lib.format.open_memmap(
        path, mode="w+", dtype=old.dtype, shape=(len(old) + len(new), *old.shape[1:])
    )
    out[: len(old)] = old
    out[len(old) :] = new
    out.flush()
    del out


def _append_csr(writer: _Writer, name: str, shape: Sequence[int], block: sp.csr_matrix) -> dict[str, Any]:
    """The CSR matrix in folder ``name`` with ``block``'s rows below its own."""
    old = writer.old / name
    indptr = np.asarray(load_npy(old / "indptr.npy"))
    data, indices = load_npy(old / "data.npy"), load_npy(old / "indices.npy")
    block = sp.csr_matrix(block)
    block.sort_indices()
    nnz = int(indptr[-1]) + block.nnz
    index_type = np.int32 if nnz < 2**31 else np.int64
    joined = np.concatenate(
        [indptr.astype(index_type), (block.indptr[1:] + int(indptr[-1])).astype(index_type)]
    )
    np.save(writer.path(f"{name}/indptr.npy"), joined)
    _append_rows(data, block.data, writer.path(f"{name}/data.npy"))
    _append_rows(indices, block.indices.astype(indices.dtype), writer.path(f"{name}/indices.npy"))
    for part in ("indptr.npy", "data.npy", "indices.npy"):
        writer.written(f"{name}/{part}")
    return {"shape": [int(shape[0]) + block.shape[0], int(shape[1])], "nnz": nnz}


def _merge_search(writer: _Writer, counts: Mapping[str, bytes], n_old: int) -> dict[str, Any]:
    """The search's inverted index with the new papers' words: a sorted union of the words, and each
    word's papers the stored ones then the new ones (rows only grow, so every list stays sorted)."""
    old = writer.old / "search"
    old_words = _read_checked(old / "words.arrow", "word").combine_chunks().cast(_STR)
    new_words = (
        pa.ipc.open_file(pa.BufferReader(counts["words.arrow"])).read_all().column("word").combine_chunks()
    )
    new_words = new_words.cast(_STR)
    with np.load(io.BytesIO(counts["postings.npz"]), allow_pickle=False) as postings:
        new_indptr, new_indices = postings["indptr"], postings["indices"]
        new_tf, new_lengths = postings["tf"], postings["lengths"]
    new_odd = np.load(io.BytesIO(counts["odd_rows.npy"]), allow_pickle=False)
    old_indptr = np.asarray(load_npy(old / "indptr.npy"), dtype=np.int64)
    # BM25's frequencies and lengths: absent from an index built before them, which stays without.
    ranked = all(f"search/{name}.npy" in writer.old_files for name in ("tf", "lengths"))
    old_indices = load_npy(old / "indices.npy")
    old_tf = load_npy(old / "tf.npy") if ranked else None
    words = pc.unique(pa.concat_arrays([old_words, new_words]))
    words = words.take(pc.sort_indices(words))
    old_map = np.asarray(pc.index_in(old_words, value_set=words), dtype=np.int64)
    new_map = np.asarray(pc.index_in(new_words, value_set=words), dtype=np.int64)
    old_counts, new_counts = np.diff(old_indptr), np.diff(new_indptr).astype(np.int64)
    lengths = np.zeros(len(words), dtype=np.int64)
    lengths[old_map] += old_counts
    before_new = lengths.copy()  # a word's new papers come after its stored ones
    lengths[new_map] += new_counts
    nnz = int(lengths.sum())
    index_type = np.int32 if nnz < 2**31 else np.int64
    indptr = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    out_indices = np.lib.format.open_memmap(
        writer.path("search/indices.npy"), mode="w+", dtype=old_indices.dtype, shape=(nnz,)
    )
    out_tf = (
        np.lib.format.open_memmap(writer.path("search/tf.npy"), mode="w+", dtype=old_tf.dtype, shape=(nnz,))
        if old_tf is not None
        else None
    )
    # The stored postings move as whole runs: each word's run shifts by the new postings placed before
    # it. Taken a block of words at a time, so memory holds a block's positions, not the whole index's.
    shift = indptr[old_map] - old_indptr[:-1]
    first = 0
    while first < len(old_counts):
        last = int(np.searchsorted(old_indptr, old_indptr[first] + POSTINGS_BLOCK, side="right"))
        last = min(max(last - 1, first + 1), len(old_counts))
        start, stop = int(old_indptr[first]), int(old_indptr[last])
        positions = np.arange(start, stop, dtype=np.int64) + np.repeat(
            shift[first:last], old_counts[first:last]
        )
        out_indices[positions] = old_indices[start:stop]
        if out_tf is not None and old_tf is not None:
            out_tf[positions] = old_tf[start:stop]
        first = last
    entry_word = np.repeat(new_map, new_counts)
    within = np.arange(len(new_indices)) - np.repeat(new_indptr[:-1].astype(np.int64), new_counts)
    positions = indptr[entry_word] + before_new[entry_word] + within
    out_indices[positions] = new_indices + n_old
    out_indices.flush()
    if out_tf is not None:
        out_tf[positions] = new_tf
        out_tf.flush()
    del out_indices, out_tf
    np.save(writer.path("search/indptr.npy"), indptr.astype(index_type))
    write_arrow(pa.table({"word": words}), writer.path("search/words.arrow"))
    old_odd = np.asarray(load_npy(old / "odd_rows.npy"), dtype=np.int64)
    np.save(writer.path("search/odd_rows.npy"), np.concatenate([old_odd, new_odd.astype(np.int64) + n_old]))
    files = ["words.arrow", "indptr.npy", "indices.npy", "odd_rows.npy"]
    if ranked:
        _append_rows(load_npy(old / "lengths.npy"), new_lengths, writer.path("search/lengths.npy"))
        files.extend(["tf.npy", "lengths.npy"])
    for name in files:
        writer.written(f"search/{name}")
    return {"shape": [len(words), n_old + len(new_lengths)], "nnz": nnz}


def _schema_table(new: pd.DataFrame, schema: pa.Schema, path: Path) -> tuple[pa.Table, list[str]]:
    """The new papers as a table of the stored table's schema; the columns it cannot hold are named."""
    table = table_to_arrow(new, schema.names)
    columns = []
    for stored_field, column in zip(schema, table.columns, strict=True):
        if column.type != stored_field.type:
            try:
                column = column.cast(stored_field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                raise IndexBuildError(
                    f"{path}: its column {stored_field.name!r} holds {stored_field.type}, the new papers' "
                    f"{column.type} ({error}): they cannot be appended; rebuild the index with them"
                ) from None
        columns.append(column)
    left_out = [c for c in new.columns if c not in schema.names]
    return pa.table(columns, schema=schema), left_out


def _update_topics(writer: _Writer, topic: np.ndarray) -> None:
    """Topic sizes with the new papers (labels, terms and representatives are the fit's)."""
    topics = _read_topics(writer.old / "topics.parquet")
    topic = np.asarray(topic)
    added = pd.Series(topic).value_counts()
    topics["size"] = topics["size"] + topics["topic"].map(added).fillna(0).astype("int64")
    if OUTLIER_TOPIC in added.index and OUTLIER_TOPIC not in set(topics["topic"]):
        outliers = {"topic": OUTLIER_TOPIC, "label": OUTLIER_LABEL, "size": int(added[OUTLIER_TOPIC])}
        topics = pd.concat([topics, pd.DataFrame([{**outliers, "top_terms": [], "representative_ids": []}])])
    from dashboard.index.format import write_topics

    write_topics(topics.reset_index(drop=True), writer.path("topics.parquet"))
    writer.written("topics.parquet")


def _update_tree(writer: _Writer, topic: np.ndarray, tfidf: sp.csr_matrix, embedding: np.ndarray) -> None:
    """The topic tree's sizes, term mass and centroids with the new papers; its merges are the fit's."""
    path = writer.old / TREE_FILE
    try:
        with np.load(path, allow_pickle=False) as stored:
            linkage, mass, sizes, centroids = (stored[k] for k in ("linkage", "mass", "sizes", "centroids"))
    except (OSError, ValueError, KeyError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None
    n_topics = len(sizes)
    keep = np.flatnonzero((topic >= 0) & (topic < n_topics))
    membership = sp.csr_matrix((np.ones(len(keep)), (topic[keep], keep)), shape=(n_topics, len(topic)))
    new_sizes = np.bincount(topic[keep], minlength=n_topics)
    sums = centroids.astype(np.float64) * sizes[:, None] + membership @ np.asarray(
        embedding, dtype=np.float64
    )
    sizes = (sizes + new_sizes).astype(sizes.dtype)
    mass = mass + np.asarray((membership @ tfidf).todense(), dtype=mass.dtype)
    centroids = (sums / np.maximum(sizes, 1)[:, None]).astype(centroids.dtype)
    np.savez(writer.path(TREE_FILE), linkage=linkage, mass=mass, sizes=sizes, centroids=centroids)
    writer.written(TREE_FILE)


def _update_facets(writer: _Writer, papers: pd.DataFrame) -> None:
    """The sidebar's facet counts with the new papers', ordered as the build orders them (most papers
    first, ties by value), summed as Series: a facet of a million authors is not a Python loop."""
    path = writer.old / "facets.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None
    added = facet_counts(papers)
    out: dict[str, list[list[Any]]] = {}
    for key in [*stored, *(k for k in added if k not in stored)]:
        pairs = stored.get(key, [])
        old = pd.Series(
            [n for _, n in pairs], index=pd.Index([v for v, _ in pairs], dtype=object), dtype="int64"
        )
        new = added.get(key)
        if new is not None and len(new):
            values = [v.item() if isinstance(v, np.generic) else v for v in new.index]
            new = pd.Series(new.to_numpy(dtype=np.int64), index=pd.Index(values, dtype=object))
            old = old.add(new, fill_value=0).astype("int64")
        values, counts = old.index.tolist(), old.to_numpy(dtype=np.int64).tolist()
        order = pd.DataFrame({"n": [-n for n in counts], "s": [str(v) for v in values]})
        ranked = order.sort_values(["n", "s"], kind="stable").index.tolist()
        out[key] = [[values[i], counts[i]] for i in ranked]
    writer.path("facets.json").write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    writer.written("facets.json")


def _content_digest(digests: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


# ------------------------------------------------------------------------------------------ appending


def append_index(
    paths: Sequence[str | Path],
    index: str | Path,
    *,
    wait: float = 0.0,
    progress: Progress | None = None,
) -> AppendResult:
    """Add the papers of the corpus files ``paths`` to the index at ``index`` without refitting anything.

    See the module docstring for what each part of the index gets; returns what was added, the
    duplicates passed over and whether a refit is due. Raises `IndexBusyError` when another append
    or refit of this index runs (after waiting up to ``wait`` seconds), IndexFormatError for an index
    that cannot be opened and IndexBuildError for new papers that cannot be appended.
    """
    started = time.perf_counter()
    phases: dict[str, float] = {}
    clock = [started]

    def say(message: str, finished: str | None = None) -> None:
        now = time.perf_counter()
        if finished:
            phases[finished] = round(now - clock[0], 3)
            clock[0] = now
        if progress is not None:
            progress(f"{now - started:7.1f} s  {message}")

    target = Path(index)
    with index_lock(target, "an append", wait):
        recover(target)
        manifest = read_manifest(target)
        check_files(target, manifest)
        say(f"reading {len(paths)} file{'s' * (len(paths) != 1)}")
        loaded = corpus.load([Path(p) for p in paths])
        stored_table = read_arrow(target / "papers.arrow")
        existing = stored_table.select(["id", "title"])
        keep, duplicates, renamed = find_duplicates(
            existing.column("id").combine_chunks(), existing.column("title").combine_chunks(), loaded.papers
        )
        new = loaded.papers.copy()
        for row, paper_id in renamed.items():
            new.iloc[row, new.columns.get_loc("id")] = paper_id
        new = new[keep].reset_index(drop=True)
        say(f"{len(new):,} new papers, {len(duplicates):,} already in the index", finished="read")
        if new.empty:
            state = manifest.get("refit") or {}
            status = refit_status(state) if state else {"due": False, "reasons": []}
            return AppendResult(
                0, duplicates, manifest, status, loaded.report, time.perf_counter() - started, [], phases
            )
        work = _sibling(target, f"append-{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            result = _write_appended(target, work, manifest, stored_table, new, loaded, paths, say)
            del stored_table
            say("switching to the new index")
            pause = float(os.environ.get(PAUSE_ENV, "0") or 0)
            if pause > 0:
                time.sleep(pause)
            switch(work, target)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        say("done", finished="switch")
    manifest, status, notes = result
    return AppendResult(
        len(new), duplicates, manifest, status, loaded.report, time.perf_counter() - started, notes, phases
    )


def _write_appended(
    root: Path,
    work: Path,
    manifest: dict[str, Any],
    stored_table: pa.Table,
    new: pd.DataFrame,
    loaded: corpus.LoadResult,
    paths: Sequence[str | Path],
    say: Callable[..., None],
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Write the index with ``new`` appended into ``work``; returns its manifest, the refit advice, notes."""
    from dashboard.index.format import method_meanings, write_single_batch
    from dashboard.index.maps import AssignInputs, _arrow_bytes, assign_part, count_files, one_thread

    writer = _Writer(root, work, manifest)
    notes: list[str] = []
    n_old, n_new = int(manifest["papers"]), len(new)
    arrays = manifest["arrays"]
    taxonomy_text = (root / "taxonomy.toml").read_text(encoding="utf-8")
    taxonomy = parse_taxonomy(taxonomy_text, manifest["taxonomy"])
    topic_old = stored_table.column("topic").to_numpy(zero_copy_only=False).astype(np.int64)
    with one_thread():
        counts = count_files(
            _arrow_bytes(table_to_arrow(new)), taxonomy_text, manifest["taxonomy"], "the new papers"
        )
    say("counted the new papers' terms", finished="count")
    transform = load_transform(root, manifest)
    state = dict(manifest.get("refit") or {})
    if transform is None:
        say("deriving the fitted model's parts from the index (once: they are kept)")
        with one_thread():
            transform = derive_transform(root, manifest, topic_old)
            state.setdefault("baseline", fit_baseline(root, manifest, transform, topic_old))
        save_transform(transform, writer.path(TRANSFORM_FILE))
        writer.written(TRANSFORM_FILE)
        say("derived the model's parts", finished="derive model")
    else:
        writer.link(TRANSFORM_FILE)
    vocabularies = {
        n: _read_checked(root / "terms" / str(n) / "terms.arrow", "term").combine_chunks().cast(_STR)
        for n in (1, 2, 3)
    }
    terms_table = pq.read_table(root / "tfidf" / "terms.parquet")
    shared = AssignInputs(
        vocabularies,
        terms_table.column("term").to_numpy().astype(object),
        terms_table.column("idf").to_numpy(),
        transform,
    )
    encoded = _encode_new(root, manifest, new, transform)
    blocks = assign_part(counts, shared, "the new papers", encoded)
    assigned = blocks["assigned"]
    scores = np.load(io.BytesIO(counts["area_scores.npy"]), allow_pickle=False)
    say("assigned their topics", finished="assign")
    lsa_old = load_npy(root / "lsa.npy")
    coords_old = np.stack(
        [stored_table.column(c).to_numpy(zero_copy_only=False).astype(np.float64) for c in ("x", "y")], axis=1
    )
    space = get_representation(transform.space)
    if space.external:  # the map was drawn in the topics' space (`build._write_index`)
        stored = space.base(lsa_old, load_npy(root / "semantic.npy"))
        coords, placed_by = place_new(manifest, stored, coords_old, space.base(assigned["lsa"], encoded))
    else:
        coords, placed_by = place_new(manifest, lsa_old, coords_old, assigned["lsa"])
    say(f"placed them on the map ({placed_by})", finished="map")
    topics = _read_topics(root / "topics.parquet")
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    papers = new.assign(
        topic=assigned["topic"],
        topic_label=pd.Series([labels.get(int(t), OUTLIER_LABEL) for t in assigned["topic"]], dtype="str"),
        topic_weight=assigned["topic_weight"],
        is_outlier=assigned["is_outlier"],
        areas=pd.Series(areas_from_scores(np.asarray(scores), taxonomy), dtype=object),
        x=coords[:, 0],
        y=coords[:, 1],
    )
    table, left_out = _schema_table(papers, stored_table.schema, root / "papers.arrow")
    if left_out:
        notes.append(f"columns the index does not have, left out: {', '.join(sorted(left_out))}")
    piece = work / ".new-papers.arrow"
    write_arrow(table, piece)
    write_single_batch([root / "papers.arrow", piece], writer.path("papers.arrow"))
    piece.unlink()
    writer.written("papers.arrow")
    appended = arrow_to_table(table)
    say("wrote the paper table", finished="table")
    new_arrays = {"tfidf": _append_csr(writer, "tfidf", arrays["tfidf"]["shape"], blocks["tfidf"])}
    for n in (1, 2, 3):
        name = f"terms/{n}"
        new_arrays[name] = _append_csr(writer, name, arrays[name]["shape"], blocks[name])
        writer.link(f"{name}/terms.arrow")
    writer.link("tfidf/terms.parquet")
    _append_rows(lsa_old, assigned["lsa"], writer.path("lsa.npy"))
    _append_rows(load_npy(root / "embedding.npy"), assigned["embedding"], writer.path("embedding.npy"))
    _append_rows(load_npy(root / "area_scores.npy"), scores, writer.path("area_scores.npy"))
    for name in ("lsa.npy", "embedding.npy", "area_scores.npy"):
        writer.written(name)
    if encoded is not None:
        _append_rows(load_npy(root / "semantic.npy"), encoded, writer.path("semantic.npy"))
        writer.written("semantic.npy")
    say("wrote the vectors and term counts", finished="arrays")
    new_arrays["search"] = _merge_search(writer, counts, n_old)
    say("merged the search index", finished="search")
    _update_topics(writer, assigned["topic"])
    if TREE_FILE in manifest["files"]:
        _update_tree(writer, assigned["topic"], sp.csr_matrix(blocks["tfidf"]), assigned["embedding"])
    if "facets.json" in manifest["files"]:
        _update_facets(writer, appended)
    if MEANINGS_FILE in manifest["files"]:
        old_meanings = _read_checked(root / MEANINGS_FILE, "method_meanings").combine_chunks()
        meanings = pa.array(method_meanings(appended), type=old_meanings.type)
        write_arrow(
            pa.table({"method_meanings": pa.concat_arrays([old_meanings, meanings])}),
            writer.path(MEANINGS_FILE),
        )
        writer.written(MEANINGS_FILE)
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    report["files"].extend(dataclasses.asdict(f) for f in loaded.report.files)
    writer.path("report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    writer.written("report.json")
    for name in manifest["files"]:
        if name not in writer.files:
            writer.link(name)
    say("updated topics, tree, facets, meanings and report", finished="reductions")
    # The manifest: last, so the folder is an index only once everything else is in it.
    with_text = np.linalg.norm(assigned["lsa"], axis=1) > 0
    versions = index_versions(manifest)
    if "papers_at_fit" not in state:
        state["papers_at_fit"] = n_old
    state["added"] = int(state.get("added", 0)) + int(with_text.sum())
    state["weight_sum"] = round(
        float(state.get("weight_sum", 0.0)) + float(assigned["topic_weight"][with_text].sum()), 6
    )
    state["outliers"] = int(state.get("outliers", 0)) + int(assigned["is_outlier"][with_text].sum())
    status = refit_status(state)
    new_digest = corpus.digest_paths([Path(p) for p in paths])
    ids = papers["id"].astype("str")
    versions.append(
        {
            "version": int(versions[-1]["version"]) + 1,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "kind": "append",
            "papers_added": n_new,
            "papers": n_old + n_new,
            "rows": [n_old, n_old + n_new],
            "first_id": ids.iloc[0],
            "last_id": ids.iloc[-1],
            "digest": new_digest,
            "sources": [str(p) for p in paths],
        }
    )
    full_report = corpus.LoadReport([*_stored_report_files(report), *loaded.report.files])
    out = {
        **manifest,
        "papers": n_old + n_new,
        "arrays": {**arrays, **new_arrays},
        "corpus_digest": _content_digest([str(manifest.get("corpus_digest", "")), new_digest]),
        "sources": [*manifest.get("sources", []), *(str(p) for p in paths)],
        "report_summary": full_report.summary(),
        "skipped": int(manifest.get("skipped", 0)) + sum(f.n_skipped for f in loaded.report.files),
        "versions": versions,
        "refit": status,
        "files": dict(sorted(writer.files.items())),
    }
    if has_map(manifest):
        out["map"] = {**manifest["map"], "layout_papers": int(manifest["map"].get("layout_papers", n_old))}
    out["digest"] = manifest_digest(out)
    (work / MANIFEST).write_text(json.dumps(out, indent=2, sort_keys=False), encoding="utf-8")
    say("wrote the manifest", finished="manifest")
    return out, status, notes


def _encode_new(
    root: Path, manifest: Mapping[str, Any], new: pd.DataFrame, transform: Any
) -> np.ndarray | None:
    """The new papers' sentence embeddings, where the index keeps every paper's (``semantic.npy``): the
    topics of an index fitted in the embedding space are assigned by them. None where it keeps none."""
    if "semantic.npy" not in manifest["files"]:
        if get_representation(transform.space).external:
            raise IndexBuildError(f"{root}: its topics were fitted on semantic.npy, now missing: rebuild it")
        return None
    from dashboard.analytics.analysis import paper_texts
    from dashboard.search import semantic

    try:
        return semantic.Encoder().encode(paper_texts(new))
    except semantic.SemanticUnavailable as error:
        raise IndexBuildError(
            f"{root}: keeps every paper's sentence embedding (semantic.npy), so the new papers need "
            f"theirs: {error}"
        ) from None


def _stored_report_files(report: Mapping[str, Any]) -> list[corpus.FileReport]:
    files = []
    for entry in report["files"]:
        files.append(
            corpus.FileReport(
                **{
                    **entry,
                    "skipped": [corpus.Problem(**p) for p in entry["skipped"]],
                    "warnings": [corpus.Problem(**p) for p in entry["warnings"]],
                }
            )
        )
    return files


__all__ = [
    "AppendResult",
    "BASELINE_SAMPLE",
    "Duplicate",
    "IndexBusyError",
    "PAUSE_ENV",
    "REFIT_OUTLIER_RISE",
    "REFIT_SHARE",
    "REFIT_WEIGHT_DROP",
    "TRANSFORM_FILE",
    "append_index",
    "derive_transform",
    "describe_refit",
    "find_duplicates",
    "fit_baseline",
    "index_lock",
    "index_versions",
    "keep_model",
    "load_transform",
    "map_sample",
    "place_new",
    "recover",
    "refit_status",
    "rows_since",
    "save_transform",
    "switch",
    "title_key",
]
