"""Does one session's large upload slow another session's filter changes? Server seconds, side by side.

    python bench/upload_isolation.py                    # reader on bench/data/index-27k, upload the 27k file
    python bench/upload_isolation.py --corpus seeds --upload ../shared/corpora/icml-2021-2023-pmlr/...

Starts ``streamlit run app.py -- --corpus CORPUS`` with PAPER_DASHBOARD_TIMINGS and opens two sessions in
Debian's Chromium. The reader changes its search on the Papers page (``q=`` one word after another) and
each change's server seconds are read from the timings log: first ``--changes`` times alone, then as
many times as it can while the other session uploads ``--upload`` (read and analysed in a worker process,
`dashboard.server.worker`). Prints both medians, their ratio (issue 20 asks for at most 2x) and the upload's
wall time. The machine's load average is printed too: a busy machine slows both halves.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import _COUNT_JS, _STATE_JS, REPO, _server_seconds, _settle, _wait_health, timed_server  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
DEFAULT_CORPUS = REPO / "bench" / "data" / "index-27k"
DEFAULT_UPLOAD = CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"
WORDS = ("graph", "video", "language", "diffusion", "robot", "learning", "model", "data", "policy", "image",
         "neural", "training", "network", "attention", "reward", "sparse", "causal", "kernel")  # fmt: skip


def _change(page: Any, word: str, log: Path, timeout: float) -> float | None:
    """One search on the reader's Papers page: the server seconds of its run."""
    before = page.evaluate(_COUNT_JS)
    started_wall = time.time()
    page.evaluate(
        "(path) => { history.pushState({}, '', path); dispatchEvent(new PopStateEvent('popstate')); }",
        f"/papers?q={word}",
    )
    _settle(page, before, timeout)
    for _ in range(50):  # the script's log line is written as the run ends
        seconds = _server_seconds(log, "Papers", started_wall, lambda q: q.get("q") == [word])
        if seconds is not None:
            return seconds
        time.sleep(0.1)
    return None


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus", default=str(DEFAULT_CORPUS), help="the reader's corpus ('seeds' or a path)"
    )
    parser.add_argument("--upload", type=Path, default=DEFAULT_UPLOAD)
    parser.add_argument("--changes", type=int, default=8, help="filter changes alone (8)")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    corpus = REPO / "seeds" if args.corpus == "seeds" else Path(args.corpus)
    if not corpus.exists():
        corpus = REPO / "seeds"
    print(f"reader's corpus: {corpus}; upload: {args.upload} ({args.upload.stat().st_size / 2**20:.1f} MiB)")
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    from playwright.sync_api import sync_playwright

    port, command, env, log = timed_server(corpus)
    server = subprocess.Popen(
        command,
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_health(port)
        url = f"http://127.0.0.1:{port}"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu", "--no-first-run"])  # fmt: skip
            reader, uploader = (
                browser.new_context(viewport={"width": 1440, "height": 1000}).new_page() for _ in range(2)
            )
            for page in (reader, uploader):
                page.goto(f"{url}/papers", timeout=args.timeout * 1000)
                page.wait_for_function(f"() => ({_COUNT_JS})() !== null", timeout=args.timeout * 1000)
                page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=args.timeout * 1000)
            _change(reader, "warmup", log, args.timeout)
            alone = [_change(reader, WORDS[n % len(WORDS)], log, args.timeout) for n in range(args.changes)]
            alone = [s for s in alone if s is not None]
            median = statistics.median(alone)
            print(f"alone: {len(alone)} changes, median {median:.3f} s, max {max(alone):.3f} s")

            uploader.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').first.click()
            started = time.perf_counter()
            uploader.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(args.upload))
            uploader.wait_for_function(f"() => ({_STATE_JS})() === 'running'", timeout=args.timeout * 1000)

            def reading() -> bool:
                """The uploader's script runs until the worker is done (its count line may not change:
                an upload as large as the corpus)."""
                return bool(uploader.evaluate(f"() => ({_STATE_JS})() === 'running'"))

            during: list[float] = []
            n = 0
            while reading() and time.perf_counter() - started < args.timeout:
                seconds = _change(reader, WORDS[n % len(WORDS)] + ("" if n < len(WORDS) else f"s{n}"), log,
                                  args.timeout)  # fmt: skip
                n += 1
                if seconds is not None and reading():
                    during.append(seconds)
            uploader.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=args.timeout * 1000)
            upload_s = time.perf_counter() - started
            print(
                f"upload: {upload_s:.1f} s until the uploader's page showed {uploader.evaluate(_COUNT_JS)!r}"
            )
            if not during:
                print("no filter change finished while the upload was read (the upload was too quick)")
                return
            ratio = statistics.median(during) / statistics.median(alone)
            print(
                f"during the upload: {len(during)} changes, median {statistics.median(during):.3f} s, "
                f"max {max(during):.3f} s\nratio of the medians: {ratio:.2f}x (target: at most 2x)"
            )
            browser.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
