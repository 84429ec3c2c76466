"""Hand the memory a large computation freed back to the operating system, at a moment we choose.

glibc keeps freed memory in its heap for reuse. Protobuf's Python runtime, which carries every message
Streamlit sends to the browser, calls ``malloc_trim(0)`` after every 10,000 freed message blocks
(``upb_trim_allocfunc``), and that call hands back *all* of the heap's free memory at once, with the
GIL held. After the index of a million papers was loaded, its loader had left 1.4 GB free in the heap:
the first such call, a few page runs later, stalled that run for 0.1-0.2 s (seen in a native profile
of the Trends page: ``PyUpb_Arena_Dealloc`` -> ``malloc_trim`` -> ``madvise``). `release` right after a
load, a topic fit or another once-per-corpus computation moves that cost under the spinner the user
already watches; protobuf's later calls find little to hand back (about 1 ms).

Outside glibc (macOS, musl) there is no ``malloc_trim`` and `release` does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable


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
