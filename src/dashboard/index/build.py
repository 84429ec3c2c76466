"""A prebuilt index: the dashboard's heavy work done once, so the app opens any corpus in seconds.

    paper-dashboard index papers/ --out papers.index        # build (file by file, see dashboard.index.steps)
    streamlit run app.py -- --corpus papers.index           # the app opens it instead of the raw files

An index is a directory. Everything in it is plain data (Arrow, Parquet, NumPy ``.npy``, JSON, TOML):
nothing is pickled, so opening an index never runs code from it. Arrays and the paper table are
memory-mapped, so opening costs milliseconds per gigabyte and pages are read only when used.

Format 1 (``manifest.json`` says which; a reader refuses any other version with a clear message)::

    manifest.json          format, version, package version, corpus digest, sizes, build time, settings,
                           every file's size and SHA-256, ``digest`` (the cache key of the index) and
                           ``map`` (how the papers' ``x, y`` were laid out, `dashboard.analytics.papermap`;
                           absent
                           in an index built before the map, whose ``x, y`` are one disc per topic)
    papers.arrow           the paper table with the analysis columns (Arrow IPC file, uncompressed:
                           memory-mapped; list columns as Arrow lists, links as list<struct<url, kind>>)
    topics.parquet         topic, label, size, top_terms (list<struct<term, weight>>), representative_ids
    report.json            the load report (per file: papers read, records skipped and warnings)
    taxonomy.toml          the research-area taxonomy the areas were assigned with
    tfidf/                 TF-IDF matrix (CSR: data.npy float32, indices.npy, indptr.npy) and terms.parquet
                           (term, idf): the similarity structure behind "most similar papers"
    lsa.npy, embedding.npy per paper, the LSA vector and the topic model's embedding (float32)
    area_scores.npy        per paper, the research-area keyword scores
    fit_rows.npy           the papers the topic model was fitted on (all of them up to ``fit_size``)
    topic_tree.npz         the merge tree over the topics (dashboard.analytics.hierarchy: linkage,
    per-topic term
                           mass, sizes, centroids), so any smaller number of topics is a cut; optional:
                           an index built without it gets the same tree computed when it is opened
    method_meanings.arrow  per paper, its method names with the long form its abstract gives
                           (`extract.name_meanings`: a corpus-wide reading of every named paper's
                           abstract); optional: an index built without it gets them when opened
    terms/1, terms/2, terms/3   counts of 1-, 2- and 3-word terms per paper (CSR int32) and terms.arrow:
                           the Terms page's counts (stop words removed)
    search/                the search's inverted index: words.arrow (sorted), indptr.npy, indices.npy
                           (papers per word), odd_rows.npy (see dashboard.search.wordindex); for ranking,
                           tf.npy (uint8 per posting: weighted count) and lengths.npy (float32 per
                           paper). Both optional: an index built before them opens, and search ranks
                           by the words matched instead of BM25 (dashboard.search.ranking says so)

An index is read as untrusted data: with ``allow_pickle=False`` and Arrow readers, and checked when
opened (the parts read later, such as the Terms page's counts, when read), so a damaged or crafted
index is an IndexFormatError naming the file, never a crash:

- the manifest is bounded (`MAX_MANIFEST_BYTES`, nesting) and its fields are checked before use;
- every file it names stays inside the index (`member`: no absolute or ``..`` name is even looked
  at, no link may lead out), and has the size the manifest says;
- every array has the shape and dtype the manifest implies, and every sparse one a sound structure
  (`check_sparse`: positions in range, pointers that never decrease), one pass each, because SciPy's
  compiled code trusts them (a column past the end was a SIGSEGV);
- the paper table's text and list offsets lie inside their data (`check_arrow`: Arrow trusts them);
- the SHA-256 checksums the manifest keeps are compared only with ``verify=True`` (the disk cache
  does): hashing every file costs far more than the structural checks and grows with the index.

An index whose manifest has no checksums opens the same way.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dashboard import __version__, corpus
from dashboard.analytics import papermap, similarity
from dashboard.analytics.analysis import Analysis, analyze, paper_texts, topics_table
from dashboard.analytics.areas import (
    DEFAULT_TAXONOMY_NAME,
    Taxonomy,
    areas_from_scores,
    parse_taxonomy,
)
from dashboard.analytics.hierarchy import TopicTree, build_tree
from dashboard.analytics.representations import get as get_representation
from dashboard.filters import facet_counts
from dashboard.index import progress as stages
from dashboard.index.append import keep_model
from dashboard.index.format import (
    _STR,
    DEFAULT_FIT_SIZE,
    DEFAULT_PARTITION_SIZE,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    MEANINGS_FILE,
    SMALL_CORPUS_BYTES,
    TREE_FILE,
    IndexBuildError,
    IndexFormatError,
    IndexOutputError,
    PaperIndex,
    Progress,
    StoredModel,
    _check_dense,
    _check_positions,
    _column_order,
    _CsrWriter,
    _file_sha256,
    _listed,
    _load_npz,
    _python_lists,
    _read_checked,
    arrow_to_table,
    has_map,
    is_index,
    load_csr,
    load_npy,
    manifest_digest,
    method_meanings,
    read_arrow,
    stored_rows,
    table_to_arrow,
    write_arrow,
    write_single_batch,
    write_topics,
)
from dashboard.index.maps import TEXT_COLUMNS, AssignInputs, LocalMaps, Part, one_thread
from dashboard.schema import ANALYSIS_COLUMNS, OUTLIER_LABEL
from dashboard.system.cores import usable_cores

if TYPE_CHECKING:  # building needs scikit-learn; opening an index does not (a faster app start)
    from dashboard.analytics.topics import TopicModel
    from dashboard.text.tokens import CountedTexts


def _taxonomy_text(taxonomy: str | Path | None) -> tuple[str, str]:
    if taxonomy is None:
        text = (
            resources.files("dashboard").joinpath("data", DEFAULT_TAXONOMY_NAME).read_text(encoding="utf-8")
        )
        return text, DEFAULT_TAXONOMY_NAME
    path = Path(taxonomy)
    return path.read_text(encoding="utf-8-sig"), str(path)


def _report_duplicate_abstracts(parts: list[Part], report: corpus.LoadReport) -> None:
    """Warn of abstracts repeated across files, by the rule one `corpus.load` of all files uses
    (`readers.table.abstract_key`); each file's load already warned of repeats inside it."""
    from dashboard.readers.table import abstract_key

    first: dict[bytes, tuple[str, int]] = {}
    reports = {f.source: f for f in report.files}
    row = 0
    for part in parts:
        table = read_arrow(part.directory / "papers.arrow").select(["abstract", "source"])
        abstracts = table.column("abstract").to_pylist()
        sources = table.column("source").to_pylist()
        for abstract, source in zip(abstracts, sources, strict=True):
            row += 1
            if not abstract:
                continue
            key = abstract_key(abstract)
            seen = first.setdefault(key, (str(source), row))
            if seen[0] == source or seen[1] == row:
                continue
            file = reports.get(str(source))
            if file is not None:
                if len(file.warnings) < corpus.MAX_PROBLEMS_PER_FILE:
                    message = f"same abstract as {seen[0]} paper {seen[1]} (both kept)"
                    file.warnings.append(corpus.Problem(file.source, f"paper {row}", message))
                file.n_warnings += 1


