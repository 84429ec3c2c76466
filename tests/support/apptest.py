"""The AppTest fixture over the real app.py and the helpers that read its count line."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]


APP = str(REPO / "app.py")


COUNT_LINE = re.compile(r"\*\*([\d,]+) of ([\d,]+) papers\*\*")


def app(page: str = "papers", query: dict[str, Any] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(f"src/dashboard/app_pages/{page}.py")
    return at.run()


def count_line(at: AppTest) -> tuple[int, int]:
    for element in at.sidebar.markdown:
        match = COUNT_LINE.fullmatch(element.value)
        if match:
            return int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))
    raise AssertionError("no 'N of M papers' line in the sidebar")


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def full_titles(shown: Iterable[str], titles: Iterable[str]) -> list[str]:
    """The title among ``titles`` that each of the Papers table's ``shown`` titles stands for.

    The table cuts a title longer than its row's lines at a word with "…", after a space put after a
    hyphen (`components.selectable_papers`); a cut title names the one title it begins. A title that
    begins none, or more than one, is left as shown, so a comparison with it fails.
    """
    known = list(dict.fromkeys(str(t) for t in titles))
    whole = set(known)
    found = []
    for title in map(str, shown):
        if title in whole or not title.endswith("…"):
            found.append(title)
            continue
        start = title[:-1].replace("- ", "-")
        matches = [t for t in known if t.startswith(start)]
        found.append(matches[0] if len(matches) == 1 else title)
    return found
