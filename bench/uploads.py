"""How heavy is reading an upload, and what does the worker process cost? Prints figures.

    python bench/uploads.py                       # the 27k corpus (../shared/corpora), and a tiny file
    python bench/uploads.py --file some.jsonl.gz

For each file: the time to read it in this process (`corpus.load_uploads`, what the server did before
`dashboard.server.worker`), the time of `uploads.prepare` (read + first topics) in a worker, the size of the
result sent back and the memory the unpickled result takes here (RSS before and after, which is what
`uploads.CHARGE_FACTOR` approximates). Also the worker's fixed cost on a tiny upload.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path

from dashboard import corpus
from dashboard.server import uploads, worker

REPO = Path(__file__).resolve().parents[1]
DEFAULT = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"


def _rss() -> int:
    import os

    return worker.resident_bytes(os.getpid()) or 0


def main(argv: list[str] | None = None) -> int:
    """Print the figures; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT)
    parser.add_argument("--skip-in-process", action="store_true", help="do not time the in-process read")
    args = parser.parse_args(argv)

    tiny = [("tiny.txt", b"We study graphs.\n\nWe study video generation.\n\nWe study robots.\n")]
    worker.run(uploads.prepare, tiny, [0], "auto", timeout=600, memory_bytes=4 << 30)  # start the fork server
    times = []
    for _ in range(5):
        started = time.perf_counter()
        worker.run(uploads.prepare, tiny, [0], "auto", timeout=600, memory_bytes=4 << 30)
        times.append(time.perf_counter() - started)
    print(f"worker, 3-paper upload (read + topics): median {statistics.median(times):.2f} s of 5 {times}")

    if not args.file.exists():
        print(f"{args.file} not found: only the tiny upload was measured")
        return 0
    files = [(args.file.name, args.file.read_bytes())]
    print(f"file: {args.file.name}, {len(files[0][1]) / (1 << 20):.1f} MiB")
    if not args.skip_in_process:
        started = time.process_time()
        wall = time.perf_counter()
        result = corpus.load_uploads(files)
        print(
            f"read in this process: {time.perf_counter() - wall:.1f} s wall, "
            f"{time.process_time() - started:.1f} s CPU of this process, {len(result.papers):,} papers"
        )
        del result
        gc.collect()
    before = _rss()
    wall = time.perf_counter()
    cpu = time.process_time()
    prepared, size = worker.run(uploads.prepare, files, [0], "auto", timeout=3600, memory_bytes=8 << 30)
    print(
        f"in the worker (read + first topics): {time.perf_counter() - wall:.1f} s wall, of which "
        f"{time.process_time() - cpu:.2f} s CPU in this process (receiving and unpickling); "
        f"job {prepared.seconds:.1f} s"
    )
    after = _rss()
    print(
        f"result: {size / (1 << 20):.0f} MiB pickled; "
        f"this process grew by {(after - before) / (1 << 20):.0f} MiB "
        f"(charged {uploads.CHARGE_FACTOR * size / (1 << 20):.0f} MiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