def _unique_ids(parts: list[Part], report: corpus.LoadReport) -> np.ndarray:
    """Paper ids unique across files, as one `corpus.load` of all files makes them (``x``, ``x-2``...)."""
    ids = np.concatenate(
        [read_arrow(p.directory / "papers.arrow").column("id").to_numpy(zero_copy_only=False) for p in parts]
    ).astype(object)
    duplicated = pd.Index(ids).duplicated(keep="first")
    if not duplicated.any():
        return ids
    seen = set(ids.tolist())
    sources = np.concatenate(
        [
            read_arrow(p.directory / "papers.arrow").column("source").to_numpy(zero_copy_only=False)
            for p in parts
        ]
    )
    reports = {f.source: f for f in report.files}
    for row in np.flatnonzero(duplicated):
        n = 2
        while f"{ids[row]}-{n}" in seen:
            n += 1
        unique = f"{ids[row]}-{n}"
        seen.add(unique)
        file = reports.get(str(sources[row]))
        if file is not None:
            if len(file.warnings) < corpus.MAX_PROBLEMS_PER_FILE:
                message = f"id {ids[row]!r} already used in another file: this paper is {unique!r}"
                file.warnings.append(corpus.Problem(file.source, f"paper {row + 1}", message))
            file.n_warnings += 1
        ids[row] = unique
    return ids


def _read_rows(parts: list[Part], rows: np.ndarray, columns: list[str]) -> pd.DataFrame:
    """The given global rows (sorted) of some columns, read partition by partition."""
    frames = []
    start = 0
    for part in parts:
        local = rows[(rows >= start) & (rows < start + part.rows)] - start
        if len(local):
            table = read_arrow(part.directory / "papers.arrow").select(columns).take(pa.array(local))
            frames.append(arrow_to_table(table))
        start += part.rows
    return pd.concat(frames, ignore_index=True)


def _write_semantic(work: Path, parts: list[Part], maps: Any, say: Callable[..., None]) -> dict[str, Any]:
    """``semantic.npy``: every paper's sentence embedding (float32, unit rows), from the maps' encode
    step (in the local workers or the Dask cluster, partition by partition)."""
    from dashboard.search import semantic

    semantic.model_files()  # SemanticUnavailable (with how to install it) before any worker starts
    started = time.perf_counter()
    out = _new_dense(work / "semantic.npy", (sum(p.rows for p in parts), semantic.DIMENSIONS))
    start = 0
    for number, (part, vectors) in enumerate(zip(parts, maps.encode(parts), strict=True), 1):
        out[start : start + part.rows] = vectors
        start += part.rows
        say(f"encoded {number}/{len(parts)} partitions")
    out.flush()
    del out
    return {"model": semantic.MODEL_ID, "dimensions": semantic.DIMENSIONS,
            "seconds": round(time.perf_counter() - started, 2)}  # fmt: skip


