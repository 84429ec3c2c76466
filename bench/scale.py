"""Cost against corpus size, from 57 abstracts to a million: build, app start, filter changes, memory.

    python bench/make_corpus.py                         # once: the 100k and 1M RESAMPLED corpora
    python bench/scale.py                               # every size that is there, every measurement
    python bench/scale.py --sizes seeds 27k --only build plain
    python bench/scale.py --sizes 27k --only build plain --runs 3   # issue 53's ratio: medians of 3
    python bench/scale.py --sizes 27k 1m --only build plain         # and the 1M row (tens of minutes)
    python bench/scale.py --report                      # the table and the plot from saved results

Corpora: the seeds, the 1k and 27k real corpora in ../shared/corpora, and 100k and 1M made by
resampling the 27k abstracts (bench/make_corpus.py: RESAMPLED, every abstract repeated).
Measurements, each in its own process so its memory is its own:

- ``build``: ``paper-dashboard index`` wall time and peak memory (RSS summed over the process and
  its workers, sampled every 0.2 s);
- ``plain``: the same job the obvious way (bench/plain_pipeline.py: pandas, TfidfVectorizer(1-2),
  NMF with as many topics as the index found), reported as ratios of the build to it (time and peak
  memory), measured in the same run as the build: with ``--runs N`` build and plain alternate N times,
  every run is kept (``build_runs``, ``plain_runs``, each with the load average it started at) and the
  table gives the medians;
- ``app`` (with ``--pin``: the server on a processor of its own, Chromium on the others, saved apart):
  ``streamlit run app.py -- --corpus INDEX`` (the seeds also from the raw files, the app's
  default) in Debian's Chromium: time from the server answering to the sidebar's ``N of M papers``
  line and to the first Plotly chart; then on the Papers page a typical search, a common-word search
  and a topic filter, timed server-side (PAPER_DASHBOARD_TIMINGS: the whole script run) and in the
  browser (to the updated table), the slowest of three tries each, each typed once the page's charts
  are drawn and the browser is idle (`_drawn`); the common-word search on every other page,
  server-side (the table shows the slowest page; the report, where each page's slowest try went: the
  seconds at which its steps ended, its thread's and the server's processor time, the kernel's share
  of it, the page faults, and how long its thread and the server's threads were ready to run but had
  no processor); each of those pages' first visit after the warm-up, unfiltered,
  server-side ("1st visit"); peak RSS of the app process (and how much of it is the memory-mapped
  index).

Results accumulate in bench/results/scale.json (a later run replaces the figures it measures), so the
1M run can happen on its own; the table is printed and drawn log-log to bench/results/scale.png.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
DATA = REPO / "bench" / "data"
RESULTS = REPO / "bench" / "results"
PYTHON = sys.executable
SEARCH_WORD = "graph"  # a typical search: about one paper in nine matches
COMMON_WORD = "learning"  # a search that keeps most of the corpus, the costliest filter change
REPEATS = 3  # every filter change is timed this many times; the table reports the slowest
PAGE_ROWS = 100  # dashboard.ui.components.FIRST_ROWS: the rows the Papers table shows on arrival


@dataclass(frozen=True)
class Corpus:
    name: str
    paths: tuple[Path, ...]
    note: str = ""

    @property
    def index(self) -> Path:
        return DATA / f"index-{self.name}"

    @property
    def available(self) -> bool:
        return all(p.exists() for p in self.paths)


CORPORA_BY_SIZE: dict[str, Corpus] = {
    "seeds": Corpus("seeds", (REPO / "seeds",)),
    "1k": Corpus("1k", (CORPORA / "iclr2026-openreview-1k" / "papers.jsonl",)),
    "27k": Corpus("27k", (CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz",)),
    "100k": Corpus("100k", (DATA / "resampled-100000",), "resampled"),
    "1m": Corpus("1m", (DATA / "resampled-1000000",), "resampled"),
}

TARGETS = {  # issue 5; the seeds open from their raw files (the app's default), larger corpora from an index
    ("seeds raw", "count_s"): 3.0,
    ("seeds raw", "search_server_s"): 0.15,
    ("seeds raw", "common_server_s"): 0.15,
    ("seeds raw", "worst_page_server_s"): 0.15,
    ("seeds raw", "topic_server_s"): 0.15,
    ("27k", "build_s"): 60.0,
    ("27k", "count_s"): 5.0,
    ("27k", "search_server_s"): 0.2,
    ("27k", "common_server_s"): 0.2,
    ("27k", "worst_page_server_s"): 0.2,
    ("27k", "topic_server_s"): 0.2,
    ("1m", "build_s"): 1200.0,
    ("1m", "build_peak_mb"): 8000.0,
    ("1m", "count_s"): 10.0,
    ("1m", "search_server_s"): 0.5,
    ("1m", "common_server_s"): 0.5,
    ("1m", "worst_page_server_s"): 0.5,
    ("1m", "topic_server_s"): 0.5,
    ("1m", "app_peak_mb"): 4000.0,
}
# Issue 53: the build against the plain pipeline in the same run (medians of --runs), and the 1M build.
RATIO_TARGETS = {("27k", "build_ratio"): 0.5, ("27k", "memory_ratio"): 1.5}
TARGETS_53 = {("1m", "build_s"): 480.0, ("1m", "build_peak_mb"): 6000.0}


# ------------------------------------------------------------------------------------------ memory


class PeakMemory:
    """Samples the RSS of a process and its children every ``interval`` seconds; keeps the peak."""

    def __init__(self, pid: int, interval: float = 0.2, limit_mb: float | None = None) -> None:
        self.process = psutil.Process(pid)
        self.interval = interval
        self.limit = limit_mb * 1e6 if limit_mb else None
        self.killed = False
        self.peak = 0
        self.peak_file = 0  # of the peak: file-backed pages (memory-mapped index files)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                processes = [self.process, *self.process.children(recursive=True)]
                total = file_backed = 0
                for process in processes:
                    try:
                        total += process.memory_info().rss
                        file_backed += _rss_file(process.pid)
                    except psutil.Error:
                        continue
                if total > self.peak:
                    self.peak, self.peak_file = total, file_backed
                if self.limit and total > self.limit:  # the machine is shared: stop before it swaps
                    self.killed = True
                    for process in processes:
                        process.kill()
            except psutil.Error:
                pass
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _rss_file(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    match = re.search(r"RssFile:\s+(\d+) kB", status)
    return int(match.group(1)) * 1024 if match else 0


def run_measured(
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 7200,
    limit_mb: float | None = None,
) -> dict[str, Any]:
    """Run a command; its wall time, peak RSS (with children), exit code and output."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    with PeakMemory(process.pid, limit_mb=limit_mb) as memory:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            return {"timeout": timeout, "stdout": out, "stderr": err[-2000:]}
    if memory.killed:
        return {"killed_mb": limit_mb, "peak_mb": round(memory.peak / 1e6), "stderr": err[-2000:]}
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "peak_mb": round(memory.peak / 1e6),
        "peak_file_mb": round(memory.peak_file / 1e6),
        "returncode": process.returncode,
        "stdout": out,
        "stderr": err[-4000:],
    }


