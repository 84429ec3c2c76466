"""What checking an index at open costs: `python bench/index_checks.py INDEX_DIR`.

`dashboard.index.build.open_index` checks every index it opens (issue 56, item 2): the manifest's fields,
that its files stay inside the index, the sparse arrays' structure (`check_sparse`), the dense
arrays' shapes and the paper table's offsets and UTF-8 text (`check_arrow`). The alternative was
hashing every file at every open. With the page cache warm (`prewarm`), prints the best of a few
tries of: opening the index, the checks alone, the UTF-8 check of the text alone (also with
papers.arrow out of the page cache), and SHA-256 and BLAKE2b over every file. Build an index first,
for example ``paper-dashboard index ../shared/corpora/multiconf-2021-2024/papers.jsonl.gz --out /tmp/idx27k``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from dashboard import index as index


def best(run: Callable[[], object], tries: int) -> float:
    """The shortest of ``tries`` timings of ``run``, in seconds."""
    times = []
    for _ in range(tries):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def checks(root: Path) -> None:
    """What `open_index` checks, without building the app's tables."""
    manifest = index.read_manifest(root)
    index.check_files(root, manifest)
    index.check_arrow(root / "papers.arrow", index.read_arrow(root / "papers.arrow"))
    index.load_csr(root / "tfidf", manifest["arrays"]["tfidf"]["shape"])
    search = root / "search"
    indptr, indices = index.load_npy(search / "indptr.npy"), index.load_npy(search / "indices.npy")
    index.check_sparse(
        search / "indptr.npy", indptr, search / "indices.npy", indices, len(indptr) - 1, manifest["papers"]
    )
    for name in ("lsa.npy", "embedding.npy"):
        index.stored_rows(root / name, manifest["papers"])


def utf8_of_the_text(root: Path, cold: bool) -> None:
    """The UTF-8 check of papers.arrow's text alone; ``cold``: with the file out of the page cache."""
    from dashboard.index import format as index_format

    path = root / "papers.arrow"
    if cold:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)
    table = index.read_arrow(path)
    with open(path, "rb") as handle:
        for column in table.columns:
            for chunk in column.chunks:
                index_format._is_utf8(chunk, handle)


def hash_files(root: Path, algorithm: str) -> None:
    """Every file of the index through ``algorithm`` (what verifying checksums at open would cost)."""
    for file in sorted(root.rglob("*")):
        if file.is_file():
            digest = hashlib.new(algorithm)
            with open(file, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 24), b""):  # noqa: B023
                    digest.update(chunk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args()
    root = args.index
    index.prewarm(root)
    manifest = index.read_manifest(root)
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    print(f"{root}: {manifest['papers']:,} papers, {size / 1e6:,.0f} MB")
    print(f"open_index               {best(lambda: index.open_index(root), args.tries):7.3f} s")
    print(f"open_index(verify=True)  {best(lambda: index.open_index(root, verify=True), args.tries):7.3f} s")
    print(f"the checks alone         {best(lambda: checks(root), args.tries * 3):7.3f} s")
    print(f"UTF-8 of the text        {best(lambda: utf8_of_the_text(root, False), args.tries * 3):7.3f} s")
    print(f"  papers.arrow uncached  {best(lambda: utf8_of_the_text(root, True), args.tries):7.3f} s")
    index.prewarm(root)
    print(f"SHA-256 of every file    {best(lambda: hash_files(root, 'sha256'), args.tries):7.3f} s")
    print(f"BLAKE2b of every file    {best(lambda: hash_files(root, 'blake2b'), args.tries):7.3f} s")


if __name__ == "__main__":
    main()
