"""axe-core accessibility checks in Chromium, shared by the accessibility and review-page browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support.browser import (  # the module's skips, app server and browser fixtures, shared
    CHARTS_DRAWN_JS,
    no_errors,
    settle,
)
from support.server import REPO, running_app

AXE = REPO / "tests" / "axe" / "node_modules" / "axe-core" / "axe.min.js"


THEMES = {"light": "", "dark": "embed_options=dark_theme"}  # Streamlit's own switch (as test_screenshots)


FAILING = ("serious", "critical")


# axe's own result, cut to what the report needs: per rule, its impact, how many nodes, two examples.
AXE_RUN_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, nodes: v.nodes.length,
    examples: v.nodes.slice(0, 2).map(
      n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 300)),
  }));
}"""


@pytest.fixture(scope="module")
def floor_url() -> Iterator[str]:
    with running_app(script="bench/floor/app.py") as url:
        yield url


def run_axe(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return list(page.evaluate(AXE_RUN_JS))


def checked_page(page: Any) -> None:
    settle(page, quiet=0.4)
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)
    page.wait_for_timeout(300)  # charts and grids finish drawing after the script
    no_errors(page)
