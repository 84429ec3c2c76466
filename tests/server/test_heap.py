"""`dashboard.system.heap`: the heap's free memory goes back to the system (glibc's malloc_trim), what lives
as long as the server is built without the garbage collector's passes and frozen, and NumPy's arrays stay
on ordinary pages in the dashboard's server."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.server import REPO, running_server

from dashboard.system import heap


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


# A child process that makes a 64 MB array and prints the flags of the memory region it lies in
# (``hg``: madvise(MADV_HUGEPAGE) was asked for it) and what `small_pages` returned.
_ARRAY_REGION_FLAGS = """
import sys
import numpy
from dashboard.system import heap
called = heap.small_pages() if sys.argv[1] == "call" else None
array = numpy.ones(64 * 1024 * 1024 // 8)
address = array.ctypes.data + array.nbytes // 2  # its start may lie before the 2 MB-aligned part
region = None
for line in open("/proc/self/smaps"):
    head = line.split()[0]
    if "-" in head and not head.endswith(":"):
        low, high = (int(part, 16) for part in head.split("-"))
        region = low <= address < high
    elif head == "VmFlags:" and region:
        print(called, " ".join(line.split()[1:]))
"""


def _array_region(call: bool, env: dict[str, str]) -> tuple[str, set[str]]:
    child_env = {k: v for k, v in os.environ.items() if k != heap.HUGEPAGE_ENV} | env
    out = subprocess.run(
        [sys.executable, "-c", _ARRAY_REGION_FLAGS, "call" if call else "no"],
        env=child_env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()  # fmt: skip
    return out[0], set(out[1:])


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="memory regions' flags are Linux's /proc")
def test_small_pages_stops_numpy_asking_for_huge_pages_unless_the_user_set_numpy_s_variable() -> None:
    called, flags = _array_region(call=False, env={})
    if "hg" not in flags:
        pytest.skip("this NumPy or kernel does not ask for huge pages (no 'hg' flag on a 64 MB array)")
    assert _array_region(call=True, env={}) == ("True", flags - {"hg"})
    # The user's own choice stands, whichever it is.
    assert _array_region(call=True, env={heap.HUGEPAGE_ENV: "1"}) == ("False", flags)
    called, flags_off = _array_region(call=True, env={heap.HUGEPAGE_ENV: "0"})
    assert called == "False" and "hg" not in flags_off


@pytest.mark.slow
def test_the_dashboards_server_turns_numpy_s_huge_pages_off_as_it_starts(tmp_path: Path) -> None:
    """The server's lifespan calls `small_pages`: its debug line says what it did."""
    log = tmp_path / "server.log"
    debug = {"STREAMLIT_LOGGER_LEVEL": "debug"}
    with running_server(["--corpus", str(REPO / "seeds")], env=debug, log_path=log):
        pass
    assert "NumPy's huge-page requests turned off: True" in log.read_text(errors="replace")


@pytest.fixture
def collector() -> Iterator[list[int]]:
    """The generations of the collector's passes while the test runs; its state restored after."""
    passes: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    enabled = gc.isenabled()
    gc.enable()
    gc.callbacks.append(seen)
    try:
        yield passes
    finally:
        gc.callbacks.remove(seen)
        gc.unfreeze()
        (gc.enable if enabled else gc.disable)()


def test_long_lived_builds_without_collector_passes_then_freezes_what_it_built(collector: list[int]) -> None:
    with heap.long_lived():
        assert not gc.isenabled()
        built = [[i] for i in range(200_000)]  # tracked objects: passes would start without the pause
    assert collector == []
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)
    frozen = {id(item) for item in gc.get_objects()}  # the generations' objects: not the frozen ones
    assert id(built[0]) not in frozen and id(built) not in frozen
    # The same build outside the block: the collector walks it.
    more = [[i] for i in range(200_000)]
    assert collector and len(more) == len(built)


def test_long_lived_blocks_in_two_threads_keep_the_collector_paused_until_the_last_ends(
    collector: list[int],
) -> None:
    first_open, second_done = threading.Event(), threading.Event()

    def second() -> None:
        first_open.wait(10)
        with heap.long_lived():
            pass
        second_done.set()

    thread = threading.Thread(target=second)
    thread.start()
    with heap.long_lived():
        first_open.set()
        assert second_done.wait(10)
        assert not gc.isenabled()  # the other thread's block ended; this one is still open
    thread.join(10)
    assert gc.isenabled()


def test_long_lived_leaves_a_collector_the_user_turned_off_off_and_survives_an_error(
    collector: list[int],
) -> None:
    with pytest.raises(ValueError), heap.long_lived():
        raise ValueError("a corpus that does not load")
    assert gc.isenabled()
    gc.disable()
    with heap.long_lived():
        pass
    assert not gc.isenabled()
