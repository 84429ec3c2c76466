"""Run one heavy, untrusted job (reading and analysing an upload) in a child process with limits.

Parsing a workbook or fitting topics on an upload holds a CPU core and Python's global lock for
seconds to minutes; in the server's own process that slows every other session's page. `run` does
the job in a fresh process instead (forked from a small "forkserver" process that has the readers
imported already, so a start costs milliseconds, not an import of pandas), at a lower CPU priority
and on one thread, and stops it when it runs out of time or memory:

- time: the child is killed after ``timeout`` seconds (`WorkerError` "took longer than ...");
- memory: the parent reads the child's resident memory every 50 ms and kills it above
  ``memory_bytes`` (an address-space rlimit would be hit by the allocators' reservations long
  before real use); a child that dies any other way is reported with its exit code.

At most `MAX_WORKERS` jobs run at once (one core is left to the server); further jobs wait for a
free slot. The result comes back pickled through a pipe; its size in bytes is returned with it, a
measure of what the result weighs (`dashboard.uploads` charges its memory budget from it).

    >>> run(sum, [1, 2, 3], timeout=30, memory_bytes=1 << 30)  # doctest: +SKIP
    (6, 21)
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

MAX_WORKERS = max(1, (os.cpu_count() or 2) - 1)
NICENESS = 10  # below the server's script threads: other sessions' pages come first
POLL_SECONDS = 0.05
# Imported once by the forkserver, so each job's process starts with them loaded.
PRELOAD = ("dashboard.corpus", "dashboard.analysis", "dashboard.uploads")

_slots = threading.BoundedSemaphore(MAX_WORKERS)
_context_lock = threading.RLock()
_context: Any = None


class WorkerError(Exception):
    """The job did not finish: too slow, too much memory, or it died; the message says which."""


def _mp_context() -> Any:
    global _context
    with _context_lock:
        if _context is None:
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            context = multiprocessing.get_context(method)
            if method == "forkserver":
                context.set_forkserver_preload(list(PRELOAD))
            _context = context
        return _context


def _child(connection: Connection, job: Callable[..., Any], args: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # one core for the job; the server keeps the other(s)
        outcome: tuple[str, Any] = ("ok", job(*args))
    except MemoryError:
        outcome = ("memory", "")
    except BaseException as error:  # anything the job raises goes back as text, never kills the server
        outcome = ("error", f"{type(error).__name__}: {str(error)[:300]}")
    connection.send_bytes(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    connection.close()


def _start_without_main(process: Any) -> None:
    """Start ``process`` without re-running the parent's ``__main__`` in it.

    A new process is told which module was ``__main__`` so that it can import it again; in the app
    that is the Streamlit script (``app.py``), which must not run in the worker. The job needs no
    main module: it is a function of the package.
    """
    from multiprocessing import spawn

    original = spawn.get_preparation_data

    def without_main(name: str) -> dict[str, Any]:
        data = original(name)
        for key in ("init_main_from_path", "init_main_from_name"):
            data.pop(key, None)
        return data

    with _context_lock:
        spawn.get_preparation_data = without_main  # type: ignore[assignment]
        try:
            process.start()
        finally:
            spawn.get_preparation_data = original  # type: ignore[assignment]


def resident_bytes(pid: int) -> int | None:
    """Resident memory of a process in bytes (Linux ``/proc``), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def run(job: Callable[..., Any], *args: Any, timeout: float, memory_bytes: int) -> tuple[Any, int]:
    """``job(*args)`` in a child process: (its result, the result's pickled size in bytes).

    Raises `WorkerError` when the job takes longer than ``timeout`` seconds, holds more than
    ``memory_bytes`` of resident memory, raises, or dies. ``job`` must be importable (a module-level
    function) and its arguments and result picklable.
    """
    with _slots:
        context = _mp_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_child, args=(sender, job, args), daemon=True)
        _start_without_main(process)
        sender.close()
        peak = 0
        try:
            deadline = time.monotonic() + timeout
            while not receiver.poll(POLL_SECONDS):
                resident = resident_bytes(process.pid) if process.pid else None
                peak = max(peak, resident or 0)
                if resident is not None and resident > memory_bytes:
                    raise WorkerError(
                        f"stopped after using more than {memory_bytes / (1 << 30):.1f} GiB of memory"
                    )
                if time.monotonic() > deadline:
                    raise WorkerError(f"stopped after {timeout:.0f} s, the time one upload may take")
                if not process.is_alive() and not receiver.poll(0):
                    raise WorkerError(f"the reading process died (exit code {process.exitcode})")
            try:
                payload = receiver.recv_bytes()
            except (EOFError, OSError):
                raise WorkerError(f"the reading process died (exit code {process.exitcode})") from None
        finally:
            receiver.close()
            if process.is_alive():
                process.kill()
            process.join(timeout=10)
    status, value = pickle.loads(payload)
    if status == "memory":
        raise WorkerError("ran out of memory")
    if status == "error":
        raise WorkerError(f"failed ({value})")
    return value, len(payload)
