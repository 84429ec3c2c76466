"""Wall time and peak Python memory of a block, in a test that runs in a copy of the test process.

    @in_child
    def test_...():
        with measured() as cost:
            ...
        assert cost.peak_bytes < ...

Memory is tracemalloc's peak, counted from the memory traced when the block starts. Tracing is never
stopped while the test process lives: CPython before 3.12.9 and 3.13.2 can crash when
``tracemalloc.stop()`` runs while another thread takes the GIL or frees its thread state
(python/cpython#128679), and one CI run of this suite died that way (a segmentation fault in a thread
without Python frames, just after a Parquet test had stopped tracing). Left on, tracing made every
later test of that worker slower (an AppTest file 9 s -> 47 s). So each measured test runs in a
forked copy of the test process (`in_child`), where tracing starts and is never stopped: the copy
ends with the test. A fork keeps fixtures and monkeypatched limits as they are.
"""

from __future__ import annotations

import functools
import os
import signal
import time
import traceback
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

_IN_CHILD = False


@dataclass
class Cost:
    seconds: float = 0.0
    peak_bytes: int = 0


@contextmanager
def measured() -> Iterator[Cost]:
    if not _IN_CHILD:
        raise RuntimeError("measured() traces memory only in a test decorated with @in_child")
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


def in_child(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` in a forked copy of this process; its failure is reported here, with its traceback."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy: run the test, send back what went wrong, never return into pytest
            global _IN_CHILD
            _IN_CHILD = True
            os.close(read_end)
            message = b""
            try:
                test(*args, **kwargs)
            except BaseException:
                message = traceback.format_exc().encode()
            finally:
                view = memoryview(message)
                while view:
                    view = view[os.write(write_end, view) :]
                os._exit(0)
        os.close(write_end)
        try:
            with os.fdopen(read_end, "rb") as pipe:
                message = pipe.read()  # until the copy ends
            _, status = os.waitpid(pid, 0)
            pid = 0
        finally:
            if pid:  # interrupted (a timeout): the copy must not outlive its test
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        if message:
            pytest.fail(message.decode("utf-8", "replace"), pytrace=False)
        if status:
            pytest.fail(f"the test's copy of the process ended with status {status}", pytrace=False)

    return run
