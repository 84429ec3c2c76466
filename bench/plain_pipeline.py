"""The same job done the obvious way: pandas, then plain scikit-learn TF-IDF (1-2-grams) and NMF.

    python bench/plain_pipeline.py PATH... --topics 25      # prints one JSON line of step times

This is the baseline `bench/scale.py` compares the index build with, in the same run: what a user
would write without this project (read the abstracts with pandas, ``TfidfVectorizer(ngram_range=(1, 2))``
with its defaults, ``NMF(n_components=k)`` with its defaults). The seed layout (one abstract per
paragraph) is split on blank lines, since pandas has no reader for it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import resource
import sys
import time
from pathlib import Path

import pandas as pd
from sklearn.decomposition import NMF
from sklearn.feature_extraction.text import TfidfVectorizer


def read_abstracts(paths: list[Path]) -> pd.Series:
    """Every abstract under ``paths`` (JSON Lines, optionally gzipped; else paragraphs of text)."""
    files = [f for p in paths for f in (sorted(p.iterdir()) if p.is_dir() else [p])]
    frames = []
    for file in files:
        name = file.name.lower()
        if ".jsonl" in name:
            frames.append(pd.read_json(file, lines=True, compression="infer")["abstract"])
        elif name.endswith((".txt", ".md")) and not name.startswith("readme"):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(file, "rt", encoding="utf-8-sig") as handle:
                paragraphs = [p.strip() for p in re.split(r"\n\s*\n", handle.read()) if p.strip()]
            frames.append(pd.Series(paragraphs[1:] if len(paragraphs[0]) < 120 else paragraphs))
    return pd.concat(frames, ignore_index=True).fillna("").astype(str)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--topics", type=int, default=25)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    abstracts = read_abstracts(args.paths)
    read = time.perf_counter()
    tfidf = TfidfVectorizer(ngram_range=(1, 2)).fit_transform(abstracts)
    vectorised = time.perf_counter()
    NMF(n_components=min(args.topics, tfidf.shape[0]), random_state=0).fit_transform(tfidf)
    done = time.perf_counter()
    figures = {
        "papers": len(abstracts),
        "terms": tfidf.shape[1],
        "read_s": round(read - started, 2),
        "tfidf_s": round(vectorised - read, 2),
        "nmf_s": round(done - vectorised, 2),
        "total_s": round(done - started, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
