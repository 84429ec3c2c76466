"""The dashboard against Streamlit's own floor: `python bench/floor.py [--tries 5]`.

Starts the dashboard (on the bundled seeds) and the floor app (`bench/floor/app.py`: one line of
sidebar text and one Plotly chart, same Streamlit settings), and times in Chromium, from navigation
start (the page's own clock), when the sidebar's ``N of M papers`` line and the first Plotly chart
appear. Each try is a fresh browser context; "cold" is the first visit after a server start, sent
as soon as the server's health check answers (as a load balancer sends one; the dashboard's check
waits for its warm-up's imports, `dashboard.ui.warmup.HealthAfterImports`), "warm" a second visit to
the same server. The two apps alternate, try after try, so machine noise
falls on both alike. Prints each try and the medians, and the dashboard/floor ratios (target 1.2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.server import free_port, healthy  # noqa: E402

APPS = {"dashboard": "app.py", "floor": "bench/floor/app.py"}
COUNT_SEEN = """() => /\\d[\\d,]* of \\d[\\d,]* papers/.test(
    (document.querySelector('[data-testid="stSidebar"]') || {}).innerText || '')"""
CHART_SEEN = "() => !!document.querySelector('[data-testid=\"stPlotlyChart\"] .main-svg')"


def start(script: str, app_args: tuple[str, ...] = (), timeout: float = 120) -> tuple[subprocess.Popen, str]:
    """``streamlit run script -- app_args`` on a free port: (process, its URL) once it answers."""
    port = free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    if app_args:
        command += ["--", *app_args]
    # Python as a user runs it: bytecode cached after the first start (a machine that sets
    # PYTHONDONTWRITEBYTECODE, as this one's image does, would compile the dashboard's modules on
    # every start, and the floor has none to compile).
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while not healthy(url):
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"{script} did not start")
        time.sleep(0.2)
    return process, url


def visit(browser: Any, url: str, timeout: float = 120) -> tuple[float, float]:
    """Seconds from navigation start to the count line and to the first chart, in a fresh context."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(COUNT_SEEN, timeout=timeout * 1000, polling="raf")
    count = page.evaluate("() => performance.now()") / 1000
    page.wait_for_function(CHART_SEEN, timeout=timeout * 1000, polling="raf")
    chart = page.evaluate("() => performance.now()") / 1000
    context.close()
    return count, chart


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args(argv)
    times: dict[tuple[str, str, str], list[float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
        )  # fmt: skip
        for attempt in range(1, args.tries + 1):
            for name, script in APPS.items():
                process, url = start(script)
                try:
                    for state in ("cold", "warm"):
                        count, chart = visit(browser, url)
                        times.setdefault((name, state, "count"), []).append(count)
                        times.setdefault((name, state, "chart"), []).append(chart)
                        seen = f"N of M {count:5.2f} s, first chart {chart:5.2f} s"
                        print(f"try {attempt} {name:>9} {state}: {seen}")
                finally:
                    process.terminate()
                    process.wait(timeout=20)
        browser.close()
    print("\nmedian seconds from navigation start   dashboard   floor   ratio (target <= 1.2)")
    for state in ("cold", "warm"):
        for what, label in (("count", "N of M papers"), ("chart", "first chart")):
            ours = statistics.median(times[("dashboard", state, what)])
            floor = statistics.median(times[("floor", state, what)])
            print(f"  {state:>4} {label:<30} {ours:9.2f} {floor:7.2f} {ours / floor:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
