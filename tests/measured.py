"""Wall time and peak Python memory of a block: ``with measured() as cost: ...``.

Memory is tracemalloc's peak, counted from the memory traced when the block starts. Tracing starts at
the first measurement and is never stopped in the test process: CPython before 3.12.9 and 3.13.2 can
crash when ``tracemalloc.stop()`` runs while another thread is taking the GIL (python/cpython#128679:
the thread checks that tracing is on, waits for the GIL, then writes to the tables ``stop()`` freed).
pyarrow's I/O threads and thread pools running numpy do exactly that, and one CI run of this suite died
that way (a segmentation fault in a thread without Python frames, just after a Parquet test stopped
tracing). Tracing left on costs the rest of that worker's tests some speed, never a crash.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Cost:
    seconds: float = 0.0
    peak_bytes: int = 0


@contextmanager
def measured() -> Iterator[Cost]:
    cost = Cost()
    if not tracemalloc.is_tracing():
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    try:
        yield cost
    finally:
        cost.seconds = time.perf_counter() - started
        cost.peak_bytes = tracemalloc.get_traced_memory()[1] - baseline
