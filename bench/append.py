"""How long does appending papers to the 27k index take, and does it leave the existing papers alone?

Prints one line per step, on a copy of the prebuilt 27k index (hard links: the append never writes
into a stored file, so the copy costs nothing and the original is not touched):

1. append the 1,000 ICLR 2026 papers (``iclr2026-openreview-1k``): the first append, which also
   derives the fitted model's parts once from the index (an SVD of the fit sample) and keeps them;
2. append 1,000 papers of ICML and ICCV 2019 (``papercopilot-iccv2019-icml2019``, first 1,000): an
   append to an index that keeps its model (what every later append costs);
3. append 10 more of those papers: what an append costs for the index's own size (every per-paper
   file is rewritten and hashed), the figure a million-paper index scales by; then the ICLR 2026
   papers again: every one must be reported as already present;
4. append the 27k corpus to itself: every paper reported as already present, and the index unchanged;

5. append the ICLR 2026 papers with ``paper-dashboard index --append`` in a fresh process, timed
   from outside (start-up and imports included);

each with its wall clock and the CPU seconds it used (on a shared machine the wall clock also counts
the time spent waiting for a CPU: the load average is printed first).

and checks, after each, that the papers of the 27k build keep their topic, weight and map position
exactly, and how well the stored model re-assigns the fitted papers (``same_topic_share``: the
share of a sample of fitted papers whose assigned topic is the one the fit gave them; a check that
the model was rebuilt faithfully, not a target). Also how the map placement was reconstructed: the
papers of the 27k build that the map placed from neighbours are placed again by `place_new`'s rule
and compared with their stored positions.

    python bench/append.py                                   # the 27k index in bench/data/index-27k-v2
    python bench/append.py --index /tmp/i55/index-27k        # another 27k index
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dashboard import index
from dashboard.analytics import papermap
from dashboard.index import append

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
BIG = CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"
ICLR = CORPORA / "iclr2026-openreview-1k" / "papers.jsonl"
COPILOT = CORPORA / "papercopilot-iccv2019-icml2019"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _state(path: Path, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    table = index.read_arrow(path / "papers.arrow").slice(0, n)
    topic = table.column("topic").to_numpy()
    weight = table.column("topic_weight").to_numpy()
    xy = np.stack([table.column(c).to_numpy(zero_copy_only=False) for c in ("x", "y")], axis=1)
    return topic, weight, xy


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the reader may parse in processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


def _run(label: str, paths: list[Path], target: Path, n_built: int, before: tuple) -> append.AppendResult:
    started, cpu = time.perf_counter(), _cpu()
    result = append.append_index(paths, target)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    after = _state(target, n_built)
    kept = all(_same(a, b) for a, b in zip(before, after, strict=True))
    phases = ", ".join(f"{k} {v:.2f}" for k, v in result.phases.items())
    print(
        f"{label:<44} {seconds:6.2f} s ({cpu:5.2f} s CPU)  added {result.added:>6,}  "
        f"already there {len(result.duplicates):>6,}  papers {result.manifest['papers']:,}  "
        f"built papers unchanged: {kept}"
    )
    print(f"{'':<44} phases (s): {phases}")
    print(f"{'':<44} {append.describe_refit(result.refit)}")
    return result


def _second_set(folder: Path, n: int = 1000) -> Path:
    records = []
    for name in ("icml2019.json", "iccv2019.json"):
        for number, record in enumerate(json.loads((COPILOT / name).read_text(encoding="utf-8"))):
            paper_id = f"{name[:-5]}-{record.get('id', number)}"
            records.append({"id": paper_id, "title": record["title"], "abstract": record.get("abstract", ""),
                            "authors": record.get("author", "")})  # fmt: skip
    out = folder / f"copilot-2019-{n}.jsonl"
    out.write_text("\n".join(json.dumps(r) for r in records[:n]) + "\n", encoding="utf-8")
    return out


def _map_check(path: Path, n_built: int) -> str:
    """Place the built papers outside the map's fit sample again; how far from their stored positions."""
    manifest = index.read_manifest(path)
    lsa = np.asarray(index.load_npy(path / "lsa.npy")[:n_built])
    _, _, xy = _state(path, n_built)
    fit = append.map_sample(manifest, lsa, xy)
    if fit is None:
        return "the map's fit sample cannot be drawn again: new papers are placed among all stored papers"
    rest = np.setdiff1d(np.flatnonzero(np.linalg.norm(lsa, axis=1) > 0), fit)
    if not len(rest):
        return "every paper with text is in the map's fit sample: nothing placed from neighbours"
    placed = np.round(papermap.place(lsa[rest], lsa[fit], xy[fit]), 4)
    error = np.abs(placed - xy[rest]).max()
    return f"{len(rest):,} papers placed again from the map's fit sample: largest difference {error:.4f}"


