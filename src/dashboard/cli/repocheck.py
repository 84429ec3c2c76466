"""``paper-dashboard check-code PATH... [--cache FILE] [--max-age DAYS] [--max-requests N] [--out FILE]``.

Checks every repository the corpus links to (every host in `dashboard.repocheck.hosts`), keeping
the answers in the cache, with a progress bar on a terminal and a summary of states at the end.
``--out`` writes one row per repository (``repo_url, host, repo, state, stars, license, created_at, pushed_at,
checked_at, moved_to, detail``) as CSV, JSONL or Parquet by extension. ``--offline`` (or
``PAPER_DASHBOARD_REPOCHECK=off``) asks nothing and reports what the cache knows.

Each request ends within its deadline (``PAPER_DASHBOARD_REQUEST_DEADLINE``, 60 s by default), and
the run within ``--deadline`` (``PAPER_DASHBOARD_RUN_DEADLINE``, an hour by default); a rate-limit
wait longer than 30 s is not waited. The summary says the deadlines and how long was waited.

Exit status: 0 when every repository has an answer (none an error), 1 when some were left (rate
limit, budget, errors, Ctrl-C; what was answered is kept), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from dashboard.cli import common as cli
from dashboard.cli.common import add_input_arguments
from dashboard.repocheck import hosts
from dashboard.repocheck.checker import Checker, Summary
from dashboard.repocheck.client import RUN_DEADLINE_VARIABLE, Client, Settings, seconds
from dashboard.repocheck.columns import checking_enabled, skipped_message
from dashboard.repocheck.store import DEFAULT_MAX_AGE_DAYS, Store, StoreError, default_path
from dashboard.repocheck.targets import Target, targets_in
from dashboard.schema import REPO_STATES

OUT_COLUMNS: tuple[str, ...] = (
    "repo_url", "host", "repo", "state", "stars", "license", "created_at", "pushed_at", "checked_at",
    "moved_to", "detail",
)  # fmt: skip
OUT_FORMATS = ("csv", "jsonl", "parquet")


def _out_path(text: str) -> Path:
    from dashboard import export

    try:
        fmt = export.format_of(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if fmt not in OUT_FORMATS:
        raise argparse.ArgumentTypeError(f"--out must end in .csv, .jsonl or .parquet (got {text})")
    return Path(text)


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of days >= 0, got {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        return seconds(text, "--deadline")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_check_code_command(subparsers: Any) -> None:
    """Register ``check-code``."""

    parser = subparsers.add_parser(
        "check-code",
        help="check that the repositories papers link to exist and hold code (cached)",
        description=f"Ask {hosts.labels()} about every repository the papers link to and keep the answers "
        f"in a SQLite cache. API bases come from {', '.join(h.base_variable for h in hosts.HOSTS.values())}; "
        f"tokens from {', '.join(h.token_variable for h in hosts.HOSTS.values())} (a GITHUB_TOKEN raises "
        "GitHub's limit from 60 to 5,000 requests an hour).",
    )
    add_input_arguments(parser)
    add = parser.add_argument
    add("--cache", type=Path, metavar="FILE", help="the SQLite cache (default: PAPER_DASHBOARD_CACHE, else "
        "the user's data folder)")  # fmt: skip
    add("--max-age", type=_days, metavar="DAYS", default=DEFAULT_MAX_AGE_DAYS,
        help="re-check answers older than this (default 7; 0 re-checks all, conditionally)")  # fmt: skip
    add("--max-requests", type=_positive, metavar="N", help="stop after N requests (the next run goes on)")
    add("--out", type=_out_path, metavar="FILE", help="one row per repository: .csv, .jsonl or .parquet")
    add("--deadline", type=_seconds, metavar="SECONDS", help="end the run after this long (default: "
        f"{RUN_DEADLINE_VARIABLE}, else 3600); the next run goes on")  # fmt: skip
    parser.add_argument("--offline", action="store_true", help="ask nothing; report what the cache knows")
    parser.set_defaults(run=run_check_code)


class ProgressBar:
    """A one-line progress bar on a terminal (nothing when the stream is not one)."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.active = stream.isatty()
        self.states: Counter[str] = Counter()
        self._last = 0.0

    def __call__(self, done: int, total: int, target: Target | None, facts: Any) -> None:
        if facts is not None:
            self.states[facts.state] += 1
        now = time.monotonic()
        if not self.active or (now - self._last < 0.1 and done < total):
            return
        self._last = now
        filled = int(self.width * done / total) if total else self.width
        line = f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done:,}/{total:,}"
        top = ", ".join(f"{s} {n:,}" for s, n in self.states.most_common(3))
        self.stream.write(line + (f"  {top}" if top else "") + "\033[K")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.active:
            self.stream.write("\n")
            self.stream.flush()


