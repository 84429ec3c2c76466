"""Where the app may keep what it computed between runs: one folder, one switch, for every cache.

``PAPER_DASHBOARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/paper-dashboard/analysis``, else
``~/.cache/paper-dashboard/analysis``; ``PAPER_DASHBOARD_CACHE_DIR=none`` switches every disk cache off (a
deployment that must not write to disk). The analysis cache (`dashboard.index.diskcache`) keeps its
index entries there and the embedding store (`dashboard.search.topicspace`) its vectors.

>>> cache_root({"PAPER_DASHBOARD_CACHE_DIR": "/srv/cache"}).as_posix()
'/srv/cache'
>>> enabled({"PAPER_DASHBOARD_CACHE_DIR": "none"})
False
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_CACHE_DIR = "PAPER_DASHBOARD_CACHE_DIR"


def enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """False when ``PAPER_DASHBOARD_CACHE_DIR`` is ``none`` (a deployment that must not write to disk)."""
    return environ.get(ENV_CACHE_DIR, "").strip().lower() != "none"


def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    """The cache directory (see the module docstring for the order)."""
    if environ.get(ENV_CACHE_DIR, "").strip():
        return Path(environ[ENV_CACHE_DIR]).expanduser()
    base = environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "paper-dashboard" / "analysis"