# ------------------------------------------------------------------------------------------ build, plain


def measure_build(corpus: Corpus) -> dict[str, Any]:
    command = [
        PYTHON,
        "-m",
        "dashboard.cli.main",
        "index",
        *map(str, corpus.paths),
        "--out",
        str(corpus.index),
    ]
    result = run_measured(command)
    if result.get("returncode") not in (0, 1):
        raise RuntimeError(f"index build failed: {result.get('stderr')}")
    manifest = json.loads((corpus.index / "manifest.json").read_text())
    size = sum(f["bytes"] for f in manifest["files"].values())
    return {
        "papers": manifest["papers"],
        "topics": manifest["topics"],
        "build_s": result["seconds"],
        "build_peak_mb": result["peak_mb"],
        "build_peak_file_mb": result["peak_file_mb"],
        "build_phases": manifest.get("phases"),
        "map_s": (manifest.get("map") or {}).get("seconds"),
        "index_mb": round(size / 1e6),
        "build_log": [line for line in result["stderr"].splitlines() if re.match(r"\s*[\d.]+ s  ", line)],
    }


def measure_build_and_plain(corpus: Corpus, figures: dict[str, Any], args: argparse.Namespace) -> None:
    """Build and plain pipeline in turn, ``args.runs`` times (only what ``args.only`` asks; a build when
    there is no index yet); every run kept, the medians as the corpus's figures."""
    import statistics

    builds: list[dict[str, Any]] = []
    plains: list[dict[str, Any]] = []
    for number in range(1, max(1, args.runs) + 1):
        if "build" in args.only or not corpus.index.exists():
            print(f"{corpus.name}: building the index (run {number}/{args.runs}) ...", flush=True)
            load = os.getloadavg()[0]
            builds.append({**measure_build(corpus), "load": round(load, 2)})
        if "plain" in args.only:
            print(f"{corpus.name}: the plain pipeline (run {number}/{args.runs}) ...", flush=True)
            topics = int((builds[-1] if builds else figures).get("topics", 25))
            load = os.getloadavg()[0]
            plains.append(
                {
                    **measure_plain(corpus, topics, args.plain_timeout, args.plain_limit_mb),
                    "load": round(load, 2),
                }
            )
    for runs, key in ((builds, "build_runs"), (plains, "plain_runs")):
        if not runs:
            continue
        figures.update(runs[-1])
        for name in ("build_s", "build_peak_mb", "plain_s", "plain_peak_mb"):
            values = [run[name] for run in runs if run.get(name) is not None]
            if values:
                figures[name] = statistics.median(values)
        figures[key] = [{k: v for k, v in run.items() if k != "build_log"} for run in runs]
    if builds and not plains:  # a plain figure from another run would make no ratio
        figures.pop("plain_runs", None)


