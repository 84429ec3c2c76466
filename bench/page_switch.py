"""How long a page switch takes, click to settled page, against a bare Streamlit page switch.

`python bench/page_switch.py [--rounds 3] [--index bench/data/index-27k]`

Starts the dashboard on the bundled seeds (and, with ``--index``, on a prebuilt index) and the floor
(`bench/floor/pages.py`: eight pages, each one chart, with the same kind of sidebar links), and in
headless Chromium clicks every sidebar page link in turn, ``--rounds`` times, with a search filter in
the URL. A switch is timed from the click to the page's last change to the DOM (a MutationObserver),
once the script is done and nothing has changed for a second: server and browser together, as a user
sees it. Apps alternate round after round, so machine noise falls on each alike. Prints each page's
median, the median over all switches and the ratio to the floor.

Each switch also counts the processor seconds it cost the browser (Chromium and Playwright's driver)
and the server (the app's process and its helpers): on a shared machine the wall clock holds every
other program's load, and these say which side the time of a page is spent on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from floor import start  # noqa: E402  (bench/ is the script's folder: the same start as the floor's)

LINKS = '[data-testid="stSidebar"] [data-testid="stPageLink"] a'
WATCH = """() => {
  window.__lastChange = performance.now();
  new MutationObserver(() => { window.__lastChange = performance.now(); })
    .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
STATE = '() => document.querySelector(\'[data-testid="stApp"]\')?.getAttribute("data-test-script-state")'


def settled_at(page: Any, clicked: float, quiet: float = 1.0, timeout: float = 120) -> float:
    """Seconds from ``clicked`` (page clock, ms) to the last DOM change before ``quiet`` s of calm."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if page.evaluate(STATE) == "running":
            continue
        now, last = page.evaluate("() => [performance.now(), window.__lastChange]")
        if last > clicked and (now - last) / 1000 >= quiet and page.evaluate(STATE) == "notRunning":
            return (last - clicked) / 1000
    raise RuntimeError("the page did not settle")


def cpu_seconds(server_pid: int) -> tuple[float, float]:
    """Processor seconds so far of (the browser's processes, the server's process and its children):
    every process this script started, told apart by whether the server is among its ancestors."""
    browser = server = 0.0
    for process in psutil.Process(os.getpid()).children(recursive=True):
        try:
            used = sum(process.cpu_times()[:2])
            if process.pid == server_pid or server_pid in (p.pid for p in process.parents()):
                server += used
            else:
                browser += used
        except psutil.Error:  # it ended meanwhile
            continue
    return browser, server


def switches(
    browser: Any, url: str, rounds: int, server_pid: int, cpu: dict[str, list[tuple[float, float]]]
) -> dict[str, list[float]]:
    """Seconds per page link clicked, ``rounds`` times round every link; each switch's processor
    seconds (browser, server) go to ``cpu``."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(f"{url}/?q=model", timeout=300_000)
    page.wait_for_selector(LINKS, timeout=300_000)
    page.evaluate(WATCH)
    settled_at(page, 0.0)
    seen: dict[str, list[float]] = {}
    n_links = page.locator(LINKS).count()
    for _ in range(rounds):
        for number in [*range(1, n_links), 0]:
            link = page.locator(LINKS).nth(number)
            title = link.inner_text().split("\n")[-1].strip()
            before = cpu_seconds(server_pid)
            clicked = page.evaluate("() => performance.now()")
            link.click()
            seen.setdefault(title, []).append(settled_at(page, clicked))
            after = cpu_seconds(server_pid)
            cpu.setdefault(title, []).append((after[0] - before[0], after[1] - before[1]))
    context.close()
    return seen


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--index", help="a prebuilt index to time too (e.g. bench/data/index-27k)")
    args = parser.parse_args(argv)
    apps: dict[str, tuple[str, list[str]]] = {"floor": ("bench/floor/pages.py", []), "seeds": ("app.py", [])}
    if args.index:
        apps["index"] = ("app.py", ["--corpus", args.index])
    servers = {name: start(script, tuple(app_args), timeout=300) for name, (script, app_args) in apps.items()}
    times: dict[str, dict[str, list[float]]] = {name: {} for name in apps}
    cpu: dict[str, dict[str, list[tuple[float, float]]]] = {name: {} for name in apps}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                      "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
            )  # fmt: skip
            for attempt in range(1, args.rounds + 1):
                for name in apps:
                    process, url = servers[name]
                    for title, values in switches(browser, url, 1, process.pid, cpu[name]).items():
                        times[name].setdefault(title, []).extend(values)
                        used = cpu[name][title][-1]
                        print(
                            f"round {attempt} {name:>6} {title:<14} {values[-1]:5.2f} s"
                            f"  (processor: browser {used[0]:4.2f} s, server {used[1]:4.2f} s)",
                            flush=True,
                        )
            browser.close()
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=20)
    floor = statistics.median(v for values in times["floor"].values() for v in values)
    print("\nclick to settled page, median seconds (goal: seeds <= 1.0, 27k index <= 1.5)")
    print(f"  {'floor':<8} all pages {floor:5.2f}")
    for name in apps:
        if name == "floor":
            continue
        every = [v for values in times[name].values() for v in values]
        per_page = ", ".join(f"{t} {statistics.median(v):.2f}" for t, v in times[name].items())
        median = statistics.median(every)
        print(f"  {name:<8} all pages {median:5.2f} (max {max(every):.2f}; {median / floor:.1f}x the floor)")
        print(f"           {per_page}")
    print("\nprocessor seconds per switch, median (browser / server)")
    for name in apps:
        per_page = ", ".join(
            f"{t} {statistics.median(b for b, _ in v):.2f}/{statistics.median(s for _, s in v):.2f}"
            for t, v in cpu[name].items()
        )
        print(f"  {name:<8} {per_page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
