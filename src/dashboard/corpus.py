"""The corpus readers' public face: `load`, `load_uploads`, the digests and the load report.

The readers themselves live in the `dashboard.readers` package (one module per format family, one
declarative field map, bounded byte reading, the load report); its docstring lists the formats. This
module keeps the names every caller uses. The limits (``MAX_INPUT_BYTES`` ...) live in
`dashboard.readers.limits`; reading or setting them here reads or sets them there, so
``dashboard.corpus.MAX_INPUT_BYTES = 2 << 30`` before a load still raises the limit.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from dashboard.readers import limits
from dashboard.readers.delimited import csv_lines
from dashboard.readers.fields import FIELD_ALIASES
from dashboard.readers.load import digest_paths, digest_uploads, input_files, load, load_uploads
from dashboard.readers.load_report import FileReport, LoadReport, LoadResult, Problem
from dashboard.readers.registry import SUPPORTED_SUFFIXES
from dashboard.readers.venues import venue_and_year

__all__ = [
    "FIELD_ALIASES",
    "SUPPORTED_SUFFIXES",
    "FileReport",
    "LoadReport",
    "LoadResult",
    "Problem",
    "csv_lines",
    "venue_and_year",
    "digest_paths",
    "digest_uploads",
    "input_files",
    "load",
    "load_uploads",
]


def __getattr__(name: str) -> Any:
    """The limits, read from `dashboard.readers.limits` at each access."""
    if name in limits.NAMES:
        return getattr(limits, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _limit(name: str) -> property:
    def get(_module: types.ModuleType) -> Any:
        return getattr(limits, name)

    def set_(_module: types.ModuleType, value: Any) -> None:
        setattr(limits, name, value)

    return property(get, set_, doc=f"`dashboard.readers.limits.{name}`")


class _Facade(types.ModuleType):
    """Reading or setting a limit here reads or sets it in `dashboard.readers.limits`."""


for _name in limits.NAMES:
    setattr(_Facade, _name, _limit(_name))

sys.modules[__name__].__class__ = _Facade
