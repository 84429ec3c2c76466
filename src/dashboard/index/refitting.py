"""``index --refit --to INDEX``: fit an index's topics again over all its papers, old topic ids mapped.

An index that grew by appends (`dashboard.index.append`) keeps the topics fitted on the papers it was
built with. When `append.refit_status` says a refit is due, `refit_index` builds the index again from
its own paper table (the build's steps, its settings and taxonomy: `build.build_index`), so the
topics, the vocabulary, the vectors and the map are fitted over every paper, and then maps each old
topic id to a new one, so renamed topics and anything that refers to a topic id (a reading list's
notes, a saved search's ``topic=`` filter) carry over:

- **by papers** (first choice): an old topic goes to the new topic that holds most of its papers
  (``paper_share``: the share of them it holds);
- **by top terms** (where the old topic's papers are all outliers now): the new topic whose top
  terms overlap the old one's most (Jaccard of the `MAPPING_TERMS` first terms, ``term_overlap``).

The mapping is kept in the manifest (``topic_mapping``: one entry per refit, newest last, with the
old and new labels), the versions gain a "refit" entry, and the refit advice starts again from zero.
The refit holds the index's lock (`append.index_lock`) and switches the new index in as an append
does, so a killed refit leaves the index as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from dashboard.index import append
from dashboard.index.format import (
    MANIFEST,
    _file_sha256,
    _read_topics,
    load_npy,
    manifest_digest,
    read_arrow,
    read_manifest,
)
from dashboard.schema import ANALYSIS_COLUMNS

MAPPING_TERMS = 10

Progress = Callable[[str], None]


def topic_mapping(
    old: pd.DataFrame, new: pd.DataFrame, old_topics: pd.DataFrame, new_topics: pd.DataFrame
) -> dict[str, Any]:
    """Old topic id -> new topic id, by the papers they share (else by top terms).

    ``old`` and ``new`` hold ``id`` and ``topic`` per paper (-1: outlier); ``old_topics`` and
    ``new_topics`` are the topics tables (``topic``, ``label``, ``top_terms``).

    >>> papers = pd.DataFrame({"id": ["a", "b", "c"], "topic": [0, 0, 1]})
    >>> moved = pd.DataFrame({"id": ["a", "b", "c"], "topic": [1, 1, 0]})
    >>> terms = [[("x", 1.0)], [("y", 1.0)]]
    >>> table = pd.DataFrame({"topic": [0, 1], "label": ["x", "y"], "top_terms": terms})
    >>> topic_mapping(papers, moved, table, table)["old_to_new"]
    {'0': 1, '1': 0}
    """
    joined = old[["id", "topic"]].merge(new[["id", "topic"]], on="id", suffixes=("_old", "_new"))
    joined = joined[(joined["topic_old"] >= 0) & (joined["topic_new"] >= 0)]
    counts = joined.groupby(["topic_old", "topic_new"]).size()
    old_sizes = old.loc[old["topic"] >= 0].groupby("topic").size()
    terms_new = {
        int(t): {term for term, _ in terms[:MAPPING_TERMS]}
        for t, terms in zip(new_topics["topic"], new_topics["top_terms"], strict=True)
        if t >= 0
    }
    labels_old = dict(zip(old_topics["topic"], old_topics["label"], strict=True))
    labels_new = dict(zip(new_topics["topic"], new_topics["label"], strict=True))
    old_to_new: dict[str, int] = {}
    paper_share: dict[str, float] = {}
    term_overlap: dict[str, float] = {}
    how: dict[str, str] = {}
    for topic, terms in zip(old_topics["topic"], old_topics["top_terms"], strict=True):
        if topic < 0:
            continue
        key = str(int(topic))
        words = {term for term, _ in terms[:MAPPING_TERMS]}
        overlaps = {t: len(words & w) / max(len(words | w), 1) for t, w in terms_new.items()}
        best_terms = max(overlaps, key=lambda t: (overlaps[t], -t)) if overlaps else -1
        if topic in counts.index.get_level_values(0):
            shared = counts.loc[topic]
            best = int(shared.idxmax())
            old_to_new[key] = best
            paper_share[key] = round(float(shared.max()) / float(old_sizes.get(topic, 1)), 4)
            how[key] = "papers"
        elif best_terms >= 0:
            old_to_new[key] = int(best_terms)
            paper_share[key] = 0.0
            how[key] = "terms"
        else:
            continue
        term_overlap[key] = round(float(overlaps.get(old_to_new[key], 0.0)), 4)
    return {
        "old_to_new": old_to_new,
        "paper_share": paper_share,
        "term_overlap": term_overlap,
        "by": how,
        "labels": {
            key: [str(labels_old.get(int(key), "")), str(labels_new.get(new_id, ""))]
            for key, new_id in old_to_new.items()
        },
    }


def describe_mapping(mapping: Mapping[str, Any], limit: int = 10) -> str:
    """Lines for people: how many old topics map to a new one, and the first few, weakest first."""
    old_to_new = mapping.get("old_to_new", {})
    shares = mapping.get("paper_share", {})
    lines = [
        f"{len(old_to_new)} old topics mapped to {len(set(old_to_new.values()))} new ones "
        f"(from {mapping.get('from_topics', '?')} to {mapping.get('to_topics', '?')} topics)"
    ]
    for key in sorted(old_to_new, key=lambda k: shares.get(k, 0.0))[:limit]:
        old_label, new_label = mapping.get("labels", {}).get(key, ["", ""])
        by = mapping.get("by", {}).get(key, "papers")
        lines.append(
            f"  topic {key} {old_label!r} -> {old_to_new[key]} {new_label!r} "
            f"({shares.get(key, 0.0) * 100:.0f} % of its papers, by {by})"
        )
    return "\n".join(lines)


def refit_index(index: str | Path, *, wait: float = 0.0, progress: Progress | None = None) -> dict[str, Any]:
    """Fit the topics of the index at ``index`` again over all its papers; returns the new manifest.

    The manifest's ``topic_mapping`` (newest last) says where each old topic id went. Raises
    `append.IndexBusyError` when another append or refit holds the index.
    """
    from dashboard.index.build import build_index

    started = time.perf_counter()

    def say(message: str) -> None:
        if progress is not None:
            progress(f"{time.perf_counter() - started:7.1f} s  {message}")

    target = Path(index)
    with append.index_lock(target, "a refit", wait):
        append.recover(target)
        old = read_manifest(target)
        work = target.with_name(f".{target.name}.refit-{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        (work / "input").mkdir(parents=True)
        try:
            table = read_arrow(target / "papers.arrow")
            old_papers = table.select(["id", "topic"]).to_pandas()
            base = table.drop_columns([c for c in ANALYSIS_COLUMNS if c in table.column_names])
            # The paper table as the corpus file the build reads (one file, the papers in index order).
            pq.write_table(base, work / "input" / "papers.parquet")
            del table, base
            settings = old["settings"]
            built = work / "index"
            say(f"fitting the topics again over {int(old['papers']):,} papers")
            build_index(
                [work / "input" / "papers.parquet"],
                built,
                n_topics=settings["n_topics"],
                taxonomy=target / "taxonomy.toml",
                random_state=int(settings["random_state"]),
                fit_size=int(settings["fit_size"]),
                semantic="semantic.npy" in old["files"],
                # An index built before the representation was a setting was fitted in LSA.
                representation=str(settings.get("representation", "lsa")),
                progress=progress,
            )
            manifest = _carry_over(target, built, old, old_papers)
            say("switching to the refitted index")
            append.switch(built, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    say("done")
    return manifest


def _stored_embeddings(root: Path, manifest: Mapping[str, Any]) -> np.ndarray | None:
    """The index's sentence embeddings (``semantic.npy``), which a model fitted in that space assigns by."""
    return load_npy(root / "semantic.npy") if "semantic.npy" in manifest["files"] else None


