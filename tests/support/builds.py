"""The disk cache's build children, seen from a test: found in /proc, their priority, waiting on them."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

BUILD_THREAD = "paper-dashboard-cache-build"  # `dashboard.index.diskcache.Build`'s thread


def build_children(out: Path) -> dict[int, str]:
    """The build children (``paper-dashboard index``) writing under ``out``: process ids and command lines."""
    found = {}
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = status.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(out) in command and " index " in command:
            found[int(status.parent.name)] = command
    return found


def nice_of(pid: int) -> int:
    """A process's nice value (/proc/<pid>/stat: the 17th field after the command's closing bracket);
    -1 once it has ended."""
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[16])
    except OSError:
        return -1


def wait_for(check: Callable[[], object], timeout: float = 120, poll: float = 0.2) -> None:
    """Return once ``check()`` is true, or after ``timeout`` seconds (the caller asserts what it needs)."""
    deadline = time.monotonic() + timeout
    while not check() and time.monotonic() < deadline:
        time.sleep(poll)
