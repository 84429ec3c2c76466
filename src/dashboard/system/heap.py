"""The server's memory: what a large computation freed goes back to the system at a moment we choose,
what lives as long as the server is built without the garbage collector's passes, and NumPy's arrays
stay on ordinary pages.

glibc keeps freed memory in its heap for reuse. Protobuf's Python runtime, which carries every message
Streamlit sends to the browser, calls ``malloc_trim(0)`` after every 10,000 freed message blocks
(``upb_trim_allocfunc``), and that call hands back *all* of the heap's free memory at once, with the
GIL held. After the index of a million papers was loaded, its loader had left 1.4 GB free in the heap:
the first such call, a few page runs later, stalled that run for 0.1-0.2 s (seen in a native profile
of the Trends page: ``PyUpb_Arena_Dealloc`` -> ``malloc_trim`` -> ``madvise``). `release` right after a
load, a topic fit or another once-per-corpus computation moves that cost under the spinner the user
already watches; protobuf's later calls find little to hand back (about 1 ms).

Outside glibc (macOS, musl) there is no ``malloc_trim`` and `release` does nothing.

`long_lived` builds what lives as long as the server (a corpus or its index, an analysis, a table made
once per corpus) with Python's cyclic garbage collector paused, then freezes it (``gc.freeze``). A
corpus is millions of Python objects (lists of names and links per paper); as they are made, the
collector's full passes walk all of them again and again. Opening the index of a million papers
(the warm-up, in-process, two runs each way) took 7.5-8.5 s, of which 18 full passes took 3.8 s (each
longer than the last, up to 0.53 s); in `long_lived` it takes 3.4-4.5 s, and the whole warm-up 27.5-29.9
s instead of 34. Once frozen, the objects are out of every later pass (a full pass in a page run would
otherwise stall it for a large fraction of a second). What is frozen is still freed when nothing
refers to it; only a reference cycle that another thread dropped at that moment is never collected.

`small_pages` keeps NumPy's arrays on the system's ordinary 4 KB pages in the dashboard's server.
NumPy asks Linux for transparent huge pages (2 MB) for every array of 4 MB or more
(``madvise(MADV_HUGEPAGE)``, on by default on kernels from 4.6; ``NUMPY_MADVISE_HUGEPAGE``). Where the
system honours that request (``/sys/kernel/mm/transparent_hugepage/enabled`` set to ``madvise``, as
on this project's machines), the first touch of such an array has the kernel find and clear whole
2 MB pages, and now and then that stalls. A common-word search at a million papers
(`dashboard.search.ranking.search`, "learning", a fresh process each time, 9 tries each way) took
0.045-0.325 s with huge pages (of it 0.004-0.295 s in the kernel) and 0.053-0.058 s without (0.016-0.028
s in the kernel); its own work, 0.02-0.05 s, was the same. A server answers a filter change with fresh
arrays of that size, and these stalls were the slowest of its first tries (0.3-0.8 s on a page that
takes 0.15 s). The pages' arrays are made, read once and thrown away: the fewer address-translation
misses of larger pages never paid for the stalls.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def release() -> bool:
    """Give the heap's free memory back to the operating system; False where that cannot be done."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


_COLLECTOR = threading.Lock()
_building = 0  # `long_lived` blocks open now, in any thread
_was_enabled = True  # whether the collector ran before the first of them


@contextmanager
def long_lived() -> Iterator[None]:
    """Run the block with the cyclic garbage collector paused; then freeze what is alive (the block's
    results, made to last as long as the server) and hand the memory the block freed back (`release`),
    once the last block open ends.

    The collector is paused for the whole process (every thread's cyclic garbage waits) until the last
    block open in any thread ends; a collector the user had turned off stays off.
    """
    global _building, _was_enabled
    with _COLLECTOR:
        if _building == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _building += 1
    try:
        yield
    finally:
        with _COLLECTOR:
            _building -= 1
            last = _building == 0
            if last:
                gc.freeze()
                if _was_enabled:
                    gc.enable()
        if last:  # a block inside another leaves the freeing to the outer one
            release()


#: NumPy's own switch for its huge-page requests, read by NumPy as it is imported.
HUGEPAGE_ENV = "NUMPY_MADVISE_HUGEPAGE"


def small_pages() -> bool:
    """Stop NumPy asking for transparent huge pages in this process and the processes it starts (the
    cloud helper); True if this call turned them off. A ``NUMPY_MADVISE_HUGEPAGE`` set by the user is
    their choice and stands (False). Streamlit imports NumPy before the dashboard's code runs, so the
    variable alone is too late here: the switch NumPy's import sets from it is set again (the same
    private function, kept since NumPy 1.19; without it, nothing changes)."""
    if HUGEPAGE_ENV in os.environ:
        return False
    os.environ[HUGEPAGE_ENV] = "0"  # a process started from here imports NumPy with it
    import numpy

    core = getattr(numpy, "_core", None) or getattr(numpy, "core", None)
    set_madvise = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if set_madvise is None:
        return False
    set_madvise(False)
    return True