def _carry_over(
    old_root: Path, root: Path, old: Mapping[str, Any], old_papers: pd.DataFrame
) -> dict[str, Any]:
    """The rebuilt index's manifest with what the index was: its sources, load report, versions, the
    topic mapping and refit advice started anew (the model's parts kept, `append.TRANSFORM_FILE`)."""
    manifest = read_manifest(root)
    shutil.copyfile(old_root / "report.json", root / "report.json")
    table = read_arrow(root / "papers.arrow").select(["id", "topic"]).to_pandas()
    topic = table["topic"].to_numpy(dtype=np.int64)
    transform = append.load_transform(root, manifest)  # the build keeps it (`append.keep_model`)
    if transform is None:
        transform = append.derive_transform(root, manifest, topic)
        append.save_transform(transform, root / append.TRANSFORM_FILE)
    mapping = topic_mapping(
        old_papers, table, _read_topics(old_root / "topics.parquet"), _read_topics(root / "topics.parquet")
    )
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    mapping = {
        "date": now,
        "from_topics": int(old["topics"]),
        "to_topics": int(manifest["topics"]),
        **mapping,
    }
    versions = append.index_versions(old)
    n = int(manifest["papers"])
    versions.append({"version": int(versions[-1]["version"]) + 1, "date": now, "kind": "refit",
                     "papers_added": 0, "papers": n, "rows": [n, n], "digest": old.get("corpus_digest", ""),
                     "sources": []})  # fmt: skip
    manifest.update(
        {
            "sources": list(old.get("sources", [])),
            "corpus_digest": old.get("corpus_digest", ""),
            "taxonomy": old["taxonomy"],
            "report_summary": old.get("report_summary", manifest.get("report_summary")),
            "skipped": old.get("skipped", 0),
            "versions": versions,
            "topic_mapping": [*old.get("topic_mapping", []), mapping],
            "refit": append.refit_status(
                {
                    "papers_at_fit": n,
                    "added": 0,
                    "weight_sum": 0.0,
                    "outliers": 0,
                    "baseline": (manifest.get("refit") or {}).get("baseline")
                    or append.fit_baseline(
                        root, manifest, transform, topic, _stored_embeddings(root, manifest)
                    ),
                }
            ),
        }
    )
    for name in ("report.json", append.TRANSFORM_FILE):
        file = root / name
        manifest["files"][name] = {"bytes": file.stat().st_size, "sha256": _file_sha256(file)}
    manifest["files"] = dict(sorted(manifest["files"].items()))
    manifest["digest"] = manifest_digest(manifest)
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=False), encoding="utf-8")
    return manifest
