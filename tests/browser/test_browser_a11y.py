"""Accessibility in the real browser (issue 19): axe-core on every page in both themes, and the keyboard.

axe-core comes from npm (`tests/axe/package.json`, installed by `.ci/run` with ``npm ci``). Each page is
checked in the light and the dark theme, also with a paper open and with Compare filled; a violation of
impact serious or critical fails the test unless the floor page (`bench/floor/app.py`: a bare Streamlit
page with the same settings) has the same rule broken in the same theme, since that one is Streamlit's.
The counts per page go to the terminal and to artifacts/a11y/axe-<theme>.json.

One app server, one floor server and one browser; each theme is one session that moves from page to
page without reloading (a reload would lose the theme).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.axe import AXE, AXE_RUN_JS, FAILING, THEMES, checked_page, floor_url, run_axe  # noqa: F401
from support.browser import (  # the module's skips, app server and browser fixtures, shared
    CHARTS_DRAWN_JS,
    CHROMIUM,
    SOFT_NAVIGATE,
    app_url,
    browser,
    counts,
    href,
    no_errors,
    open_page,
    query,
    settle,
    wait_for_query,
)
from support.server import REPO, running_app

OUT = REPO / "artifacts" / "a11y"
BACKGROUNDS = {"light": "rgb(255, 255, 255)", "dark": "rgb(15, 17, 23)"}  # .streamlit/config.toml
IMPACTS = ("critical", "serious", "moderate", "minor")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
    # CI installs axe-core (.ci/run), so there a missing file fails rather than skips.
    pytest.mark.skipif(
        not AXE.exists() and not os.environ.get("CI"),
        reason=f"needs axe-core at {AXE} (cd tests/axe && npm ci)",
    ),
]


def _seed_ids() -> list[str]:
    from dashboard import corpus

    return [str(i) for i in corpus.load([REPO / "seeds"]).papers["id"][:2]]


def states() -> dict[str, str]:
    """Every page the app has, plus a paper open and Compare filled: name -> path."""
    first, second = _seed_ids()
    return {
        "Overview": "/",
        "Papers": "/papers",
        "Papers, a paper open": f"/papers?paper={first}",
        "Topics, a topic picked": "/topics?topic=0",  # a chip in the sidebar's topic filter
        "Terms": "/terms",
        "Trends": "/trends",
        "Reviews": "/reviews",  # the seeds carry no scores: the one line saying so
        "Links & code": "/links",
        "Compare": "/compare",
        "Compare, two papers": f"/compare?cmp={first}&cmp={second}",
        "Library": "/library",
    }


def by_impact(violations: list[dict[str, Any]]) -> Counter[str]:
    """Nodes per impact: ``Counter({'serious': 3, 'moderate': 1})``."""
    total: Counter[str] = Counter()
    for v in violations:
        total[v["impact"] or "minor"] += v["nodes"]
    return total


def _line(name: str, violations: list[dict[str, Any]]) -> str:
    impact = by_impact(violations)
    rules = ", ".join(f"{v['id']}({v['impact']},{v['nodes']})" for v in violations)
    return f"  {name:<22} " + " ".join(f"{i}={impact[i]:<3}" for i in IMPACTS) + f"  {rules}"


@pytest.mark.parametrize("theme", THEMES)
def test_axe_finds_nothing_serious_the_floor_has_not(
    app_url: str, floor_url: str, browser: Any, theme: str, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix = f"?{THEMES[theme]}" if THEMES[theme] else ""
    page = open_page(browser, width=1280, height=900)
    page.goto(f"{floor_url}/{suffix}")
    checked_page(page)
    floor = run_axe(page)
    page.close()
    allowed = {v["id"] for v in floor if v["impact"] in FAILING}

    page = open_page(browser, width=1280, height=900)
    page.goto(f"{app_url}/{suffix}")
    settle(page)
    background = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
    )
    assert background == BACKGROUNDS[theme]
    results: dict[str, list[dict[str, Any]]] = {"floor": floor}
    seconds: dict[str, float] = {}
    for name, path in states().items():
        started = time.monotonic()
        page.evaluate(SOFT_NAVIGATE, path)  # within the session: the theme stays
        checked_page(page)
        drawn = time.monotonic()
        results[name] = run_axe(page)
        seconds[name] = (drawn - started, time.monotonic() - drawn)
    page.close()

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"axe-{theme}.json").write_text(json.dumps(results, indent=1))
    with capsys.disabled():
        print(f"\naxe-core violations (nodes per impact), {theme} theme:")
        for name, violations in results.items():
            took = seconds.get(name)
            print(_line(name, violations) + (f"  [{took[0]:.1f}+{took[1]:.1f} s]" if took else ""))
    ours = {
        name: [v for v in violations if v["impact"] in FAILING and v["id"] not in allowed]
        for name, violations in results.items()
        if name != "floor"
    }
    assert not any(ours.values()), json.dumps({k: v for k, v in ours.items() if v}, indent=1)
