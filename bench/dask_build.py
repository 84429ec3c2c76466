"""The index build locally and on a Dask LocalCluster (``--dask local:2``): wall time, memory per process.

    python bench/dask_build.py                  # 27k (the real corpus), then 1M (resampled; made if missing)
    python bench/dask_build.py --sizes 27k      # only the 27k comparison
    python bench/dask_build.py --workers 4      # local:4 and 4 local processes
    python bench/dask_build.py --keep bench/data/index-1m   # keep the last size's local index there

Each build runs ``paper-dashboard index`` in its own process; every 0.2 s the RSS of that process and of
each descendant (local: the spawn pool's workers; Dask: the nannies and worker processes) is sampled,
and each one's peak is kept. The two builds of a size must give the same index: the script compares
every checksum of the two manifests and says so. It prints the machine's load average while each build
ran (the machine may be shared) and, per size, the overhead of Dask over the local build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from make_corpus import folder_for, make  # noqa: E402

CORPUS_27K = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"


def _role(process: psutil.Process, root: psutil.Process, dask: bool) -> str:
    """client, or the child processes: pool workers (local) or Dask worker processes."""
    if process.pid == root.pid:
        return "client"
    try:
        command = " ".join(process.cmdline())
        parent = process.ppid()
    except psutil.Error:
        return "other"
    if "resource_tracker" in command:
        return "resource tracker"
    if parent == root.pid:  # LocalCluster's nannies live in the client; each starts one worker process
        return "worker" if dask else "pool worker"
    return "other"


class Sampler(threading.Thread):
    """Peak RSS of a process and of each of its descendants, and the load average, every 0.2 s."""

    def __init__(self, pid: int, dask: bool) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.dask = dask
        self.peaks: dict[int, tuple[str, int]] = {}
        self.total_peak = 0
        self.loads: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        root = psutil.Process(self.pid)
        while not self.done.is_set():
            try:
                processes = [root, *root.children(recursive=True)]
            except psutil.Error:
                break
            total = 0
            for process in processes:
                try:
                    rss = process.memory_info().rss
                except psutil.Error:
                    continue
                total += rss
                role, peak = self.peaks.get(process.pid, (_role(process, root, self.dask), 0))
                self.peaks[process.pid] = (role, max(peak, rss))
            self.total_peak = max(self.total_peak, total)
            self.loads.append(os.getloadavg()[0])
            self.done.wait(0.2)


def build(paths: list[Path], out: Path, dask: str | None, workers: int) -> dict:
    """One `paper-dashboard index` run: wall time, peaks per process, its manifest, the load."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "dashboard.cli.main", "index", *map(str, paths), "--out", str(out)]
    command += ["--dask", dask] if dask else ["--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(process.pid, dask is not None)
    sampler.start()
    out_text, err_text = process.communicate()
    wall = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"build failed ({process.returncode}):\n{err_text[-3000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    peaks = sorted(sampler.peaks.values(), key=lambda pair: (pair[0] != "client", -pair[1]))
    return {
        "mode": f"dask {dask}" if dask else f"local, {workers} processes",
        "wall_s": round(wall, 1),
        "phases": manifest["phases"],
        "peaks_mb": [(role, round(rss / 1e6)) for role, rss in peaks if rss > 50e6],
        "sum_of_peaks_mb": round(sum(rss for _, rss in peaks) / 1e6),
        "peak_total_mb": round(sampler.total_peak / 1e6),
        "load": round(sum(sampler.loads) / max(1, len(sampler.loads)), 1),
        "files": {name: facts["sha256"] for name, facts in manifest["files"].items()},
        "dashboard": next(
            (line.split("dashboard ", 1)[1] for line in err_text.splitlines() if "; dashboard " in line), ""
        ),
    }


def main() -> None:
    """Build each size locally and on local:N; print the figures and whether the indexes are equal."""
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  (figures survive a kill)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="27k,1m", help="comma-separated: 27k, 1m (default both), seeds")
    parser.add_argument("--workers", type=int, default=2, help="local processes and Dask workers (2)")
    parser.add_argument("--keep", type=Path, help="move the last size's local index here (bench/scale.py)")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB; "
        f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    scratch = Path(tempfile.mkdtemp(prefix="dask-bench-"))
    try:
        sizes = args.sizes.lower().split(",")
        for size in sizes:
            if size == "seeds":  # a smoke test of the script itself
                paths = [REPO / "seeds"]
            elif size == "27k":
                paths = [CORPUS_27K]
            elif size == "1m":
                paths = [
                    make(1_000_000, seed=0) if not folder_for(1_000_000).exists() else folder_for(1_000_000)
                ]
            else:
                raise SystemExit(f"unknown size {size!r}")
            local = build(paths, scratch / f"{size}-local.index", None, args.workers)
            print(
                f"{size} local: {local['wall_s']} s, peak of the sum {local['peak_total_mb']:,} MB, "
                f"load {local['load']}; peaks {local['peaks_mb']}"
            )
            dask = build(paths, scratch / f"{size}-dask.index", f"local:{args.workers}", args.workers)
            differ = [n for n, sha in local["files"].items() if dask["files"].get(n) != sha]
            differ += sorted(set(dask["files"]) - set(local["files"]))
            print(
                f"\n== {size}: {len(local['files'])} files, "
                + ("every checksum equal" if not differ else f"DIFFERENT: {differ}")
            )
            for run in (local, dask):
                print(
                    f"{run['mode']:>22}: {run['wall_s']:7.1f} s wall (load {run['load']}), "
                    f"peak of the sum {run['peak_total_mb']:,} MB, sum of peaks {run['sum_of_peaks_mb']:,} MB"
                )
                print(f"{'':>24}phases {run['phases']}")
                print(
                    f"{'':>24}peak per process (MB): " + ", ".join(f"{r} {mb:,}" for r, mb in run["peaks_mb"])
                )
            if dask["dashboard"]:
                print(f"{'':>24}(the Dask dashboard was at {dask['dashboard']})")
            overhead = dask["wall_s"] / local["wall_s"] - 1
            print(
                f"Dask overhead at {size}: {overhead:+.0%} wall time, "
                f"{dask['peak_total_mb'] - local['peak_total_mb']:+,} MB peak of the sum"
            )
            if args.keep and size == sizes[-1]:
                shutil.rmtree(args.keep, ignore_errors=True)
                shutil.move(scratch / f"{size}-local.index", args.keep)
                print(f"{'':>24}(the local index is kept in {args.keep})")
            for name in ("local", "dask"):
                shutil.rmtree(scratch / f"{size}-{name}.index", ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nload after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
