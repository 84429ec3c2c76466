"""Benchmark the corpus engine: papers/s, MB/s and peak memory, reading and enrichment timed apart.

    python bench/parse.py                 # the seeds and the 27k corpus (../shared/corpora)
    python bench/parse.py PATH... --repeat 5 --profile
    python bench/parse.py --one-word 100000  # N one-word paragraphs: all different, and all "w"

Each corpus runs in a fresh Python process, so its peak memory (ru_maxrss) is its own. Times are the
best of --repeat runs: "read" is `corpus.load(..., derive=False)` (file I/O, decoding, parsing, field
mapping: helper A's part), "enrich" is `enrich.add_derived_columns` (cleaning, links, code status,
method names, datasets: helper B's part). MB/s is over the bytes on disk (compressed for .gz).
Targets on the 2-core machine: seeds < 0.3 s, 27k < 5 s, both with every derived field.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
DEFAULT_CORPORA = {
    "seeds (57)": [REPO / "seeds"],
    "multiconf 27k (.jsonl.gz)": [CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"],
}
TARGETS = {"seeds (57)": 0.3, "multiconf 27k (.jsonl.gz)": 5.0}


def input_bytes(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        files = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
        total += sum(p.stat().st_size for p in files)
    return total


def one_word_files(n: int, folder: Path) -> dict[str, list[Path]]:
    """Two files of ``n`` one-word paragraphs under a header line (issue 56: a million of them took
    minutes): ``w1``, ``w2``... all different, and ``w`` every time (one text, duplicate warnings)."""
    files = {}
    for label, word in ((f"{n:,} one-word, different", "w{}"), (f"{n:,} one-word, all 'w'", "w")):
        path = folder / f"one-word-{n}-{'same' if word == 'w' else 'different'}.txt"
        path.write_text(
            "# One-word paragraphs\n\n" + "\n\n".join(word.format(i) for i in range(n)) + "\n",
            encoding="utf-8",
        )
        files[label] = [path]
    return files


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (enrich's worker processes): what a
    run costs, less sensitive than wall time to the other jobs of a shared machine."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(paths: list[Path], repeat: int, profile: bool) -> dict:
    """Runs inside the child process."""
    started = time.perf_counter()
    from dashboard import corpus
    from dashboard.text import enrich

    import_seconds = time.perf_counter() - started
    rss_after_imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    reads, enrichments, papers = [], [], 0
    raw = full = None
    read_cpu, enrich_cpu = [], []
    for _ in range(repeat):
        raw = full = None  # drop the previous run's tables: peak memory is that of one load
        gc.collect()
        c0, t0 = cpu_seconds(), time.perf_counter()
        raw = corpus.load(paths, derive=False)
        c1, t1 = cpu_seconds(), time.perf_counter()
        full = enrich.add_derived_columns(raw.papers)
        c2, t2 = cpu_seconds(), time.perf_counter()
        reads.append(t1 - t0)
        enrichments.append(t2 - t1)
        read_cpu.append(c1 - c0)
        enrich_cpu.append(c2 - c1)
        papers = len(full)
    if profile:
        import cProfile
        import pstats

        for label, call in (
            ("read", lambda: corpus.load(paths, derive=False)),
            ("enrich", lambda: enrich.add_derived_columns(raw.papers)),
        ):
            profiler = cProfile.Profile()
            profiler.runcall(call)
            print(f"\n--- profile: {label} ---", file=sys.stderr)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(12)
    totals = [r + e for r, e in zip(reads, enrichments, strict=True)]
    return {
        "papers": papers,
        "bytes": input_bytes(paths),
        "read": min(reads),
        "enrich": min(enrichments),
        "total": min(totals),
        "read_cpu": min(read_cpu),
        "enrich_cpu": min(enrich_cpu),
        "imports": import_seconds,
        "rss_imports": rss_after_imports,
        "rss_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "report": raw.report.summary(),
    }


def run_child(paths: list[Path], repeat: int, profile: bool) -> dict:
    command = [sys.executable, __file__, "--child", "--repeat", str(repeat), *map(str, paths)]
    if profile:
        command.append("--profile")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if profile or done.returncode:
        sys.stderr.write(done.stderr)
    if done.returncode:
        raise SystemExit(f"benchmark child failed for {paths}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="corpora to time (default: seeds and 27k)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per corpus; the best is reported (3)")
    parser.add_argument("--profile", action="store_true", help="print cProfile tables for read and enrich")
    parser.add_argument(
        "--one-word", type=int, metavar="N", help="time N one-word paragraphs (different, and all 'w')"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.paths, args.repeat, args.profile)))
        return
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as folder:
        if args.one_word:
            corpora = one_word_files(args.one_word, Path(folder))
        else:
            corpora = {str(p): [p] for p in args.paths} if args.paths else DEFAULT_CORPORA
        report(corpora, args.repeat, args.profile)


def report(corpora: dict[str, list[Path]], repeat: int, profile: bool) -> None:
    """Time each corpus in its own process and print a row of figures for it."""
    header = (
        f"{'corpus':28} {'papers':>7} {'MB':>6} {'read s':>7} {'enrich s':>8} {'total s':>7} {'target':>7} "
        f"{'papers/s':>9} {'MB/s':>6} {'peak RSS MB':>11} {'(imports)':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, paths in corpora.items():
        if not all(p.exists() for p in paths):
            print(f"{name:28} (not found: {', '.join(str(p) for p in paths)})")
            continue
        figures = run_child(paths, repeat, profile)
        megabytes = figures["bytes"] / 1e6
        target = TARGETS.get(name)
        verdict = "" if target is None else f"<{target:g} {'ok' if figures['total'] < target else 'MISS'}"
        print(
            f"{name:28} {figures['papers']:>7,} {megabytes:>6.1f} {figures['read']:>7.3f} "
            f"{figures['enrich']:>8.3f} {figures['total']:>7.3f} {verdict:>7} "
            f"{figures['papers'] / figures['total']:>9,.0f} {megabytes / figures['total']:>6.1f} "
            f"{figures['rss_peak']:>11.0f} {figures['rss_imports']:>9.0f}"
        )
        print(f"{'':28} load report: {figures['report']}; imports took {figures['imports']:.2f} s")
        print(f"{'':28} CPU: read {figures['read_cpu']:.2f} s, enrich {figures['enrich_cpu']:.2f} s")
    print(f"\nbest of {repeat} runs each; read = corpus readers, enrich = derived columns (enrich.py)")


if __name__ == "__main__":
    main()
