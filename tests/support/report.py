"""A small analysed corpus with hostile titles and readers of the HTML report, shared by its tests."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from dashboard.filters import Filters
from dashboard.report.html import ReportView

HOSTILE = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def report_rows(report: str) -> int:
    body = report.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return body.count("<tr>")


def chart_blocks(report: str) -> list[dict]:
    blocks = re.findall(
        r'<script type="application/json" class="chart-data"[^>]*>(.*?)</script>', report, re.S
    )
    return [json.loads(block) for block in blocks]


def analysed(n: int, title: str = "A title", url: str = "https://github.com/a/b") -> pd.DataFrame:
    rng = np.random.default_rng(0)
    topics = rng.integers(0, 25, n)
    return pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "source": "big.jsonl",
        "venue": rng.choice(["ICLR", "ICML", "NeurIPS"], n),
        "year": pd.array(rng.integers(2021, 2025, n), dtype="Int64"),
        "title": [f"{title} {i} about a long subject that goes on for a while" for i in range(n)],
        "authors": [["Ada Lovelace", "Alan Turing", "Grace Hopper"]] * n,
        "code_url": url,
        "code_status": rng.choice(["released", "none", "promised"], n),
        "links": [[{"url": url, "kind": "code"}]] * n,
        "method_names": [["NetX"]] * n,
        "topic": topics,
        "topic_label": [f"label {t} · words · here" for t in topics],
        "is_outlier": False,
        "x": rng.normal(size=n),
        "y": rng.normal(size=n),
    })  # fmt: skip


def report_view(papers: pd.DataFrame, filters: Filters | None = None) -> ReportView:
    filters = filters or Filters()
    topics = pd.DataFrame({"topic": range(25), "label": [f"label {t} · words · here" for t in range(25)]})
    return ReportView(
        papers=papers,
        mask=filters.mask(papers).to_numpy(dtype=bool),
        filters=filters,
        topic_names={t: f"{t}: label {t}" for t in range(25)},
        topics=topics,
    )