def _vocabularies(parts: list[Part], n_papers: int) -> dict[int, pa.Array]:
    """The Terms page's vocabularies: terms of 1, 2 and 3 words in at least min_df abstracts (reduce)."""
    from dashboard.index import steps as indexing

    tables = []
    for part in parts:
        counts = _load_npz(part.directory / "abstract_counts.npz")
        frequency = np.bincount(counts.indices, minlength=counts.shape[1])
        terms = read_arrow(part.directory / "vocabulary.arrow").column("term")
        used = np.flatnonzero(frequency > 0)
        tables.append(
            pa.table({"term": terms.take(pa.array(used)), "df": pa.array(frequency[used], pa.int64())})
        )
    total = pa.concat_tables(tables).group_by("term").aggregate([("df", "sum")])
    terms = total.column("term")
    spaces = np.asarray(pc.count_substring(terms, " "))
    frequency = np.asarray(total.column("df_sum"))
    min_df = indexing.term_counts_min_df(n_papers)
    return {
        n: indexing.select_vocabulary(
            terms.filter(pa.array(spaces == n - 1)), frequency[spaces == n - 1], min_df
        )
        for n in indexing.TERM_NGRAMS
    }


def _fit(
    parts: list[Part],
    n_papers: int,
    settings: dict[str, Any],
    taxonomy: Taxonomy,
    space: str = "lsa",
    vectors: np.ndarray | None = None,
) -> tuple[TopicModel, np.ndarray]:
    """Step 2: the topic model on a seeded sample (all papers up to fit_size), as `analyze` fits it.

    The sample's texts are not read again: the count map has counted their terms and area scores
    (`_sample_counts`), and the model fitted on those is the one the texts give (the same TF-IDF to the
    bit, `tokens.CountedTexts`). Only a sample whose every term is a stop word is fitted on its texts.
    ``space`` is the representation (`dashboard.search.topicspace`); one that needs embeddings takes
    the sample's rows of ``vectors`` (every paper's, from the encode map).
    """
    from dashboard.analytics.topics import TopicModel
    from dashboard.text.tokens import NoTermsLeft

    fit_size = int(settings["fit_size"])
    if n_papers <= fit_size:
        rows = np.arange(n_papers)
    else:
        rng = np.random.default_rng(settings["random_state"])
        rows = np.sort(rng.choice(n_papers, fit_size, replace=False))

    def model() -> TopicModel:
        return TopicModel(
            n_topics=settings["n_topics"],
            method="kmeans",
            random_state=settings["random_state"],
            taxonomy=taxonomy,
            representation=space,
        )

    sample_vectors = np.asarray(vectors[rows]) if vectors is not None else None
    counted, scores = _sample_counts(parts, rows)
    try:
        return model().fit(None, counts=counted, area_scores=scores, vectors=sample_vectors), rows
    except NoTermsLeft:
        texts = paper_texts(_read_rows(parts, rows, TEXT_COLUMNS))
        return model().fit(texts, vectors=sample_vectors), rows


def _sample_counts(parts: list[Part], rows: np.ndarray) -> tuple[CountedTexts, np.ndarray]:
    """The fit sample's topic-text counts and area scores, from the count map's files of each partition."""
    from dashboard.index import steps as indexing

    blocks = []
    scores = []
    start = 0
    for part in parts:
        local = rows[(rows >= start) & (rows < start + part.rows)] - start
        start += part.rows
        if not len(local):
            continue
        vocabulary = read_arrow(part.directory / "vocabulary.arrow").column("term").combine_chunks()
        counts = _load_npz(part.directory / "topic_counts.npz")
        blocks.append((vocabulary, counts[local]))
        scores.append(np.load(part.directory / "area_scores.npy")[local])
    return indexing.counted_sample(blocks), np.concatenate(scores)


def _merge_words(parts: list[Part], out: Path) -> dict[str, Any]:
    """Reduce: one inverted index from the partitions': a sorted union of words, posting lists joined.

    Each word's papers are placed partition after partition (rows grow), so nothing is sorted again
    and memory stays at the output plus one partition.
    """
    vocabularies = [read_arrow(p.directory / "words.arrow").column("word").combine_chunks() for p in parts]
    words = pc.unique(pa.chunked_array(vocabularies, type=_STR).combine_chunks())
    words = words.take(pc.sort_indices(words))
    global_words = [np.asarray(pc.index_in(v, value_set=words), dtype=np.int64) for v in vocabularies]
    lengths = np.zeros(len(words), dtype=np.int64)
    for part, mapped in zip(parts, global_words, strict=True):
        with np.load(part.directory / "postings.npz", allow_pickle=False) as postings:
            lengths[mapped] += np.diff(postings["indptr"])
    nnz = int(lengths.sum())
    index_type = np.int32 if nnz < 2**31 else np.int64
    indptr = np.zeros(len(words) + 1, dtype=index_type)
    np.cumsum(lengths, out=indptr[1:])
    directory = out / "search"
    directory.mkdir()
    indices = _new_dense(directory / "indices.npy", (nnz,), np.int32)
    frequencies = _new_dense(directory / "tf.npy", (nnz,), np.uint8)
    lengths_out = _new_dense(directory / "lengths.npy", (sum(p.rows for p in parts),), np.float32)
    cursor = indptr[:-1].astype(np.int64)
    start = 0
    odd = []
    for part, mapped in zip(parts, global_words, strict=True):
        with np.load(part.directory / "postings.npz", allow_pickle=False) as postings:
            local_indptr, local_indices = postings["indptr"], postings["indices"]
            local_tf, local_lengths = postings["tf"], postings["lengths"]
        counts = np.diff(local_indptr)
        entry_word = np.repeat(mapped, counts)
        within = np.arange(len(local_indices)) - np.repeat(local_indptr[:-1], counts)
        indices[cursor[entry_word] + within] = local_indices + start
        frequencies[cursor[entry_word] + within] = local_tf
        lengths_out[start : start + part.rows] = local_lengths
        cursor[mapped] += counts
        odd.append(np.load(part.directory / "odd_rows.npy") + start)
        start += part.rows
    for written in (indices, frequencies, lengths_out):
        written.flush()
    del indices, frequencies, lengths_out
    write_arrow(pa.table({"word": words}), directory / "words.arrow")
    np.save(directory / "indptr.npy", indptr)
    np.save(directory / "odd_rows.npy", np.concatenate(odd).astype(np.int64))
    return {"shape": [len(words), start], "nnz": nnz}


