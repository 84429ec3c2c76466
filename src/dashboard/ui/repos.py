"""The Links & code page's repository check: which repositories the view links, running a check
with `st.progress`, and the tables and chart built from the cached answers.

Checking happens only when the user clicks "Check repositories" (never on a page load, never in a
test unless ``GITHUB_API_URL`` points at a local server); ``PAPER_DASHBOARD_REPOCHECK=off``
switches the button off. A run stops at `MAX_REQUESTS_PER_CLICK` requests or a spent rate limit;
the next click resumes with what is left, since every answer is written as it arrives.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.repocheck.checker import Checker, Summary
from dashboard.repocheck.client import Client, Settings
from dashboard.repocheck.columns import checking_enabled
from dashboard.repocheck.hosts import BY_API
from dashboard.repocheck.store import Store, StoreError, limit_problem
from dashboard.repocheck.targets import Target, target_table
from dashboard.schema import REPO_COLUMNS, rows_of
from dashboard.ui import data

MAX_REQUESTS_PER_CLICK = 1000
API_NAMES = {api: host.label for api, host in BY_API.items()}


@st.cache_resource(show_spinner=False, max_entries=4)
def targets(digest: str, _papers: pd.DataFrame) -> tuple[dict[str, Target], pd.DataFrame]:
    """Every repository of the corpus and the (paper row, key) pairs (`targets.target_table`), once;
    from the page's cached link table, so the links are not walked again."""
    return target_table(_papers, data.link_table(digest, _papers))


