"""`dashboard.index.build.prewarm`: an index's files read into the system's page cache at a server start
(`dashboard.ui.warmup`), within a memory budget. Residency is asked of the kernel (``mincore``)."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from dashboard import index as paper_index
from dashboard.index import format as index_format  # where prewarm reads the memory available

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="page-cache residency is read with Linux's mincore"
)


def resident_share(path: Path) -> float:
    """The share of ``path``'s pages in the page cache (``mincore`` over a mapping of the file)."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    view = np.frombuffer(mapped, dtype=np.uint8)
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vector = (ctypes.c_ubyte * pages)()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mincore(ctypes.c_void_p(view.ctypes.data), ctypes.c_size_t(size), vector) != 0:
        raise OSError(ctypes.get_errno(), "mincore")
    del view
    mapped.close()
    return sum(byte & 1 for byte in vector) / pages


def evicted(*paths: Path) -> None:
    """Drop ``paths`` from the page cache, or skip where this filesystem keeps them anyway."""
    for path in paths:
        descriptor = os.open(path, os.O_RDONLY)
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(descriptor)
        if resident_share(path) > 0.2:
            pytest.skip(f"this filesystem keeps {path.name} cached after POSIX_FADV_DONTNEED")


@pytest.fixture
def index_files(tmp_path: Path) -> list[Path]:
    (tmp_path / "search").mkdir()
    files = [tmp_path / "papers.arrow", tmp_path / "search" / "postings.npy", tmp_path / "manifest.json"]
    for path, size in zip(files, (24 << 20, 6 << 20, 2_000), strict=True):
        path.write_bytes(os.urandom(size))
    return files


def test_every_file_of_the_index_ends_up_in_the_page_cache(tmp_path: Path, index_files: list[Path]) -> None:
    evicted(*index_files)
    read = paper_index.prewarm(tmp_path)
    assert read == sum(path.stat().st_size for path in index_files)
    assert [round(resident_share(path), 2) for path in index_files] == [1.0, 1.0, 1.0]


def test_an_index_larger_than_the_budget_is_not_read(tmp_path: Path, index_files: list[Path]) -> None:
    evicted(*index_files)
    assert paper_index.prewarm(tmp_path, budget=10 << 20) == 0
    assert all(resident_share(path) < 0.2 for path in index_files)


def test_the_default_budget_is_a_share_of_the_memory_available(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, index_files: list[Path]
) -> None:
    total = sum(path.stat().st_size for path in index_files)
    enough = int(total / paper_index.PREWARM_SHARE)
    monkeypatch.setattr(index_format, "available_memory", lambda: enough - 10)
    assert paper_index.prewarm(tmp_path) == 0
    monkeypatch.setattr(index_format, "available_memory", lambda: enough + 10)
    assert paper_index.prewarm(tmp_path) == total
    assert 0 < paper_index.available_memory() < 1 << 50  # this machine's own figure


def test_a_missing_index_reads_nothing_and_does_not_raise(tmp_path: Path) -> None:
    assert paper_index.prewarm(tmp_path / "gone") == 0
