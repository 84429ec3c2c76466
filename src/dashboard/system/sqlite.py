"""One busy timeout and retry policy for every SQLite store of the package: the library
(`dashboard.library.store`) and the repository cache (`dashboard.repocheck.store`).

Several sessions of the server and CLI runs write the same files. A writer waits `BUSY_TIMEOUT_S` for
another's lock (SQLite's busy handler); where that is not enough (many writers on a loaded machine,
or a lock SQLite does not wait for, such as switching a new file to WAL), `with_retries` tries the
step again after a growing pause, `BUSY_RETRIES` times, before the error reaches the user.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

BUSY_TIMEOUT_S = 30.0
BUSY_RETRIES = 5
RETRY_PAUSE_S = 0.05  # doubled after each try: 0.05, 0.1, 0.2, 0.4, 0.8 s

T = TypeVar("T")


def connect(
    path: str | Path, timeout: float = BUSY_TIMEOUT_S, *, read_only: bool = False
) -> sqlite3.Connection:
    """A connection with the busy timeout, autocommit (the stores take ``BEGIN IMMEDIATE`` themselves),
    usable from any thread; ``read_only``: opened ``mode=ro``, so the file is never created or changed."""
    if read_only:
        target = f"{Path(path).resolve().as_uri()}?mode=ro"
        db = sqlite3.connect(target, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
    else:
        db = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return db


def is_busy(error: BaseException) -> bool:
    """Whether an error is SQLite's "database is locked" or "busy" (worth trying again)."""
    text = str(error)
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def with_retries(action: Callable[[], T], *, retries: int | None = None) -> T:
    """``action()``, tried again after a growing pause while it fails with `is_busy`; any other error,
    and the last busy one, is raised. Give it a step that is safe to repeat (taking a lock, opening)."""
    tries = BUSY_RETRIES if retries is None else retries
    for attempt in range(tries + 1):
        try:
            return action()
        except sqlite3.OperationalError as error:
            if attempt == tries or not is_busy(error):
                raise
            time.sleep(RETRY_PAUSE_S * (2**attempt))
    raise AssertionError("unreachable")