def _new_dense(path: Path, shape: tuple[int, ...], dtype: type = np.float32) -> np.memmap:
    """A new .npy file of ``shape``, written through a memory map (rows filled in as they come)."""
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)


def build_index(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    n_topics: int | str = "auto",
    taxonomy: str | Path | None = None,
    random_state: int = 0,
    fit_size: int = DEFAULT_FIT_SIZE,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    workers: int | None = None,
    dask: str | None = None,
    semantic: bool = False,
    representation: str = "auto",
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build an index of the corpus at ``paths`` into the directory ``out``; returns its manifest.

    The topics are found in the space ``representation`` names, by the rule every caller shares
    (`dashboard.search.topicspace`: ``auto`` is the sentence embedding up to 2,000 papers where the
    embedding model is installed, LSA above). A space that needs embeddings fits every paper (at
    most ``fit_size``; ``auto`` takes LSA beyond it) and stores the vectors it used.

    With ``semantic`` (or an embedding space) the index also holds every paper's sentence embedding
    (``semantic.npy``, `dashboard.search.semantic`), encoded once by an
    encode map (in the local workers, or on the Dask cluster), so "papers like this" in that space
    (``search --like --space minilm``) reads it instead of encoding the corpus again.

    Files are counted in parallel (``workers``, default: the CPUs, one for a corpus under 8 MB), the
    topic model is fitted on at most ``fit_size`` papers and every other paper is assigned to its
    topics. With ``dask`` (a scheduler address ``tcp://host:8786``, or ``local:N`` for a LocalCluster of
    N worker processes) the read, count and assign maps run as tasks of that cluster instead
    (:mod:`dashboard.index.distributed`); the index is the same file for file. ``paths`` and ``out`` may be
    fsspec URLs (:mod:`dashboard.index.locations`). ``out`` is replaced only when it is an index already (or
    absent/empty); the new index is built in a temporary folder and appears there complete or not at
    all. Call it under ``if __name__ == "__main__":`` in a script: worker processes are started with
    ``spawn``.
    """
    from dashboard.index import locations

    started = time.perf_counter()
    phases: dict[str, float] = {}
    clock = [started]

    def say(message: str, finished: str | None = None) -> None:
        now = time.perf_counter()
        if finished:  # the seconds each step took go in the manifest
            phases[finished] = round(now - clock[0], 2)
            clock[0] = now
        if progress is not None:
            progress(stages.stamp(now - started, message))

    remote_out = locations.is_url(str(out))
    target: str | Path = str(out) if remote_out else Path(out)
    _check_output(target)
    remote_in = any(locations.is_url(str(p)) for p in paths)
    sources: list[str | Path] = [str(p) if locations.is_url(str(p)) else Path(p) for p in paths]
    items = locations.input_files(sources) if remote_in else corpus.input_files(sources)
    if workers is None:
        # Starting a worker process costs about two seconds: worth it only for a corpus of some size.
        size = sum(item.stat().st_size for item in items if isinstance(item, Path) and item.is_file())
        workers = min(usable_cores(), 4) if size >= SMALL_CORPUS_BYTES else 1
    tax_text, tax_name = _taxonomy_text(taxonomy)
    tax = parse_taxonomy(tax_text, tax_name)
    settings = {
        "n_topics": n_topics,
        "random_state": random_state,
        "fit_size": fit_size,
        "representation": representation,
    }
    if isinstance(target, Path):  # next to the target: the final rename stays on one filesystem
        work = target.with_name(f".{target.name}.partial-{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="paper-dashboard-index-")) / "index"
    (work / "parts").mkdir(parents=True)
    maps: Any = None
    try:
        if dask:
            from dashboard.index.distributed import DaskMaps

            maps = DaskMaps(dask, say)
        else:
            maps = LocalMaps(workers)
        say(stages.READ.opening)
        report, parts = maps.read(items, work / "parts", partition_size)
        n_papers = sum(p.rows for p in parts)
        if n_papers < 2:
            raise IndexBuildError(f"{n_papers} papers read ({report.summary()}): an index needs at least two")
        # The count map runs in the workers while this process checks ids and abstracts; the topic
        # model is then fitted on what the map counted (each text is read and tokenised once).
        maps.start_counting(parts, tax_text, tax_name)
        say(
            f"{stages.COUNT.opening} of {n_papers:,} papers; "
            f"fitting topics on {min(n_papers, fit_size):,} of them",
            finished=stages.READ.phase,
        )
        ids = _unique_ids(parts, report)
        _report_duplicate_abstracts(parts, report)
        maps.finish_counting()
        space = _space(n_papers, representation, fit_size)
        encoded = None
        if get_representation(space).external:  # the fit needs every paper's embedding first
            say(f"encoding {n_papers:,} papers' texts with the sentence-embedding model")
            encoded_facts = _write_semantic(work, parts, maps, say)
            encoded = load_npy(work / "semantic.npy")
        with one_thread():
            model, fit_rows = _fit(parts, n_papers, settings, tax, space, encoded)
        maps.finish_words()
        say(stages.WRITE.opening, finished=stages.COUNT.phase)
        with one_thread():
            manifest = _write_index(
                work, parts, ids, model, fit_rows, tax, report, maps, random_state, encoded
            )
            manifest["representation"] = space
            manifest["refit"] = keep_model(work, manifest, model, encoded)  # the model's parts, for appends
        if encoded is not None:
            manifest["semantic"] = encoded_facts
        elif semantic:
            say("encoding every paper's text with the sentence-embedding model")
            manifest["semantic"] = _write_semantic(work, parts, maps, say)
        maps.close()
        maps = None
        manifest.update(
            {
                "corpus_digest": locations.digest(items) if remote_in else corpus.digest_paths(sources),
                "sources": [str(p) for p in sources],
                "taxonomy": tax_name,
                "settings": settings,
                "report_summary": report.summary(),
                "skipped": sum(f.n_skipped for f in report.files),
            }
        )
        shutil.rmtree(work / "parts")
        (work / "taxonomy.toml").write_text(tax_text, encoding="utf-8")
        say(stages.CHECKSUMS.opening, finished=stages.WRITE.phase)
        files = [file for file in sorted(work.rglob("*")) if file.is_file()]
        with ThreadPoolExecutor(max_workers=usable_cores()) as pool:  # hashlib lets go of the GIL
            digests = list(pool.map(_file_sha256, files))
        manifest["files"] = {
            str(file.relative_to(work)): {"bytes": file.stat().st_size, "sha256": digest}
            for file, digest in zip(files, digests, strict=True)
        }
        say(stages.DONE, finished=stages.CHECKSUMS.phase)
        manifest["phases"] = phases
        manifest["build_seconds"] = round(time.perf_counter() - started, 2)
        manifest["built_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        manifest["built_with"] = f"dask {dask}" if dask else f"{workers} local process{'es' * (workers > 1)}"
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "package_version": __version__,
            **manifest,
        }
        manifest["digest"] = manifest_digest(manifest)
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=False), encoding="utf-8")
        if isinstance(target, Path):
            locations.replace_directory(work, target)
        else:
            say(f"uploading to {target}")
            locations.publish(work, target, MANIFEST)
            shutil.rmtree(work.parent, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work if isinstance(target, Path) else work.parent, ignore_errors=True)
        raise
    finally:
        if maps is not None:
            maps.close()
    say(f"index written to {target}")
    return manifest


def _space(n_papers: int, requested: str, fit_size: int) -> str:
    """The representation the topics are fitted in (`topicspace.space_for`). An embedding space fits
    every paper (the assign map places the papers beyond the fit sample by their TF-IDF alone): ``auto``
    takes LSA beyond ``fit_size``, an explicit request is refused there."""
    from dashboard.search import topicspace

    try:
        space = topicspace.space_for(n_papers, requested)
    except ValueError as error:
        raise IndexBuildError(str(error)) from None
    if get_representation(space).external and n_papers > fit_size:
        if requested != "auto":
            raise IndexBuildError(
                f"the {space} representation fits every paper: {n_papers:,} papers is above the fit sample "
                f"of {fit_size:,} (raise --fit-size, or leave --representation at auto)"
            )
        space = "lsa"
    return space


def _check_output(target: str | Path) -> None:
    """IndexOutputError when ``target`` exists and is neither an index nor an empty folder."""
    from dashboard.index import locations

    if isinstance(target, Path):
        if target.exists() and not is_index(target) and (not target.is_dir() or any(target.iterdir())):
            raise IndexOutputError(f"{target}: exists and is not an index; choose another --out or remove it")
        return
    if not locations.exists(target):
        return
    try:
        is_ours = json.loads(locations.read_text(target, MANIFEST)).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        is_ours = False
    if not is_ours:
        raise IndexOutputError(f"{target}: exists and is not an index; choose another --out or remove it")


def _write_index(
    work: Path,
    parts: list[Part],
    ids: np.ndarray,
    model: TopicModel,
    fit_rows: np.ndarray,
    taxonomy: Taxonomy,
    report: corpus.LoadReport,
    maps: Any,
    random_state: int = 0,
    encoded: np.ndarray | None = None,
) -> dict[str, Any]:
    """Step 3 and the writes: assign every partition (``maps.assign``), then the map, the table and the
    reductions. ``encoded`` are every paper's sentence embeddings where the topics were found in them:
    the map is drawn in the topics' space."""
    from dashboard.index import steps as indexing

    n_papers = len(ids)
    whole = len(fit_rows) == n_papers  # the model saw every paper: take its results as they are
    transform = None if whole else indexing.TopicTransform.from_model(model)
    terms = model.terms_
    idf = model.vectorizer_.idf_ if model.vectorizer_ is not None else np.ones(len(terms))
    vocabularies = _vocabularies(parts, n_papers)
    lsa = _new_dense(work / "lsa.npy", (n_papers, model.lsa_.shape[1]))
    embedding = _new_dense(work / "embedding.npy", (n_papers, model.embedding_.shape[1]))
    scores = _new_dense(work / "area_scores.npy", (n_papers, len(taxonomy.areas)))
    doc_topic = np.zeros((n_papers, model.doc_topic_.shape[1]), dtype=np.float64)
    topic = np.zeros(n_papers, dtype=np.int64)
    weight = np.zeros(n_papers, dtype=np.float64)
    outlier = np.zeros(n_papers, dtype=bool)
    tfidf_writer = _CsrWriter(work / "tfidf", len(terms), np.float32)
    term_writers = {
        n: _CsrWriter(work / "terms" / str(n), len(vocabularies[n]), np.int32) for n in indexing.TERM_NGRAMS
    }
    in_sample = np.zeros(n_papers, dtype=bool)
    in_sample[fit_rows] = True
    sample_position = np.full(n_papers, -1, dtype=np.int64)
    sample_position[fit_rows] = np.arange(len(fit_rows))
    shared = AssignInputs(vocabularies, np.asarray(terms, dtype=object), np.asarray(idf), transform)
    start = 0
    for part, blocks in zip(parts, maps.assign(parts, shared), strict=True):
        rows = np.arange(start, start + part.rows)
        for n in indexing.TERM_NGRAMS:
            term_writers[n].append(blocks[f"terms/{n}"])
        scores[rows] = np.load(part.directory / "area_scores.npy")
        if whole:
            tfidf_writer.append(model.tfidf_[rows])
        else:
            tfidf_writer.append(blocks["tfidf"])
            assigned = blocks["assigned"]
            lsa[rows] = assigned["lsa"]
            embedding[rows] = assigned["embedding"]
            doc_topic[rows] = assigned["doc_topic"]
            topic[rows] = assigned["topic"]
            weight[rows] = assigned["topic_weight"]
            outlier[rows] = assigned["is_outlier"]
        start += part.rows
    # The fitted papers keep exactly what the model found for them.
    lsa[fit_rows] = model.lsa_
    embedding[fit_rows] = model.embedding_
    doc_topic[fit_rows] = model.doc_topic_
    topic[fit_rows] = model.labels_
    weight[fit_rows] = model.weights_
    outlier[fit_rows] = model.is_outlier_
    if model.area_scores_ is not None:
        scores[fit_rows] = model.area_scores_
    np.save(work / "fit_rows.npy", fit_rows.astype(np.int64))
    # The map of the vectors the topics were found in (`dashboard.analytics.papermap`): for a corpus that
    # fits, what `analyze` draws.
    map_started = time.perf_counter()
    space = get_representation(getattr(model, "representation_", "lsa"))
    coords = papermap.layout(space.base(lsa, encoded) if space.external else lsa, random_state=random_state)
    map_facts = {
        "method": papermap.METHOD,
        "random_state": random_state,
        "fit_papers": int(min(papermap.DEFAULT_FIT_SIZE, int(np.isfinite(coords[:, 0]).sum()))),
        "seconds": round(time.perf_counter() - map_started, 2),
    }
    # Let go of what the rest does not need before the table is joined (gigabytes at a million papers).
    for array in (lsa, embedding):
        array.flush()
    del lsa, embedding, doc_topic
    topics = topics_table(model, ids[fit_rows], topic)
    write_topics(topics, work / "topics.parquet")
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    arrays = {"tfidf": tfidf_writer.finish()}
    arrays.update({f"terms/{n}": writer.finish() for n, writer in term_writers.items()})
    tree = build_tree(
        topic,
        load_csr(work / "tfidf", arrays["tfidf"]["shape"]),
        load_npy(work / "embedding.npy"),
        int(model.n_topics_),
        np.asarray(terms, dtype=object),
    )
    _write_tree(tree, work / TREE_FILE)
    for n in indexing.TERM_NGRAMS:
        write_arrow(pa.table({"term": vocabularies[n]}), work / "terms" / str(n) / "terms.arrow")
    pq.write_table(
        pa.table({"term": pa.array(terms.astype(str), _STR), "idf": pa.array(idf, pa.float64())}),
        work / "tfidf" / "terms.parquet",
    )
    facets = _write_papers(
        work / "papers.arrow", parts, ids, taxonomy, scores, topic, labels, weight, outlier, coords
    )
    _write_facets(facets, work / "facets.json")
    _write_meanings(work / "papers.arrow", work / MEANINGS_FILE)
    arrays["search"] = _merge_words(parts, work)
    scores.flush()
    report_json = {"files": [dataclasses.asdict(f) for f in report.files]}
    (work / "report.json").write_text(json.dumps(report_json, ensure_ascii=False, indent=1), encoding="utf-8")
    return {
        "papers": n_papers,
        "topics": int(model.n_topics_),
        "fit_papers": len(fit_rows),
        "tfidf_terms": len(terms),
        "arrays": arrays,
        "map": map_facts,
    }


def _write_meanings(papers_path: Path, path: Path) -> None:
    """`method_meanings` of the written paper table, stored: an app opening a large index then reads
    no abstract to count its method names (at a million papers, 5 s and most of the abstracts' pages)."""
    papers = arrow_to_table(read_arrow(papers_path).select(["abstract_clean", "method_names"]))
    meanings = pa.array(method_meanings(papers), type=pa.list_(_STR))
    write_arrow(pa.table({"method_meanings": meanings}), path)


def read_meanings(opened: PaperIndex) -> list[list[str]] | None:
    """The stored `method_meanings` of the index's papers; None for an index built before they were."""
    if MEANINGS_FILE not in opened.manifest["files"]:
        return None
    path = opened.path / MEANINGS_FILE
    column = _read_checked(path, "method_meanings")
    if len(column) != len(opened.papers) or not pa.types.is_list(column.type):
        found = f"{len(column):,} rows of {column.type} for {len(opened.papers):,} papers"
        raise IndexFormatError(f"{path}: {found}; rebuild the index")
    try:
        return cast("list[list[str]]", _python_lists(column).tolist())
    except (ValueError, pa.ArrowException) as error:  # text that is not UTF-8
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None


def _write_tree(tree: TopicTree, path: Path) -> None:
    """The topic tree's arrays (its terms are the TF-IDF terms, kept in tfidf/terms.parquet)."""
    np.savez(
        path,
        linkage=tree.linkage,
        mass=tree.mass.astype(np.float32),
        sizes=tree.sizes,
        centroids=tree.centroids.astype(np.float32),
    )


def read_tree(opened: PaperIndex) -> TopicTree | None:
    """The topic tree stored in the index; None for an index built before trees were stored.

    (`dashboard.analytics.analysis.topic_tree` computes the same tree from what any index holds.)
    """
    if TREE_FILE not in opened.manifest["files"]:
        return None
    path = opened.path / TREE_FILE
    terms = np.asarray(opened.analysis.model.terms_, dtype=object)
    try:
        with np.load(path, allow_pickle=False) as stored:
            tree = TopicTree(
                linkage=stored["linkage"],
                mass=stored["mass"].astype(np.float64),
                sizes=stored["sizes"],
                centroids=stored["centroids"].astype(np.float64),
                terms=terms,
            )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None
    problem = _tree_problem(tree, len(terms))
    if problem:
        raise IndexFormatError(f"{path}: {problem}: the index is damaged; rebuild it")
    return tree


def _tree_problem(tree: TopicTree, n_terms: int) -> str | None:
    """What is unsound in a stored topic tree (None: nothing): its parts must agree on the number of
    topics, and each merge must join two groups that exist by then (SciPy's linkage format)."""
    n = len(tree.sizes)
    if tree.sizes.ndim != 1 or tree.sizes.dtype.kind not in "iu":
        return "the topic sizes are not one count per topic"
    if tree.mass.shape != (n, n_terms):
        return f"term mass of shape {tree.mass.shape} for {n} topics and {n_terms:,} terms"
    if tree.centroids.ndim != 2 or len(tree.centroids) != n:
        return f"{len(tree.centroids)} centroids for {n} topics"
    if tree.linkage.shape != (max(n - 1, 0), 4) or tree.linkage.dtype.kind != "f":
        return f"a linkage of shape {tree.linkage.shape} for {n} topics"
    if len(tree.linkage):
        children = tree.linkage[:, :2]
        step = np.arange(len(tree.linkage))[:, None]
        if not (np.isfinite(children).all() and (children >= 0).all() and (children < n + step).all()):
            return "a merge of groups that do not exist"
    return None


def _write_facets(facets: Mapping[str, Mapping[Any, int]], path: Path) -> None:
    """Facet counts as JSON: per key, [value, papers] pairs, most papers first (ties by value)."""
    ordered = {
        key: sorted(([_plain(v), n] for v, n in counts.items()), key=lambda pair: (-pair[1], str(pair[0])))
        for key, counts in facets.items()
    }
    path.write_text(json.dumps(ordered, ensure_ascii=False), encoding="utf-8")


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _write_papers(
    path: Path,
    parts: list[Part],
    ids: np.ndarray,
    taxonomy: Taxonomy,
    scores: np.ndarray,
    topic: np.ndarray,
    labels: Mapping[int, str],
    weight: np.ndarray,
    outlier: np.ndarray,
    coords: np.ndarray,
) -> dict[str, dict[Any, int]]:
    """The paper table with the analysis columns, written partition by partition (one schema for all).

    Returns the sidebar's facet counts, summed over the partitions (each counts a paper once).
    """
    facets: dict[str, dict[Any, int]] = {}
    names: list[str] = []
    for part in parts:
        schema = pa.ipc.open_file(pa.memory_map(str(part.directory / "papers.arrow"))).schema
        names.extend(n for n in schema.names if n not in names)
    analysis_columns = ["topic", "topic_label", "topic_weight", "is_outlier", "areas", "x", "y"]
    columns = _column_order([n for n in names if n not in analysis_columns])
    start = 0
    for part in parts:
        rows = slice(start, start + part.rows)
        papers = arrow_to_table(read_arrow(part.directory / "papers.arrow"))
        papers["id"] = pd.Series(ids[rows], dtype="str")
        papers = papers.assign(
            topic=topic[rows],
            topic_label=pd.Series([labels.get(int(t), OUTLIER_LABEL) for t in topic[rows]], dtype="str"),
            topic_weight=weight[rows],
            is_outlier=outlier[rows],
            areas=pd.Series(areas_from_scores(np.asarray(scores[rows]), taxonomy), dtype=object),
            x=np.round(coords[rows, 0], 4),
            y=np.round(coords[rows, 1], 4),
        )
        for key, counts in facet_counts(papers).items():
            total = facets.setdefault(key, {})
            for value, count in counts.items():
                total[value] = total.get(value, 0) + int(count)
        write_arrow(table_to_arrow(papers, [*columns, *analysis_columns]), part.directory / "table.arrow")
        start += part.rows
    write_single_batch([p.directory / "table.arrow" for p in parts], path)
    return facets


# ------------------------------------------------------------------------------------------ refitting


def refit(opened: PaperIndex, n_topics: int, *, chunk: int = 100_000) -> Analysis:
    """The index's papers under another number of topics, without rereading the corpus.

    Up to ``fit_size`` papers this is `analysis.analyze` itself. Beyond, the model is refitted on the
    index's sample and every paper is assigned from the stored TF-IDF rows and area scores (the same
    vocabulary: the same sample and settings give the same vectoriser), as the build does.
    """
    from dashboard.analytics.topics import TopicModel
    from dashboard.index import steps as indexing

    settings = opened.manifest["settings"]
    taxonomy = opened.analysis.taxonomy
    papers = opened.papers
    base_columns = [c for c in papers.columns if c not in ANALYSIS_COLUMNS]
    # The map does not depend on the number of topics: an index with one keeps it (`has_map`).
    kept = papers[["x", "y"]].to_numpy(dtype=np.float64) if has_map(opened.manifest) else None
    space = str(opened.manifest.get("representation", "lsa"))
    if int(opened.manifest["fit_papers"]) == len(papers):
        return analyze(
            papers[base_columns],
            n_topics=n_topics,
            taxonomy=taxonomy,
            random_state=settings["random_state"],
            coordinates=kept,
            representation=space,
            vectors=opened.analysis.model.semantic_ if get_representation(space).external else None,
        )
    if space != "lsa":
        raise IndexFormatError(f"{opened.path}: topics in the {space} space fit every paper; rebuild it")
    _listed(opened.path, opened.manifest, ["fit_rows.npy", "area_scores.npy"])
    fit_rows = np.asarray(load_npy(opened.path / "fit_rows.npy"))
    _check_dense(opened.path / "fit_rows.npy", fit_rows, (None,), "i")
    _check_positions(opened.path / "fit_rows.npy", fit_rows, len(papers), "papers")
    sample = papers.iloc[fit_rows]
    model = TopicModel(
        n_topics=n_topics, method="kmeans", random_state=settings["random_state"], taxonomy=taxonomy
    )
    model.fit(paper_texts(sample))
    stored = cast(StoredModel, opened.analysis.model)  # an opened index holds a StoredModel
    if not np.array_equal(np.asarray(model.terms_, dtype=object), np.asarray(stored.terms_, dtype=object)):
        raise RuntimeError(
            "the refitted vocabulary differs from the index's: rebuild the index with --topics"
        )
    transform = indexing.TopicTransform.from_model(model)
    scores = stored_rows(opened.path / "area_scores.npy", len(papers))
    n_papers = len(papers)
    embedding = np.zeros((n_papers, model.embedding_.shape[1]), dtype=np.float32)
    doc_topic = np.zeros((n_papers, model.doc_topic_.shape[1]), dtype=np.float64)
    topic = np.zeros(n_papers, dtype=np.int64)
    weight = np.zeros(n_papers, dtype=np.float64)
    outlier = np.zeros(n_papers, dtype=bool)
    for start in range(0, n_papers, chunk):
        rows = slice(start, start + chunk)
        assigned = transform.assign(stored.tfidf_[rows], np.asarray(scores[rows]))
        embedding[rows], doc_topic[rows] = assigned["embedding"], assigned["doc_topic"]
        topic[rows], weight[rows], outlier[rows] = (
            assigned["topic"],
            assigned["topic_weight"],
            assigned["is_outlier"],
        )
    embedding[fit_rows], doc_topic[fit_rows] = model.embedding_, model.doc_topic_
    topic[fit_rows], weight[fit_rows], outlier[fit_rows] = model.labels_, model.weights_, model.is_outlier_
    coords = kept if kept is not None else similarity.paper_map(embedding, topic, doc_topic)
    ids = papers["id"].astype("str").to_numpy(dtype=object)
    topics = topics_table(model, ids[fit_rows], topic)
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    table = papers.assign(
        topic=topic,
        topic_label=pd.Series(
            [labels.get(int(t), OUTLIER_LABEL) for t in topic], index=papers.index, dtype="str"
        ),
        topic_weight=weight,
        is_outlier=outlier,
        x=np.round(coords[:, 0], 4),
        y=np.round(coords[:, 1], 4),
    )
    refitted = StoredModel(
        tfidf_=stored.tfidf_,
        lsa_=stored.lsa_,
        embedding_=embedding,
        terms_=stored.terms_,
        idf_=stored.idf_,
        n_topics_=model.n_topics_,
        topic_labels_=list(model.topic_labels_),
    )
    return Analysis(table, topics, refitted, taxonomy, opened.analysis.positions)  # type: ignore[arg-type]