@st.cache_resource(show_spinner=False, max_entries=4)
def _target_codes(digest: str, _papers: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(paper row, key code) of every (paper, repository) pair, and the keys: `keys_in_view` counts them."""
    _, pairs = targets(digest, _papers)
    codes, keys = pd.factorize(pairs["key"].to_numpy(dtype=object))
    return pairs["row"].to_numpy(dtype=np.int64), codes, np.asarray(keys, dtype=object)


def keys_in_view(digest: str, papers: pd.DataFrame, in_view: np.ndarray) -> np.ndarray:
    """The distinct repositories linked by the papers in view, as keys, in no set order: what the count
    and `pending` need on every run (a dict of 100,000 keys took 13-18 ms a run at a million papers)."""
    rows, codes, keys = _target_codes(digest, papers)
    return keys[np.bincount(codes[in_view[rows]], minlength=len(keys)) > 0]


def targets_in_view(digest: str, papers: pd.DataFrame, in_view: np.ndarray) -> list[Target]:
    """The distinct repositories linked by the papers in view, in corpus order (what a check asks)."""
    by_key, pairs = targets(digest, papers)
    keys = pairs["key"].to_numpy()[in_view[pairs["row"].to_numpy()]]
    return [by_key[key] for key in dict.fromkeys(keys)]


def enabled() -> bool:
    """Whether this server may ask the APIs (``PAPER_DASHBOARD_REPOCHECK`` is not ``off``)."""
    return checking_enabled(os.environ)


def pending(wanted: np.ndarray) -> tuple[int, str]:
    """(how many of the repository keys ``wanted`` have no fresh answer, problem), without the network."""
    path = data.repo_cache_path()
    try:
        store = Store.open_existing(path)
    except StoreError as error:
        return len(wanted), str(error)
    if store is None:
        return len(wanted), ""
    keys = wanted.tolist()
    with store:
        fresh = store.fresh_keys(keys, 7.0)
    return sum(1 for key in keys if key not in fresh), ""


def limits_line(limits: Mapping[str, tuple[int | None, float | None]]) -> str:
    """``GitHub: 4,321 requests left (resets 20:15 UTC)`` for each API with a known limit."""
    parts = []
    now = time.time()
    for api, (remaining, reset_at) in sorted(limits.items()):
        if remaining is None or limit_problem(remaining, reset_at):
            continue  # a limit that is no count or no time (an edited cache) is left out, never raised
        if reset_at is not None and reset_at < now:
            parts.append(f"{API_NAMES.get(api, api)}: limit reset since the last check")
            continue
        when = f" (resets {time.strftime('%H:%M UTC', time.gmtime(reset_at))})" if reset_at else ""
        parts.append(f"{API_NAMES.get(api, api)}: {remaining:,} requests left{when}")
    return " · ".join(parts)


def stored_limits() -> str:
    """`limits_line` of the limits the cache remembers from the last run."""
    try:
        store = Store.open_existing(data.repo_cache_path())
    except StoreError:
        return ""
    if store is None:
        return ""
    with store:
        line = limits_line(store.limits())
        skipped = store.skipped
    if skipped:
        line += (" · " if line else "") + f"skipped {len(skipped):,} unreadable rate limits in the cache"
    return line


def run_check(wanted: list[Target]) -> tuple[Summary | None, Counter[str], str]:
    """Check ``wanted`` with a progress bar: (summary, why the failed ones failed, problem). Answers are
    written as they arrive."""
    try:
        store = Store.open(data.repo_cache_path())
    except StoreError as error:
        return None, Counter(), str(error)
    try:
        settings = Settings.from_env(os.environ)
    except ValueError as error:  # a deadline variable that is no number of seconds
        store.close()
        return None, Counter(), str(error)
    client = Client(settings, max_requests=MAX_REQUESTS_PER_CLICK)
    bar = st.progress(0.0, text="Checking repositories…")

    def progress(done: int, total: int, target: Target | None, facts: object) -> None:
        share = done / total if total else 1.0
        left = limits_line(client.limits())
        bar.progress(
            min(share, 1.0),
            text=f"Checked {done:,} of {total:,} repositories" + (f" · {left}" if left else ""),
        )

    with store:
        summary = Checker(store, client).run(wanted, on_progress=progress)
        reasons = (
            failure_reasons(store, [t.key for t in wanted]) if summary.states.get("error") else Counter()
        )
    bar.empty()
    return summary, reasons, ""


# Why a repository could not be checked, as a user can act on it: the first pattern its stored
# ``detail`` matches names the reason (the client's and the hosts' wording, `dashboard.repocheck`).
FAILURE_REASONS: tuple[tuple[str, str], ...] = (
    (r"rate limit|HTTP 429", "rate limit reached"),
    (r"HTTP 401|bad credentials|token", "token refused"),
    (r"connection failed|timed out|deadline|unreachable|refused", "host unreachable"),
    (r"HTTP 5\d\d", "the host answered with a server error"),
    (r"malformed|unreadable|oversized|not JSON", "the host's answer could not be read"),
    (r"unsupported host", "host not supported"),
)


def failure_reason(detail: str) -> str:
    """The reason, in a user's words, behind an ``error`` answer's ``detail``.

    >>> failure_reason("connection failed (ConnectionRefusedError)")
    'host unreachable'
    >>> failure_reason("HTTP 401: Bad credentials")
    'token refused'
    """
    for pattern, reason in FAILURE_REASONS:
        if re.search(pattern, detail, re.IGNORECASE):
            return reason
    return detail.split(":")[0].strip() or "unknown"


def failure_reasons(store: Store, keys: Sequence[str]) -> Counter[str]:
    """Reasons of the ``error`` answers ``store`` holds for ``keys`` (after a check), counted."""
    answers = store.answers(list(keys))
    failed = answers[answers["state"] == "error"]
    return Counter(failure_reason(str(detail)) for detail in failed["detail"])


def _repositories(n: int) -> str:
    return f"{n:,} {'repository' if n == 1 else 'repositories'}"


def report(summary: Summary, reasons: Counter[str] | None = None) -> tuple[str, bool]:
    """What a check did, in one or two sentences, and whether it is a warning (some failed or are left).

    Failures are said per reason (`failure_reason`), never as a bare count of "error".
    """
    answered = [(s, n) for s, n in summary.states.most_common() if s != "error"]
    failed = summary.states.get("error", 0)
    text = f"Checked {_repositories(summary.checked)}"
    if answered:
        text += ": " + ", ".join(f"{n:,} {s.replace('_', ' ')}" for s, n in answered)
    text += "."
    if failed:
        why = "; ".join(f"{reason} ({n:,})" for reason, n in (reasons or Counter()).most_common())
        text += f" {_repositories(failed).capitalize()} could not be checked" + (f": {why}." if why else ".")
    if summary.fresh:
        text += f" {summary.fresh:,} had a recent answer already."
    if summary.left:
        text += f" {summary.left:,} left: {summary.stopped_because or 'stopped'}. Click again to go on."
    return text, bool(failed or summary.left)


# The repository table's columns that only a check fills (state aside, which says "not checked").
CHECK_COLUMNS: tuple[str, ...] = (
    "repo_state",
    "repo_stars",
    "repo_license",
    "repo_pushed_at",
    "days_after_year",
)


def repository_rows(papers: pd.DataFrame, rows: np.ndarray, keys: pd.Series) -> pd.DataFrame:
    """One row per paper at the positions ``rows`` (papers with their own repository): title,
    repository, state, stars, licence, last push, and days from the start of the paper's year to the
    last push."""
    table = rows_of(papers, rows, ("id", "title", "year", *REPO_COLUMNS))
    year_start = pd.to_datetime(table["year"].astype("string") + "-01-01", errors="coerce", utc=True)
    pushed = pd.to_datetime(table["repo_pushed_at"].replace("", None), errors="coerce", utc=True)
    days = (pushed - year_start).dt.days
    return pd.DataFrame(
        {
            "id": table["id"].to_numpy(),
            "title": table["title"].to_numpy(),
            "year": table["year"].to_numpy(),
            "repository": ["https://" + k for k in keys.to_numpy()[rows]],
            "repo_state": table["repo_state"].to_numpy(),
            "repo_stars": table["repo_stars"].to_numpy(),
            "repo_license": table["repo_license"].to_numpy(),
            "repo_pushed_at": table["repo_pushed_at"].to_numpy(),
            "days_after_year": pd.array(days.to_numpy(), dtype="Int64"),
        }
    )


PLACEHOLDER_STATES = ("placeholder", "readme_only", "empty")


@st.cache_resource(show_spinner=False, max_entries=4)
def waiting_order(
    digest: str, generation: tuple[int, float], _papers: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """(positions, placeholder) of every paper waiting for code, oldest first then by title, once per
    corpus and cache change: a filter keeps the ones in view, in this order, without sorting again."""
    promised = _papers["code_status"].eq("promised").to_numpy(dtype=bool, na_value=False)
    placeholder = _papers["repo_state"].isin(list(PLACEHOLDER_STATES)).to_numpy(dtype=bool)
    rows = np.flatnonzero(promised | placeholder)
    table = rows_of(_papers, rows, ("title", "year"))
    order = table.assign(row=rows).sort_values(["year", "title"], na_position="last", kind="stable")
    ordered = order["row"].to_numpy(dtype=np.int64)
    ordered.setflags(write=False)
    placeholder.setflags(write=False)
    return ordered, placeholder


def waiting_for_code(
    papers: pd.DataFrame, rows: np.ndarray, placeholder: np.ndarray, keys: pd.Series
) -> pd.DataFrame:
    """The papers at ``rows`` (`waiting_order`: code promised with no link, or a placeholder
    repository), in that order: what there is, and where."""
    table = rows_of(papers, rows, ("title", "venue", "year", "repo_state"))
    what = np.where(
        placeholder[rows],
        "repository: " + table["repo_state"].str.replace("_", " ").to_numpy(dtype=object),
        "promised in the abstract, no link",
    )
    this_year = time.gmtime().tm_year
    out = pd.DataFrame(
        {
            "title": table["title"].to_numpy(),
            "venue": table["venue"].to_numpy(),
            "year": table["year"].to_numpy(),
            "years_ago": pd.array((this_year - table["year"]).to_numpy(), dtype="Int64"),
            "what": what,
            "repository": [("https://" + k) if k else "" for k in keys.to_numpy()[rows]],
        }
    )
    return out