def measure_plain(corpus: Corpus, topics: int, timeout: float, limit_mb: float) -> dict[str, Any]:
    command = [
        PYTHON,
        str(REPO / "bench" / "plain_pipeline.py"),
        *map(str, corpus.paths),
        "--topics",
        str(topics),
    ]
    result = run_measured(command, timeout=timeout, limit_mb=limit_mb)
    if "timeout" in result:
        return {"plain_s": None, "plain_note": f"did not finish in {timeout:.0f} s"}
    if "killed_mb" in result:
        return {
            "plain_s": None,
            "plain_peak_mb": result["peak_mb"],
            "plain_note": f"stopped above {limit_mb:,.0f} MB",
        }
    if result["returncode"] != 0:
        return {"plain_s": None, "plain_note": "failed: " + result["stderr"][-300:]}
    figures = json.loads(result["stdout"].strip().splitlines()[-1])
    return {
        "plain_s": result["seconds"],
        "plain_peak_mb": result["peak_mb"],
        "plain_terms": figures["terms"],
        "plain_nmf_s": figures["nmf_s"],
    }


# ------------------------------------------------------------------------------------------ app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_health(port: int, timeout: float = 120) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                if reply.read().strip() == b"ok":
                    return time.perf_counter()
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError("the app did not answer")


_COUNT_JS = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  const m = s && s.innerText.match(/([\\d,]+) of ([\\d,]+) papers/); return m ? m[0] : null; }"""
_STATE_JS = (
    """() => document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state')"""
)
_ROWS_JS = """() => document.querySelector(
  '[data-testid="stMain"] [data-testid="stDataFrame"] table[role="grid"]')?.getAttribute('aria-rowcount')"""


def _server_run(
    log: Path, page: str, since: float, predicate: Any, *, first: bool = False
) -> dict[str, Any] | None:
    """The timings line of the last (``first``: the first) run of ``page`` after ``since`` whose query
    matches."""
    if not log.exists():
        return None
    runs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    runs = [r for r in runs if r["page"] == page and r["time"] >= since and predicate(r["query"])]
    return (runs[0] if first else runs[-1]) if runs else None


def _server_seconds(log: Path, page: str, since: float, predicate: Any) -> float | None:
    """The server-side seconds of the last run of ``page`` after ``since`` whose query matches."""
    run = _server_run(log, page, since, predicate)
    return run["seconds"] if run else None


# Every chart drawn, then two idle periods of the browser: a person types a search after looking at the
# page. Typing while Chromium still draws the page's charts (a 20,000-point map in software, no GPU here)
# timed the server against the browser for the machine's two cores: 0.2-0.45 s more on a page's first try.
_DRAWN_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .every(chart => chart.querySelector('.main-svg'))"""
_IDLE_JS = """() => new Promise(done => requestIdleCallback(
  () => requestIdleCallback(() => done(true), {timeout: 3000}), {timeout: 3000}))"""


def _warmed(log: Path, timeout: float) -> float | None:
    """Wait for the server's warm-up line in the timings log; its seconds (None: none within timeout)."""
    from dashboard.ui.warmup import TIMINGS_PAGE

    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        seconds = _server_seconds(log, TIMINGS_PAGE, 0, lambda q: True)
        if seconds is not None:
            return seconds
        time.sleep(0.2)
    return None


