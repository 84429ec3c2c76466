"""Repository checks against the local fake APIs (tests/repo_api.py): speed, cache size, conditional
re-checks. The fake server runs in its own process, so client and server do not share a GIL.

    python bench/repocheck.py                      # the 27k corpus's repositories
    python bench/repocheck.py --limit 300          # the first 300 (quick, while developing)
    python bench/repocheck.py --corpus FILE...     # any corpus

Prints: repositories found and the time to find them; a cold check (empty cache), a warm one
(answers fresh: nothing asked) and a forced re-check (``--max-age 0``: every request conditional
where an ETag was given, 304s reused); requests per second for each; the cache's size on disk.
The made-up answers (`World.made_up`) are mostly live, with some of every other state, so the number
of requests per repository is like a real run's (1 for large repositories, 2-3 for small ones).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))
CORPUS_27K = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"


def serve() -> None:
    """Run the fake APIs until killed; print the environment line first."""
    from repo_api import World, serving

    with serving(World(auto=True)) as env:
        print(" ".join(f"{k}={v}" for k, v in env.items()), flush=True)
        while True:
            time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", nargs="+", type=Path, default=[CORPUS_27K])
    parser.add_argument("--limit", type=int, default=None, help="check only the first N repositories")
    parser.add_argument("--in-flight", type=int, default=8, help="requests in flight (default 8)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return

    from dashboard import corpus
    from dashboard.repocheck.checker import Checker
    from dashboard.repocheck.client import Client, Settings
    from dashboard.repocheck.store import Store, file_size
    from dashboard.repocheck.targets import targets_in

    started = time.perf_counter()
    papers = corpus.load(args.corpus).papers
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    targets = targets_in(papers)
    find_s = time.perf_counter() - started
    hosts: dict[str, int] = {}
    for target in targets:
        hosts[target.host] = hosts.get(target.host, 0) + 1
    print(f"corpus: {len(papers):,} papers (read in {load_s:.1f} s)")
    print(f"repositories: {len(targets):,} ({', '.join(f'{h} {n:,}' for h, n in sorted(hosts.items()))}); "
          f"found in {find_s:.2f} s")  # fmt: skip
    if args.limit:
        targets = targets[: args.limit]
        print(f"checking the first {len(targets):,}")

    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        env = dict(item.split("=", 1) for item in server.stdout.readline().split())
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder) / "repositories.sqlite"
            settings = Settings.from_env(env, max_in_flight=args.in_flight, timeout=30.0)

            def run(label: str, max_age: float) -> None:
                client = Client(settings)
                with Store.open(cache) as store:
                    checker = Checker(store, client, max_age_days=max_age)
                    began = time.perf_counter()
                    summary = checker.run(targets)
                    seconds = time.perf_counter() - began
                counts = client.counts
                rate = counts.requests / seconds if seconds else 0.0
                print(
                    f"{label}: {seconds:.2f} s for {len(targets):,} repositories "
                    f"({len(targets) / seconds:,.0f} repositories/s); {counts.requests:,} requests "
                    f"({rate:,.0f}/s), {counts.conditional:,} conditional, "
                    f"{counts.not_modified:,} answered 304, "
                    f"{counts.requests - counts.conditional:,} unconditional; checked {summary.checked:,}, "
                    f"fresh {summary.fresh:,}, left {summary.left:,}"
                )
                if label.startswith("cold"):
                    states = ", ".join(f"{s} {n:,}" for s, n in summary.states.most_common())
                    print(f"  states: {states}")

            run("cold (empty cache)", 7.0)
            size = file_size(cache)
            per_repository = size / max(len(targets), 1)
            print(f"cache size: {size / 1e6:.2f} MB ({per_repository:,.0f} bytes a repository, WAL included)")
            run("warm (answers fresh)", 7.0)
            run("re-check (--max-age 0)", 0.0)
            with Store.open(cache) as store:
                frame = store.answers()
            no_etag = int(frame["state"].isin(["not_found", "error", "blocked"]).sum())
            print(
                f"  answers without an ETag to send (not_found, blocked, error: APIs give none): {no_etag:,}"
            )
            print(f"cache size after the re-check: {file_size(cache) / 1e6:.2f} MB")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
