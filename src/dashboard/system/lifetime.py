"""Worker processes that end with the process that started them.

A pool's worker waits for work from its parent's queue and never learns that the parent is gone: every
stopped server left its helper, the forkserver it was forked from and multiprocessing's resource tracker
running (about 245 MB), and every killed index build (a first start's disk-cache build ends with its
server) left its count workers (150-420 MB each). `end_with` as a pool's initializer ends them.
"""

from __future__ import annotations

import os
import select
import threading
import time


def end_with(parent: int) -> None:
    """A pool's initializer, run as the worker starts: end this process when ``parent`` ends.

    At its start, not in a first job: a parent stopped while its worker started cancels that job, and
    one that then ended before its queue had sent the job left a worker that never got it.
    """
    threading.Thread(target=exit_with, args=(parent,), name="end-with-parent", daemon=True).start()


def exit_with(pid: int) -> None:
    """End this process once the process ``pid`` has ended, however it ended (blocks until then)."""
    try:
        watched = os.pidfd_open(pid)  # readable once the process has ended (Linux 5.3 and later)
    except (AttributeError, OSError):
        while is_running(pid):
            time.sleep(1.0)
    else:
        select.select([watched], [], [])
    os._exit(0)


def is_running(pid: int) -> bool:
    """Whether a process ``pid`` exists (a number reused by another user's process counts as gone)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or another user's: a reused number
        return False
    return True