def _drawn(page: Any, timeout: float) -> None:
    """Wait until every chart of the page is drawn and the browser has been idle (`_DRAWN_JS`)."""
    page.wait_for_function(_DRAWN_JS, timeout=timeout * 1000)
    page.evaluate(_IDLE_JS)


def _settle(page: Any, before: str | None, timeout: float) -> None:
    """Wait until the count line changed from ``before`` and the script has finished."""
    page.wait_for_function(
        f"() => {{ const c = ({_COUNT_JS})(); return c !== null && c !== {json.dumps(before)}; }}",
        timeout=timeout * 1000,
    )
    page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=timeout * 1000)


_EXPECTED_ROWS_JS = """() => { const c = (%s)(); if (!c) return false;
  const shown = Math.min(parseInt(c.split(' of ')[0].replace(/,/g, '')), %d);
  const grid = (%s)(); return shown === 0 || grid === String(shown + 1); }"""


def _filter_change(
    page: Any, url: str, action: Any, log: Path, key: str, timeout: float
) -> tuple[float, dict[str, Any] | None, str]:
    """Open ``url`` unfiltered, do ``action``: (browser seconds to the updated table, the server's
    timings line of that run, count)."""
    page.goto(url, timeout=timeout * 1000)
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stDataFrame"]', timeout=timeout * 1000)
    page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=timeout * 1000)
    _drawn(page, timeout)
    before = page.evaluate(_COUNT_JS)
    started_wall, started = time.time(), time.perf_counter()
    action(page)
    _settle(page, before, timeout)
    expected = _EXPECTED_ROWS_JS % (_COUNT_JS, PAGE_ROWS, _ROWS_JS)
    page.wait_for_function(expected, timeout=timeout * 1000, polling=20)
    browser_s = round(time.perf_counter() - started, 3)
    line = None
    for _ in range(50):  # the script's log line is written as the run ends
        line = _server_run(log, "Papers", started_wall, lambda q: q.get(key))
        if line is not None:
            break
        time.sleep(0.1)
    return browser_s, line, page.evaluate(_COUNT_JS)


OTHER_PAGES = {"overview": "Overview", "topics": "Topics", "terms": "Terms", "trends": "Trends",
               "links": "Links & code", "compare": "Compare"}  # fmt: skip
PAGE_PATHS = {"overview": ""}  # the default page lives at the root


def _page_change(
    page: Any, url: str, title: str, action: Any, log: Path, timeout: float
) -> dict[str, Any] | None:
    """Open ``url`` unfiltered, do ``action`` (a search): the timings line of that page's run (its
    server seconds, processor seconds and the seconds at which its steps ended)."""
    page.goto(url, timeout=timeout * 1000)
    page.wait_for_function(f"() => ({_COUNT_JS})() !== null", timeout=timeout * 1000, polling=20)
    page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=timeout * 1000)
    _drawn(page, timeout)
    before = page.evaluate(_COUNT_JS)
    started_wall = time.time()
    action(page)
    _settle(page, before, timeout)
    for _ in range(50):  # the script's log line is written as the run ends
        run = _server_run(log, title, started_wall, lambda q: q.get("q"))
        if run is not None:
            return run
        time.sleep(0.1)
    return None


def timed_server(corpus: Path) -> tuple[int, list[str], dict[str, str], Path]:
    """(port, command, environment, timings log) of an app server on ``corpus`` that logs every run."""
    port = _free_port()
    log = Path(tempfile.mkdtemp()) / "timings.jsonl"
    env = {**os.environ, "PAPER_DASHBOARD_TIMINGS": str(log)}
    command = [
        PYTHON, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none", "--", "--corpus", str(corpus),
    ]  # fmt: skip
    return port, command, env, log


