"""`dashboard.heap.release`: the heap's free memory goes back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import sys

import pytest

from dashboard import heap


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's (Linux)")
def test_release_gives_freed_heap_memory_back_to_the_system() -> None:
    # 256 MB in 64 KB blocks (below glibc's mmap threshold: they live in the heap), the last one kept so
    # that the freed blocks are not at the heap's top (which glibc would hand back by itself).
    blocks = [bytearray(64 * 1024) for _ in range(4096)]
    for block in blocks:
        block[::4096] = b"x" * len(block[::4096])  # touched: resident
    keep = bytearray(64 * 1024)
    del blocks
    before = _resident_bytes()
    assert heap.release() is True
    after = _resident_bytes()
    assert before - after > 128 * 1024 * 1024, (before, after)
    assert keep is not None
