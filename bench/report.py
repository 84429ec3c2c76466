"""Report size and time: `python bench/report.py [PATH...]` (default: the 27k corpus in ../shared).

Loads the corpus, fits the topics as the app does, and writes the unfiltered report and one filtered
by a common word; prints the seconds of each step and the size of each file (target: 27k unfiltered
under 10 MB).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from dashboard import corpus
from dashboard.cli.report import report_of

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def main(paths: list[str]) -> None:
    if not paths:
        paths = [str(DEFAULT / "multiconf-2021-2024" / "papers.jsonl.gz")]
    start = time.perf_counter()
    papers = corpus.load(paths).papers
    print(f"read {len(papers):,} papers in {time.perf_counter() - start:.1f} s")
    out = Path(tempfile.mkdtemp())
    for name, query in (("unfiltered", {}), ("q=learning", {"q": ["learning"]})):
        start = time.perf_counter()
        html = report_of(papers, query, theme="light", base_url="http://localhost:8501/")
        seconds = time.perf_counter() - start
        path = out / f"report-{name.replace('=', '-')}.html"
        path.write_text(html, encoding="utf-8")
        size = len(html.encode()) / 1e6
        print(f"{name:>12}: {size:5.2f} MB in {seconds:5.1f} s (analysis included) -> {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