def measure_app(corpus_path: Path, label: str, timeout: float = 300, pin: bool = False) -> dict[str, Any]:
    """Start the app on ``corpus_path``; time first render and two filter changes in Chromium.

    ``pin``: the server on the last processor, Chromium (and this script) on the others, so the server's
    times are its own work. Unpinned, on two cores, Chromium's renderer was busy through every filter
    change's run (1.6-2.5 s of Chromium's processor time for a Terms or Links change, 0.8 s even for
    Compare's 0.1 s run) and the server waited for a core.
    """
    from playwright.sync_api import sync_playwright

    port, command, env, log = timed_server(corpus_path)
    cpus = sorted(os.sched_getaffinity(0))
    if pin and len(cpus) < 2:
        raise SystemExit("--pin needs two processors")
    preexec = None
    if pin:  # each process's threads and children inherit its processors
        os.sched_setaffinity(0, set(cpus[:-1]))  # this script, Playwright's driver and its Chromium

        def preexec() -> None:  # the server
            os.sched_setaffinity(0, {cpus[-1]})

    server = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=preexec
    )
    figures: dict[str, Any] = {"app_corpus": label}

    def step(name: str) -> None:
        if os.environ.get("SCALE_DEBUG"):
            print(f"  {time.strftime('%H:%M:%S')} {name}", flush=True)

    try:
        with PeakMemory(server.pid, interval=0.1) as memory:
            answering = _wait_health(port)
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium",
                    headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
                )  # fmt: skip
                page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
                step('page.goto(f"http://127.0.0.1:{port}/"')
                page.goto(f"http://127.0.0.1:{port}/", timeout=timeout * 1000)
                page.wait_for_function(f"() => ({_COUNT_JS})() !== null", timeout=timeout * 1000, polling=20)
                figures["count_s"] = round(time.perf_counter() - answering, 2)
                figures["count_line"] = page.evaluate(_COUNT_JS)
                step("page.wait_for_selector('[data-testid=\"st")
                page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=timeout * 1000)
                figures["chart_s"] = round(time.perf_counter() - answering, 2)
                page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=timeout * 1000)
                figures["first_page_server_s"] = _server_seconds(log, "Overview", 0, lambda q: True)
                # Filter changes are timed on a warmed server: at 1M the warm-up goes on for 27-40 s after
                # the first page (the codes of every filter field, `dashboard.ui.warmup.first_page`), and
                # tries timed beside it measured the warm-up's share of the interpreter.
                figures["warmup_s"] = _warmed(log, timeout)

                papers_url = f"http://127.0.0.1:{port}/papers"

                def searcher(word: str) -> Any:
                    def search(page: Any) -> None:
                        box = page.locator('[data-testid="stSidebar"] input[aria-label="Search"]')
                        box.fill(word)
                        box.press("Enter")

                    return search

                def first_topic(page: Any) -> None:
                    topics = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Topics")
                    topics.locator('input[role="combobox"]').click()
                    page.get_by_role("option").filter(has_not_text="Select all").first.click()

                changes = (
                    ("search", searcher(SEARCH_WORD), "q"),  # about one paper in nine
                    ("common", searcher(COMMON_WORD), "q"),  # the worst case: most papers match
                    ("topic", first_topic, "topic"),
                )
                slowest: dict[str, dict[str, Any]] = {}  # each page's slowest try: where its time went
                kept = ("seconds", "cpu_seconds", "process_cpu_seconds", "process_system_seconds",
                        "page_faults", "waited_seconds", "process_waited_seconds", "marks")  # fmt: skip
                for name, action, key in changes:  # each REPEATS times from the unfiltered page: the worst
                    step(name)
                    runs = [_filter_change(page, papers_url, action, log, key, timeout)
                            for _ in range(REPEATS)]  # fmt: skip
                    timed = [line for _, line, _ in runs if line]
                    figures[f"{name}_browser_s"] = max(browser_s for browser_s, _, _ in runs)
                    figures[f"{name}_server_s"] = max((line["seconds"] for line in timed), default=None)
                    figures[f"{name}_server_runs_s"] = [line and line["seconds"] for _, line, _ in runs]
                    figures[f"{name}_count"] = runs[-1][2]
                    if name == "common" and timed:  # the Papers page's row of the pages' table
                        worst = max(timed, key=lambda line: line["seconds"])
                        slowest["papers"] = {k: worst[k] for k in kept}
                page.keyboard.press("Escape")
                # The same common-word search on every other page: the slowest of three tries each.
                pages: dict[str, float | None] = {}
                page_runs: dict[str, list[float | None]] = {}
                visits: dict[str, float | None] = {}  # each page's first, unfiltered run
                for name, title in OTHER_PAGES.items():
                    step(f"{name}: common-word search")
                    url = f"http://127.0.0.1:{port}/{PAGE_PATHS.get(name, name)}"
                    visited = time.time()
                    lines = [_page_change(page, url, title, searcher(COMMON_WORD), log, timeout)
                             for _ in range(REPEATS)]  # fmt: skip
                    if name != "overview":  # the first page the script opened (count_s, chart_s)
                        visit = _server_run(log, title, visited, lambda q: not q.get("q"), first=True)
                        visits[name] = visit["seconds"] if visit else None
                    tries = [line["seconds"] if line else None for line in lines]
                    pages[name] = max((t for t in tries if t is not None), default=None)
                    page_runs[name] = tries
                    answered = [line for line in lines if line]
                    if answered:
                        worst = max(answered, key=lambda line: line["seconds"])
                        slowest[name] = {k: worst[k] for k in kept}
                figures["pages_server_s"] = pages
                figures["pages_first_visit_s"] = visits
                figures["pages_server_runs_s"] = page_runs
                figures["pages_slowest_run"] = slowest
                measured = [v for v in [*pages.values(), figures.get("common_server_s")] if v is not None]
                figures["worst_page_server_s"] = max(measured, default=None)
                browser.close()
        figures["app_peak_mb"] = round(memory.peak / 1e6)
        figures["app_peak_file_mb"] = round(memory.peak_file / 1e6)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(log.parent, ignore_errors=True)
        os.sched_setaffinity(0, set(cpus))
    return figures


