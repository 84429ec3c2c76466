"""Plotly's JSON packs numeric arrays as typed base64 (``{"dtype": "i4", "bdata": ...}``): read them back."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np


def values(array: Any) -> list:
    """A figure's data array as a list, whether packed as typed base64 or plain."""
    if isinstance(array, dict) and "bdata" in array:
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"])).tolist()
    return list(array)
