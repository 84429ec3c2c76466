"""Per-run timings for benchmarks: set ``PAPER_DASHBOARD_TIMINGS=FILE`` and every script run appends a line.

Each line is JSON: ``{"time", "page", "seconds", "cpu_seconds", "process_cpu_seconds",
"process_system_seconds", "page_faults", "waited_seconds", "process_waited_seconds", "status", "query",
"marks"}`` where ``seconds`` is the whole script run on the server (a widget change to the page fully
drawn), ``cpu_seconds`` the processor time of the run's own thread in it and ``process_cpu_seconds``
that of the whole server process (its helper threads too): well below ``seconds``, the run waited for
the interpreter or for a processor the browser held, rather than worked. ``process_system_seconds`` is
the part of the process's time spent in the kernel and ``page_faults`` the process's page faults in the
run (fresh memory the kernel had to find). ``waited_seconds`` is how long the run's thread was ready to
run but had no processor (another program, such as the browser on the same machine, held them all),
``process_waited_seconds`` the same summed over the process's threads (a thread that ended during the
run is left out); both from Linux's schedstat, 0 elsewhere. ``query`` the URL filters of the run,
``status`` ``ok`` or the exception that ended it (``StopException`` is how `st.stop` ends a page, also
``ok`` for a user), and ``marks`` the seconds at which named steps finished (`mark`). Without the
variable nothing is measured or written.

    PAPER_DASHBOARD_TIMINGS=/tmp/runs.jsonl streamlit run app.py
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

ENV_TIMINGS = "PAPER_DASHBOARD_TIMINGS"
_RUN = threading.local()  # each script run has its own thread
_WRITE = threading.Lock()


def _usage() -> tuple[float, int]:
    """(the process's seconds in the kernel, its page faults) so far; zeros where the system has no
    ``getrusage`` (Windows)."""
    try:
        import resource
    except ImportError:
        return 0.0, 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_stime, usage.ru_minflt + usage.ru_majflt


def _waits() -> dict[int, float]:
    """Seconds each thread of this process has spent ready to run but waiting for a processor, by its
    native id, from Linux's schedstat (empty where there is none; a thread ending meanwhile is left out)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return {}
    waits: dict[int, float] = {}
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as stat:
                waits[int(tid)] = int(stat.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            continue
    return waits


def mark(name: str) -> None:
    """Note that the step ``name`` of this script run has finished (no-op unless timing)."""
    marks = getattr(_RUN, "marks", None)
    if marks is not None:
        marks[name] = round(time.perf_counter() - _RUN.started, 4)


@contextmanager
def script_run(page: str) -> Iterator[None]:
    """Time the script run of ``page`` and append its line to the timings file, if one is set."""
    if not os.environ.get(ENV_TIMINGS):
        yield
        return
    # Read before the run: after st.stop() any Streamlit call raises, and the line would be lost.
    query = {key: st.query_params.get_all(key) for key in st.query_params}
    with timed(page, query):
        yield


@contextmanager
def timed(page: str, query: dict[str, list[str]] | None = None) -> Iterator[None]:
    """Time a block run in this thread as ``page`` (marks included), if a timings file is set.

    `script_run` for a page; the server's warm-up (`dashboard.ui.warmup`) for its own line.
    """
    path = os.environ.get(ENV_TIMINGS)
    if not path:
        yield
        return
    _RUN.started = time.perf_counter()
    cpu_started, process_started = time.thread_time(), time.process_time()
    system_started, faults_started = _usage()
    waits_started = _waits()
    _RUN.marks = {}
    status = "ok"
    try:
        yield
    except BaseException as error:
        status = type(error).__name__
        raise
    finally:
        system, faults = _usage()
        waits, me = _waits(), threading.get_native_id()
        record = {
            "time": time.time(),
            "page": page,
            "seconds": round(time.perf_counter() - _RUN.started, 4),
            "cpu_seconds": round(time.thread_time() - cpu_started, 4),
            "process_cpu_seconds": round(time.process_time() - process_started, 4),
            "process_system_seconds": round(system - system_started, 4),
            "waited_seconds": round(waits.get(me, 0.0) - waits_started.get(me, 0.0), 4),
            "process_waited_seconds": round(
                sum(w - waits_started.get(tid, 0.0) for tid, w in waits.items()), 4
            ),
            "page_faults": faults - faults_started,
            "status": status,
            "query": query or {},
            "marks": _RUN.marks,
        }
        _RUN.marks = None
        with _WRITE, open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