# ------------------------------------------------------------------------------------------ results


def load_results() -> dict[str, dict[str, Any]]:
    path = RESULTS / "scale.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save_results(results: dict[str, dict[str, Any]]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "scale.json").write_text(json.dumps(results, indent=1))


def _cell(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


COLUMNS = [
    ("papers", "papers", 0),
    ("build_s", "build s", 1),
    ("build_peak_mb", "build MB", 0),
    ("index_mb", "index MB", 0),
    ("plain_s", "plain s", 1),
    ("plain_peak_mb", "plain MB", 0),
    ("build_ratio", "build/plain", 2),
    ("memory_ratio", "MB build/plain", 2),
    ("count_s", "N of M s", 2),
    ("chart_s", "chart s", 2),
    ("search_server_s", "search srv s", 3),
    ("search_browser_s", "search brw s", 2),
    ("common_server_s", "common srv s", 3),
    ("worst_page_server_s", "worst page srv s", 3),
    ("topic_server_s", "topic srv s", 3),
    ("topic_browser_s", "topic brw s", 2),
    ("app_peak_mb", "app MB", 0),
    ("app_peak_file_mb", "of it mmap MB", 0),
]


def table(results: dict[str, dict[str, Any]]) -> str:
    """The results as a fixed-width table, one row per corpus (and app mode)."""
    rows = []
    for key, figures in results.items():
        figures = dict(figures)
        figures.update(ratios(figures))
        rows.append([key] + [_cell(figures.get(name), digits) for name, _, digits in COLUMNS])
    header = ["corpus"] + [title for _, title, _ in COLUMNS]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]]
    return "\n".join(lines)


def ratios(figures: dict[str, Any]) -> dict[str, float]:
    """The build's time and peak memory as multiples of the plain pipeline's (measured in the same run)."""
    out = {}
    if figures.get("plain_s") and figures.get("build_s"):
        out["build_ratio"] = round(figures["build_s"] / figures["plain_s"], 2)
    if figures.get("plain_peak_mb") and figures.get("build_peak_mb"):
        out["memory_ratio"] = round(figures["build_peak_mb"] / figures["plain_peak_mb"], 2)
    return out


def runs_report(results: dict[str, dict[str, Any]]) -> list[str]:
    """Every run of the build and the plain pipeline, not only the medians the table shows."""
    lines = []
    for key, figures in results.items():
        builds, plains = figures.get("build_runs") or [], figures.get("plain_runs") or []
        for number, (build, plain) in enumerate(zip(builds, plains, strict=False), 1):
            both = {**build, **plain}
            line = (
                f"  {key:>9} run {number}: build {_cell(build.get('build_s'), 1)} s "
                f"{_cell(build.get('build_peak_mb'), 0)} MB (load {build.get('load', 0):.1f}), plain "
                f"{_cell(plain.get('plain_s'), 1)} s {_cell(plain.get('plain_peak_mb'), 0)} MB "
                f"(load {plain.get('load', 0):.1f})"
            )
            found = ratios(both)
            if found:
                line += ": " + ", ".join(f"{name} {value:.2f}" for name, value in found.items())
            phases = build.get("build_phases") or {}
            if phases:
                line += "; phases " + " ".join(f"{name} {value:.1f}" for name, value in phases.items())
            if build.get("map_s") is not None:
                line += f"; map {build['map_s']:.1f}"
            lines.append(line)
    return lines