def main() -> None:
    """Run the appends on hard-linked copies of the index and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, default=REPO / "bench" / "data" / "index-27k-v2")
    parser.add_argument(
        "--refit",
        action="store_true",
        help="only the refit example: ICLR 2026 grown by 2019 papers, refitted",
    )
    args = parser.parse_args()
    if args.refit:
        _refit_example()
        return
    with tempfile.TemporaryDirectory(prefix="append-bench-", dir="/tmp") as scratch:
        folder = Path(scratch)
        target = folder / "index"
        subprocess.run(["cp", "-al", str(args.index), str(target)], check=True)
        n_built = int(index.read_manifest(target)["papers"])
        before = _state(target, n_built)
        print(f"index: {args.index} ({n_built:,} papers), copied by hard links to {target}")
        # The machine is shared: wall clock waits for the CPU when others use it; CPU seconds do not.
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(_map_check(target, n_built))
        first = _run("1. append ICLR 2026 (1,000; derives the model)", [ICLR], target, n_built, before)
        print(f"{'':<44} fitted papers re-assigned by the stored model: {first.refit['baseline']}")
        _run("2. append ICML+ICCV 2019 (1,000)", [_second_set(folder)], target, n_built, before)
        ten = folder / "ten-more.jsonl"
        ten.write_text("".join(_second_set(folder, 1010).open().readlines()[1000:]), encoding="utf-8")
        small = _run("3a. append 10 papers (the index's own cost)", [ten], target, n_built, before)
        size = sum(f["bytes"] for f in small.manifest["files"].values())
        print(f"{'':<44} the index holds {size / 1e6:,.0f} MB in {len(small.manifest['files'])} files")
        _run("3. append ICLR 2026 again", [ICLR], target, n_built, before)
        digest = _sha(target / "papers.arrow")
        itself = _run("4. append the 27k corpus to itself", [BIG], target, n_built, before)
        print(
            f"{'':<44} reported present: {len(itself.duplicates):,} of {n_built:,}; "
            f"paper table unchanged: {_sha(target / 'papers.arrow') == digest}"
        )
        opened = index.open_index(target, verify=True)
        versions = len(append.index_versions(opened.manifest))
        print(f"opens (checksums verified): {len(opened.papers):,} papers, versions {versions}")
        shutil.rmtree(target)
        _command_line(args.index, folder)


def _command_line(source: Path, folder: Path) -> None:
    """5. What a user waits for: ``paper-dashboard index --append`` of 1,000 papers in a fresh process
    (start-up and imports included), to an index that keeps its model (as every index built now does;
    an older one is given it by an append of ten papers first)."""
    target = folder / "cli-index"
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    if append.TRANSFORM_FILE not in index.read_manifest(target)["files"]:
        append.append_index([_second_set(folder, 10)], target)
    command = [
        sys.executable,
        "-m",
        "dashboard.cli.main",
        "index",
        "--append",
        str(ICLR),
        "--to",
        str(target),
    ]
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    seconds, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    label = "5. paper-dashboard index --append (1,000)"
    print(f"{label:<44} {seconds:6.2f} s ({cpu:5.2f} s CPU)  wall clock of a fresh process")
    print(f"{'':<44} {done.stdout.splitlines()[0]}")
    shutil.rmtree(target)


def _refit_example() -> None:
    """6. When a refit is due and what it keeps: an index of the 1,000 ICLR 2026 papers grown by 1,000
    papers of 2019 (another year, other conferences), the advice, then ``--refit`` and its mapping."""
    from dashboard.index import refitting

    with tempfile.TemporaryDirectory(prefix="append-refit-", dir="/tmp") as scratch:
        folder = Path(scratch)
        target = folder / "iclr.index"
        started = time.perf_counter()
        index.build_index([ICLR], target, workers=1)
        print(f"6. built an index of ICLR 2026 (1,000 papers) in {time.perf_counter() - started:.1f} s")
        result = append.append_index([_second_set(folder)], target)
        advice, status = append.describe_refit(result.refit), result.refit
        print(f"   appended 1,000 papers of 2019 in {result.seconds:.1f} s: {advice}")
        base = status["baseline"]
        print(
            f"   their mean topic weight {status['mean_weight']:.3f} "
            f"(fitted papers {base['mean_weight']:.3f}), outliers {status['outlier_share']:.1%} "
            f"(fitted papers {base['outlier_share']:.1%})"
        )
        started = time.perf_counter()
        manifest = refitting.refit_index(target)
        print(f"   refitted in {time.perf_counter() - started:.1f} s")
        mapping = manifest["topic_mapping"][-1]
        shares = np.array(list(mapping["paper_share"].values()))
        print(f"   {refitting.describe_mapping(mapping, limit=5)}")
        by = list(mapping["by"].values())
        print(
            f"   share of an old topic's papers in its new topic: median {np.median(shares):.2f}, "
            f"lowest {shares.min():.2f}; mapped by papers {by.count('papers')}, by terms {by.count('terms')}"
        )


if __name__ == "__main__":
    main()
