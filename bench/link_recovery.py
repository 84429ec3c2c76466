"""Code links as authors write them: how many abstracts mention a code host but get no code link.

    python bench/link_recovery.py [--before REV] [--show N] [--hostile] [PATH]
    # default PATH: ../shared/corpora/multiconf-2021-2024/papers.jsonl.gz

Runs `dashboard.text.links` twice over the corpus: the version of ``src/dashboard/text/links.py`` at git
revision ``REV`` (``git show REV:src/dashboard/text/links.py`` loaded as a module of its own, so nothing in
the working tree changes), then the working tree's. Default ``REV`` is the last commit before the
loose-link work of issue 51. Each run gets the abstract cleaned with its own URL spans, as
`dashboard.text.enrich` does.

Printed per run:
- abstracts holding a github-like string (``github|gitlab|git\\.io``, any case);
- of those, how many get no code link: no link of kind ``code`` and no ``code_url`` from
  `code_release` (a shortener counts once it is the paper's code), split by ``code_status``;
- papers per ``code_status`` over the whole corpus (``stated``: code said to be available, no link);
- the ``code_status`` of "Context-Aware Analysis of Group Submissions..." (AAAI 2023), which the old
  rule marked ``promised`` although it promises no code.
- papers whose code link is a shortener (``git.io``...): released, repository unknown.
``--show N`` prints N remaining misses of the working tree's version (status and the text around the
string) to read by eye. ``--hostile`` times `extract_links`, `code_release` and `clean_markup` of the
working tree on 100 KB hostile strings (the cases of ``tests/text/test_links_loose.py``; each call should
take well under a second).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

from dashboard.text import links as current_links
from dashboard.text.clean import clean_markup

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"
BEFORE_REV = "f50de30"  # main before issue 51's link work
GITHUB_LIKE = re.compile(r"github|gitlab|git\.io", re.IGNORECASE)
FALSE_PROMISE_TITLE = "Context-Aware Analysis of Group Submissions"
SHORTENERS = frozenset(current_links.SHORTENER_HOSTS)


def module_at(rev: str) -> ModuleType:
    """`dashboard.text.links` as committed at ``rev``, imported under a name of its own."""
    try:
        source = subprocess.run(
            ["git", "show", f"{rev}:src/dashboard/text/links.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except subprocess.CalledProcessError as error:
        sys.exit(f"git show {rev}:src/dashboard/text/links.py failed: {error.stderr.strip()}")
    folder = Path(tempfile.mkdtemp(prefix="links_before_"))
    path = folder / "links_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("links_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_records(path: Path) -> list[dict[str, object]]:
    """The records of a JSON-lines corpus (gzip or plain)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def measure(module: ModuleType, records: list[dict[str, object]]) -> dict[str, object]:
    """Counts of one version of the links module over ``records``."""
    github_like = 0
    misses: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    shown: list[tuple[str, str]] = []
    promise_check = ""
    shortened = 0
    for record in records:
        abstract = str(record.get("abstract") or "")
        spans = module.find_urls(abstract)
        found = module.extract_links(abstract, url_spans=spans)
        code_url, _, status = module.code_release(found, clean_markup(abstract, url_spans=spans))
        statuses[status] += 1
        shortened += bool(code_url) and module.url_host(code_url) in SHORTENERS
        if FALSE_PROMISE_TITLE in str(record.get("title") or ""):
            promise_check = status
        match = GITHUB_LIKE.search(abstract)
        if not match:
            continue
        github_like += 1
        if code_url or any(link["kind"] == "code" for link in found):
            continue
        misses[status] += 1
        shown.append((status, abstract[max(0, match.start() - 70) : match.end() + 70]))
    return {
        "github_like": github_like,
        "misses": misses,
        "statuses": statuses,
        "promise_check": promise_check,
        "shown": shown,
        "shortened": shortened,
    }


def report(name: str, figures: dict[str, object]) -> None:
    """Print one run's figures."""
    misses: Counter[str] = figures["misses"]  # type: ignore[assignment]
    statuses: Counter[str] = figures["statuses"]  # type: ignore[assignment]
    print(f"\n{name}")
    print(f"  abstracts with a github-like string: {figures['github_like']:,}")
    print(f"  ... with no code link: {sum(misses.values()):,}  ({_counts(misses)})")
    print(
        f"  ... of which not a github.io project page: {sum(misses.values()) - misses['project_page_only']:,}"
    )
    print(f"  code_status over all papers: {_counts(statuses)}")
    print(f"  stated, no link (code said to be available): {statuses.get('stated', 0):,}")
    print(f"  code link on a shortener (repository unknown): {figures['shortened']:,}")
    print(f"  '{FALSE_PROMISE_TITLE}...': {figures['promise_check'] or 'not in this corpus'}")


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{status} {n:,}" for status, n in counter.most_common())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--before", default=BEFORE_REV, help="git revision of the 'before' links.py")
    parser.add_argument("--show", type=int, default=0, help="print this many remaining misses")
    parser.add_argument("--hostile", action="store_true", help="time 100 KB hostile strings instead")
    options = parser.parse_args()
    if options.hostile:
        hostile()
        return
    if not options.path.exists():
        sys.exit(f"corpus not found: {options.path}")
    records = read_records(options.path)
    print(f"{len(records):,} records from {options.path}")
    before = measure(module_at(options.before), records)
    after = measure(current_links, records)
    report(f"before (links.py at {options.before})", before)
    report("after (working tree)", after)
    for status, text in after["shown"][: options.show]:  # type: ignore[index]
        print(f"  [{status}] …{' '.join(text.split())}…")


def hostile() -> None:
    """Seconds per call on each 100 KB hostile string (wall clock, so a busy machine shows here)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_links_loose import HOSTILE  # the same strings the hang-guard tests use

    print(f"{'input':16} {'extract_links':>14} {'code_release':>13} {'clean_markup':>13}")
    worst = 0.0
    for name, text in HOSTILE.items():
        start = time.perf_counter()
        found = current_links.extract_links(text)
        extracted = time.perf_counter()
        current_links.code_release(found, text)
        released = time.perf_counter()
        clean_markup(text)
        cleaned = time.perf_counter()
        times = (extracted - start, released - extracted, cleaned - released)
        worst = max(worst, *times)
        print(f"{name:16} {times[0]:13.3f}s {times[1]:12.3f}s {times[2]:12.3f}s")
    print(f"slowest call: {worst:.3f}s")


if __name__ == "__main__":
    main()