def targets_report(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for (size, name), limit in {**RATIO_TARGETS, **TARGETS_53}.items():
        figures = {**results.get(size, {}), **ratios(results.get(size, {}))}
        value = figures.get(name)
        if value is None:
            lines.append(f"  {size:>9} {name:<16} target {limit:>8,.2f} (issue 53): not measured")
            continue
        verdict = "met" if value <= limit else f"MISSED by {value - limit:,.2f} ({value / limit:.1f}x)"
        lines.append(f"  {size:>9} {name:<16} {value:>10,.2f}  target {limit:>8,.2f} (issue 53): {verdict}")
    for (size, name), limit in TARGETS.items():
        value = results.get(size, {}).get(name)
        if value is None:
            lines.append(f"  {size:>9} {name:<16} target {limit:>8,.2f}: not measured")
            continue
        verdict = "met" if value <= limit else f"MISSED by {value - limit:,.2f} ({value / limit:.1f}x)"
        lines.append(f"  {size:>9} {name:<16} {value:>10,.2f}  target {limit:>8,.2f}: {verdict}")
    if results.get("27k", {}).get("plain_s") and results.get("27k", {}).get("build_s"):
        faster = results["27k"]["build_s"] < results["27k"]["plain_s"]
        lines.append(f"  27k build faster than the plain pipeline: {'met' if faster else 'MISSED'}")
    small, large = results.get("27k", {}), results.get("1m", {})
    changes = ("search_server_s", "common_server_s", "worst_page_server_s", "topic_server_s")
    for name in ("build_s", "count_s", *changes, "app_peak_mb"):
        if small.get(name) and large.get(name):
            growth = (large[name] / small[name]) / (large["papers"] / small["papers"])
            lines.append(
                f"  27k -> 1M {name}: cost grows {growth:.2f}x as fast as the papers (<= 1: linear or better)"
            )
    return lines


def plot(results: dict[str, dict[str, Any]]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [(k, v) for k, v in results.items() if v.get("papers") and "raw" not in k]
    sizes.sort(key=lambda kv: kv[1]["papers"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for name, label in [
        ("build_s", "index build"),
        ("plain_s", "plain TF-IDF + NMF"),
        ("count_s", "app: server answering -> 'N of M papers'"),
        ("search_server_s", "search change (server)"),
        ("common_server_s", "common-word search (server)"),
        ("worst_page_server_s", "common-word search, slowest page (server)"),
        ("topic_server_s", "topic change (server)"),
    ]:
        points = [(v["papers"], v[name]) for _, v in sizes if v.get(name)]
        if points:
            left.plot(*zip(*points, strict=True), marker="o", label=label)
    builds = [(v["papers"], v["build_s"]) for _, v in sizes if v.get("build_s") and v["papers"] >= 27_000]
    if builds:  # what linear growth from the 27k build would cost: a slope of one on log-log axes
        papers, seconds = builds[0]
        xs = [papers, max(p for p, _ in builds)]
        left.plot(xs, [seconds * x / papers for x in xs], ":", color="grey", label="linear growth from 27k")
    left.set(xscale="log", yscale="log", xlabel="papers (100k and 1M resampled)", ylabel="seconds",
             title="Time against corpus size")  # fmt: skip
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=8)
    for name, label in [("build_peak_mb", "index build peak"), ("plain_peak_mb", "plain pipeline peak"),
                        ("app_peak_mb", "app process peak RSS")]:  # fmt: skip
        points = [(v["papers"], v[name]) for _, v in sizes if v.get(name)]
        if points:
            right.plot(*zip(*points, strict=True), marker="o", label=label)
    right.set(xscale="log", yscale="log", xlabel="papers (100k and 1M resampled)", ylabel="MB",
              title="Peak memory against corpus size")  # fmt: skip
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=8)
    fig.tight_layout()
    path = RESULTS / "scale.png"
    fig.savefig(path, dpi=110)
    return path


def report(results: dict[str, dict[str, Any]]) -> None:
    print("100k and 1m are RESAMPLED from the 27k abstracts (bench/make_corpus.py).")
    print(table(results))
    every = runs_report(results)
    if every:
        print("\nEvery run of the build and the plain pipeline (the table gives their medians):")
        print("\n".join(every))
    print(f"\nA search for {COMMON_WORD!r}, server seconds per page (the slowest of {REPEATS} tries):")
    for key, figures in results.items():
        pages = {"papers": figures.get("common_server_s"), **figures.get("pages_server_s", {})}
        if figures.get("pages_server_s"):
            print(f"  {key:>9}  " + "  ".join(f"{name} {_cell(value, 3)}" for name, value in pages.items()))
        runs = {"papers": figures.get("common_server_runs_s"), **figures.get("pages_server_runs_s", {})}
        if figures.get("pages_server_runs_s"):
            print(
                f"  {'each try':>9}  "
                + "  ".join(f"{n} " + "/".join(_cell(v, 3) for v in r or []) for n, r in runs.items())
            )
        if figures.get("pages_first_visit_s"):
            print(
                f"  {'1st visit':>9}  "
                + "  ".join(f"{n} {_cell(v, 3)}" for n, v in figures["pages_first_visit_s"].items())
            )
        for name, run in figures.get("pages_slowest_run", {}).items():  # where the slowest try went
            steps = " ".join(f"{step} {seconds:.3f}" for step, seconds in run["marks"].items())
            cpu = f"its thread {run['cpu_seconds']:.3f}, the server {run.get('process_cpu_seconds', 0):.3f}"
            if "page_faults" in run:  # runs saved before these were logged have neither
                kernel, faults = run["process_system_seconds"], run["page_faults"]
                cpu += f", of it the kernel {kernel:.3f}; {faults:,} page faults"
            if "waited_seconds" in run:  # ready to run with no processor free (the browser held them)
                cpu += (
                    f"; waiting for a processor: its thread {run['waited_seconds']:.3f}, "
                    f"the server {run['process_waited_seconds']:.3f}"
                )
            print(f"  {name:>9}  slowest {run['seconds']:.3f} s (processor: {cpu}): {steps}")
    print("\nTargets (issue 5, and issue 53's ratios):")
    print("\n".join(targets_report(results)))
    if results:
        print(f"\nplot: {plot(results)}; figures: {RESULTS / 'scale.json'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", choices=list(CORPORA_BY_SIZE), default=list(CORPORA_BY_SIZE))
    parser.add_argument(
        "--only", nargs="+", choices=["build", "plain", "app"], default=["build", "plain", "app"]
    )
    parser.add_argument(
        "--plain-timeout", type=float, default=3600, help="give up on the plain pipeline after"
    )
    parser.add_argument("--plain-limit-mb", type=float, default=12_000, help="stop the plain pipeline above")
    parser.add_argument("--report", action="store_true", help="print the saved results only")
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="build and plain pipeline this many times each, alternating; medians",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="app: the server on one processor, Chromium on the others (saved as '1m pinned', ...)",
    )
    args = parser.parse_args(argv)
    results = load_results()
    if args.report:
        report(results)
        return 0
    for size in args.sizes:
        corpus = CORPORA_BY_SIZE[size]
        if not corpus.available:
            print(f"{size}: {corpus.paths[0]} is missing; skipped (bench/make_corpus.py makes 100k and 1m)")
            continue
        figures = results.setdefault(size, {})
        if corpus.note:
            figures["note"] = corpus.note
        if "build" in args.only or "plain" in args.only or not corpus.index.exists():
            measure_build_and_plain(corpus, figures, args)
            save_results(results)
        if "app" in args.only and args.pin:
            print(f"{size}: the app in Chromium, the server on a processor of its own ...", flush=True)
            pinned = measure_app(corpus.index, f"{size} index", pin=True)
            results.setdefault(f"{size} pinned", {}).update(pinned)
            save_results(results)
        elif "app" in args.only:
            print(f"{size}: the app in Chromium ...", flush=True)
            figures.update(measure_app(corpus.index, f"{size} index"))
            save_results(results)
            if size in ("seeds", "27k"):
                # The app's default for small corpora: built from the raw files in the app.
                raw = results.setdefault(f"{size} raw", {"papers": figures.get("papers")})
                raw.update(measure_app(corpus.paths[0], f"{size} raw files"))
                save_results(results)
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
