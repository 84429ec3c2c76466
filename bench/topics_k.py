"""Changing the number of topics on the Topics page: server seconds per k, a tree cut against a refit.

    python bench/topics_k.py --corpus bench/data/index-27k            # k = 5 10 15 20 25 30, three rounds
    python bench/topics_k.py --corpus bench/data/index-1m --k 8 16 --refit 12

Starts ``streamlit run app.py -- --corpus INDEX`` with PAPER_DASHBOARD_TIMINGS, opens the Topics page in
Debian's Chromium, waits for it and for the server's warm-up, then picks each ``k`` in turn in the
page's "Number of topics" box, as a user does (the run it starts is the whole change, the cut
included), and reads the server-side
seconds of that run from the timings log. ``--reload`` opens ``/topics?k=N`` instead: a new session
each time, whose run shares the two cores with the browser loading the whole page again. The first
round meets every k for the first time (the cut is computed; on an index built before trees were
stored, the first also computes the tree); later rounds show a k seen before. Prints each run, and the
slowest first-time change. ``--refit K`` also times one refit at K (``refit=1``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import _STATE_JS, REPO, _server_seconds, _wait_health, _warmed, timed_server  # noqa: E402


def _open(page: Any, url: str, timeout: float) -> None:
    page.goto(url, timeout=timeout * 1000)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=timeout * 1000)
    page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=timeout * 1000)


def _pick(page: Any, k: int, timeout: float) -> None:
    """Choose ``k`` in the Number of topics box and wait for the page's run to end."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Number of topics")
    box.locator('input[role="combobox"]').click()
    page.keyboard.type(str(k))  # the list shows a few options at a time: typing narrows it to k
    page.get_by_role("option", name=str(k), exact=True).click()
    in_url = f"() => new URL(location.href).searchParams.get('k') === '{k}'"
    page.wait_for_function(in_url, timeout=timeout * 1000)
    page.wait_for_function(f"() => ({_STATE_JS})() === 'notRunning'", timeout=timeout * 1000)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=timeout * 1000)


def _seconds(log: Path, since: float, k: int, refit: bool) -> float | None:
    def matches(query: dict[str, list[str]]) -> bool:
        return query.get("k") == [str(k)] and (query.get("refit") == ["1"]) == refit

    for _ in range(50):  # the script's log line is written as the run ends
        seconds = _server_seconds(log, "Topics", since, matches)
        if seconds is not None:
            return seconds
        time.sleep(0.1)
    return None


def main() -> None:
    """Run the measurement and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--k", type=int, nargs="*", default=[5, 10, 15, 20, 25, 30])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--refit", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--auto", type=int, default=3, help="runs of the page at auto, for reference")
    parser.add_argument("--profile", type=Path, default=None, help="py-spy raw samples of the server here")
    parser.add_argument("--reload", action="store_true", help="open /topics?k=N instead of picking k")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port, command, env, log = timed_server(args.corpus.resolve())
    if args.profile is not None:  # py-spy (pip install py-spy) samples the server process
        command = ["py-spy", "record", "-f", "raw", "-r", "50", "-o", str(args.profile), "--", *command]
    server = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    print(f"{args.corpus}: load {os.getloadavg()[0]:.1f} (1-minute average) at the start")
    try:
        _wait_health(port)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
            base = f"http://127.0.0.1:{port}/topics"
            started = time.perf_counter()
            _open(page, base, args.timeout)
            print(f"Topics page (auto) first shown after {time.perf_counter() - started:.1f} s")
            # At 1M the server goes on warming the other pages' entries for 30-40 s after the first page
            # (`dashboard.ui.warmup`); runs timed beside it measured its share of the interpreter.
            warmed = _warmed(log, args.timeout)
            print(f"warm-up done after {warmed if warmed is not None else '?'} s")
            auto = []
            for _ in range(args.auto):
                since = time.time()
                _open(page, base + "?", args.timeout)
                auto.append(_server_seconds(log, "Topics", since, lambda q: "k" not in q))
            print(f"the page at auto, for reference: {auto} s")
            rounds: list[list[float | None]] = []
            for number in range(args.rounds):
                runs = []
                for k in args.k:
                    since = time.time()
                    if args.reload:
                        _open(page, f"{base}?k={k}", args.timeout)
                    else:
                        _pick(page, k, args.timeout)
                    runs.append(_seconds(log, since, k, False))
                rounds.append(runs)
                shown = "  ".join(
                    f"k={k}: {s if s is not None else '?'} s" for k, s in zip(args.k, runs, strict=True)
                )
                print(f"round {number + 1} ({'first time' if number == 0 else 'seen before'}): {shown}")
            first = [s for s in rounds[0] if s is not None]
            later = [s for r in rounds[1:] for s in r if s is not None]
            print(f"slowest change of k, first time: {max(first, default=float('nan')):.3f} s")
            if later:
                print(f"slowest change of k, seen before: {max(later):.3f} s")
            if args.refit is not None:
                since = time.time()
                _open(page, f"{base}?k={args.refit}&refit=1", args.timeout)
                print(f"refit at k={args.refit}: {_seconds(log, since, args.refit, True)} s")
            browser.close()
    finally:
        server.send_signal(signal.SIGINT if args.profile is not None else signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(log.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
