"""A restarted server on raw files against the same corpus as a prebuilt index: `python bench/restart.py`.

Builds the disk-cache entry of the raw corpus once (the first start), then alternates server starts
on the raw file (which now open the cached analysis) and on a prebuilt index of the same file, and
times, from navigation start in a fresh Chromium context, the sidebar's ``N of M papers`` and the
first chart. Prints each try and the medians; target: raw restart within 1.5x of the index.
Default corpus: the 27k file in ../shared/corpora.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from floor import visit  # noqa: E402
from server import free_port, healthy  # noqa: E402

DEFAULT = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"


def serve(corpus: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
        "--", "--corpus", str(corpus),
    ]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    while not healthy(url):
        if process.poll() is not None:
            raise RuntimeError("the server did not start")
        time.sleep(0.2)
    return process, url, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="restart-"))
    env = {**os.environ, "PAPER_DASHBOARD_CACHE_DIR": str(work / "cache")}
    index = work / "prebuilt.index"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "dashboard.cli.main", "index", str(args.corpus), "--out", str(index)],
        check=True,
    )
    print(f"prebuilt index: {time.perf_counter() - started:.1f} s")
    times: dict[str, list[tuple[float, float]]] = {"raw file, restarted": [], "prebuilt index": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        process, url, _ = serve(args.corpus, env)
        try:
            started = time.perf_counter()
            count, chart = visit(browser, url, timeout=1800)  # the whole analysis: minutes at 27k
            first = time.perf_counter() - started
            print(f"first start on the raw file (builds the cache): first chart after {first:.1f} s")
        finally:
            process.terminate()
            process.wait(timeout=30)
        for attempt in range(1, args.tries + 1):
            for label, corpus in (("raw file, restarted", args.corpus), ("prebuilt index", index)):
                process, url, _ = serve(corpus, env)
                try:
                    count, chart = visit(browser, url)
                finally:
                    process.terminate()
                    process.wait(timeout=30)
                times[label].append((count, chart))
                print(f"try {attempt} {label:>20}: N of M {count:5.2f} s, first chart {chart:5.2f} s")
        browser.close()
    raw = statistics.median(chart for _, chart in times["raw file, restarted"])
    built = statistics.median(chart for _, chart in times["prebuilt index"])
    print(f"\nmedian first chart: raw file restarted {raw:.2f} s, prebuilt index {built:.2f} s")
    print(f"ratio {raw / built:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