def out_rows(targets: list[Target], answers: pd.DataFrame) -> pd.DataFrame:
    """One row per repository in ``targets`` (``not_checked`` where the cache has no answer)."""
    by_key = {row["key"]: row for row in answers.to_dict("records")}
    rows = []
    for target in targets:
        answer = by_key.get(target.key)
        checked = answer["checked_at"] if answer else None
        rows.append(
            {
                "repo_url": target.url,
                "host": target.host,
                "repo": target.repo,
                "state": answer["state"] if answer else "not_checked",
                "stars": answer["stars"] if answer else None,
                "license": answer["license"] if answer else "",
                "created_at": answer["created_at"] if answer else "",
                "pushed_at": answer["pushed_at"] if answer else "",
                "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(checked)) if checked else "",
                "moved_to": answer["moved_to"] if answer else "",
                "detail": answer["detail"] if answer else "",
            }
        )
    frame = pd.DataFrame(rows, columns=list(OUT_COLUMNS))
    frame["stars"] = pd.array([None if pd.isna(v) else int(v) for v in frame["stars"]], dtype="Int64")
    return frame


def summary_lines(summary: Summary, states: Counter[str], settings: Settings | None = None) -> list[str]:
    """The summary printed at the end: how many, by state, why the run stopped, and (given the
    settings) the deadlines and waits that bound it."""
    lines = [
        f"{summary.total:,} repositories: {summary.fresh:,} answered recently, "
        f"{summary.checked:,} checked now, {summary.left:,} left"
    ]
    lines += [f"  {state:<12}{states[state]:>7,}" for state in REPO_STATES if states.get(state)]
    if summary.stopped_because:
        lines.append(f"stopped: {summary.stopped_because}")
    if settings is not None:
        run = f"{settings.run_deadline:g} s per run" if settings.run_deadline is not None else "none per run"
        lines.append(
            f"deadlines: {settings.deadline:g} s per request, {run}; rate-limit waits of at most "
            f"{settings.max_wait:g} s (waited {summary.waited:.0f} s)"
        )
    if summary.left:
        lines.append("run the same command again to check the rest (answers so far are kept)")
    return lines


def run_check_code(args: argparse.Namespace) -> int:
    """Load the corpus, check its repositories, print the summary, write --out; the exit status."""
    from dashboard import export

    stream = sys.stderr
    result = cli.load_inputs(args.paths)
    targets = targets_in(result.papers)
    cache = args.cache or default_path(os.environ)
    try:
        store = Store.open(cache)
    except StoreError as error:
        print(f"paper-dashboard: {error}", file=stream)
        return cli.EXIT_USAGE
    offline = args.offline or not checking_enabled(os.environ)
    try:
        options = {} if args.deadline is None else {"run_deadline": args.deadline}
        settings = Settings.from_env(os.environ, **options)
    except ValueError as error:
        store.close()
        print(f"paper-dashboard: {error}", file=stream)
        return cli.EXIT_USAGE
    with store:
        checker = Checker(store, Client(settings, max_requests=args.max_requests), max_age_days=args.max_age)
        bar = ProgressBar(stream)
        interrupted = False
        if offline:
            pending = checker.pending(targets)
            summary = Summary(total=len(targets), fresh=len(targets) - len(pending), left=len(pending),
                              stopped_because="offline: nothing was asked")  # fmt: skip
        else:
            try:
                summary = checker.run(targets, on_progress=bar)
            except KeyboardInterrupt:
                interrupted = True
                pending = checker.pending(targets)
                summary = Summary(total=len(targets), fresh=len(targets) - len(pending), left=len(pending),
                                  stopped_because="interrupted")  # fmt: skip
            finally:
                bar.close()
        answers = store.answers([t.key for t in targets])
        skipped = skipped_message(cache, store.skipped)
    rows = out_rows(targets, answers)
    states = Counter(rows["state"])
    print(f"cache: {cache}", file=stream)
    for line in summary_lines(summary, states, None if offline else settings):
        print(line, file=stream)
    if skipped:
        print(skipped, file=stream)
    if args.out is not None:
        try:
            export.write(rows, args.out)
        except OSError as error:
            print(f"paper-dashboard: cannot write {args.out}: {error.strerror or error}", file=stream)
            return cli.EXIT_USAGE
        print(f"wrote {len(rows):,} repositories to {args.out}", file=stream)
    complete = not interrupted and summary.left == 0 and states.get("error", 0) == 0
    complete = complete and states.get("not_checked", 0) == 0
    return cli.EXIT_OK if complete else cli.EXIT_SKIPPED
