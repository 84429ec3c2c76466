"""Run one heavy, untrusted job (reading and analysing an upload) in a child process with limits;
and a page's short steps in one long-lived helper process (`in_helper`, at the end of this module).

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
measure of what the result weighs (`dashboard.server.uploads` charges its memory budget from it).

    >>> run(sum, [1, 2, 3], timeout=30, memory_bytes=1 << 30)  # doctest: +SKIP
    (6, 21)
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from dashboard.system.cores import usable_cores
from dashboard.system.lifetime import end_with

MAX_WORKERS = max(1, usable_cores() - 1)
NICENESS = 10  # below the server's script threads: other sessions' pages come first
POLL_SECONDS = 0.05
# Imported once by the forkserver, so each job's process starts with them loaded.
PRELOAD = ("dashboard.corpus", "dashboard.analytics.analysis", "dashboard.server.uploads")

_slots = threading.BoundedSemaphore(MAX_WORKERS)
_context_lock = threading.RLock()
_context: Any = None
T = TypeVar("T")


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


@contextlib.contextmanager
def _without_main() -> Iterator[None]:
    """Processes started in this block do not re-run the parent's ``__main__``.

    A new process is told which module was ``__main__`` so that it can import it again; in the app
    that is the Streamlit script (``app.py``), which must not run in a worker. A job needs no main
    module: it is a function of the package.
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
            yield
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
        with _without_main():
            process.start()
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


# --- a helper process for short steps of a page -----------------------------------------------------
# Unlike `run` (a fresh, limited process per untrusted job), a page's own short step that holds the
# interpreter (the Terms page's word cloud: its layout and picture) is
# sent to one long-lived process, so the page's thread goes on meanwhile instead of waiting for the
# global lock. Its steps are the package's own functions on small, trusted arguments.

_helper: tuple[ProcessPoolExecutor, Future[None]] | None = None  # the helper and its first job


def _import(names: tuple[str, ...]) -> None:
    """The helper's first job: import ``names``."""
    for name in names:
        importlib.import_module(name)


def _started_helper(modules: tuple[str, ...]) -> tuple[ProcessPoolExecutor, Future[None]]:
    """The helper and its start (begun by the first call, in the background), importing ``modules``."""
    global _helper
    with _context_lock:
        if _helper is None:
            pool = ProcessPoolExecutor(
                max_workers=1, mp_context=_mp_context(), initializer=end_with, initargs=(os.getpid(),)
            )
            with _without_main():  # the helper process starts with its first job
                _helper = pool, pool.submit(_import, modules)
        return _helper


def start_helper(job: Callable[..., Any], *, imports: tuple[str, ...] = ()) -> None:
    """Begin the helper's start now, ready for ``job`` (its module and ``imports`` imported), without
    waiting for it: `in_helper` sends its steps there once it is ready. No-op if one is running."""
    _started_helper((job.__module__, *imports))


def _ready(start: Future[None]) -> bool:
    return start.done() and start.exception() is None


def helper_ready() -> bool:
    """Whether a helper process has started and is ready for steps."""
    with _context_lock:
        started = _helper
    return started is not None and _ready(started[1])


def in_helper(job: Callable[..., T], *args: Any, imports: tuple[str, ...] = (), **kwargs: Any) -> T:
    """``job(*args, **kwargs)`` in the server's helper process, waiting for its result (or its error,
    raised here). ``job`` must be a module-level function of the package, its arguments and result
    picklable; ``imports``: modules it imports as it runs, imported as the helper starts.

    The first call starts the helper (about a second: a process, ``job``'s module and ``imports``)
    and runs the job in this thread meanwhile, as does every call until the helper is ready, and any
    call the helper cannot take (its process died: the next call starts a new one). So a page never
    waits for the helper's start and never loses the step.
    """
    try:  # a job goes by name; one without a name to import (a stand-in, a closure) runs here
        pickle.dumps(job)
    except (pickle.PicklingError, AttributeError, TypeError):
        return job(*args, **kwargs)
    helper, ready = _started_helper((job.__module__, *imports))
    if _ready(ready):
        try:
            return helper.submit(job, *args, **kwargs).result()
        except (BrokenProcessPool, RuntimeError):  # RuntimeError: the executor is shutting down
            stop_helper(wait=False)
    return job(*args, **kwargs)


def stop_helper(*, wait: bool = True) -> None:
    """Stop the helper process, if one runs (the server's shutdown; a test's fresh start); the next
    `in_helper` starts another."""
    global _helper
    with _context_lock:
        if _helper is not None:
            _helper[0].shutdown(wait=wait, cancel_futures=True)
        _helper = None
