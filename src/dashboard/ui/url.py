"""The URL as the single source of truth for filters and page settings.

Widgets never own a filter: each run reads `st.query_params`, and a widget's on-change callback
writes the new value back to the URL (one history entry per change, so the back button steps
through views). Before a widget is drawn its session-state value is set from the URL, so a pasted
link or the back button moves the widgets too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st

from dashboard.filters import URL_KEYS, Filters
from dashboard.ui import keys


def read_query() -> dict[str, list[str]]:
    """Every query parameter with all its values (``st.query_params.to_dict`` keeps only the last)."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def read_filters() -> tuple[Filters, list[str]]:
    """The filters in the URL now, with notices about values that were ignored."""
    return Filters.from_query(read_query())


def _normalised(query: dict[str, str | list[str]]) -> dict[str, list[str]]:
    return {k: [v] if isinstance(v, str) else list(v) for k, v in query.items()}


def write_query(new_values: dict[str, str | list[str] | None]) -> None:
    """Set (or with None, remove) some URL parameters in one update, keeping the others."""
    current = read_query()
    updated = dict(current)
    for key, value in new_values.items():
        if value is None or value == [] or value == "":
            updated.pop(key, None)
        else:
            updated[key] = [value] if isinstance(value, str) else list(value)
    if updated != current:
        st.query_params.from_dict(updated)
    remember_query()


def write_filters(filters: Filters) -> None:
    """Put ``filters`` in the URL, replacing every filter parameter and keeping page settings."""
    query = _normalised(filters.to_query())
    write_query({key: query.get(key) for key in URL_KEYS})


def update_filters(change: Callable[[Filters], Filters]) -> None:
    """Apply ``change`` to the filters in the URL and write the result back."""
    filters, _ = read_filters()
    write_filters(change(filters))


def sync_widget(key: str, value: Any) -> None:
    """Make a widget (drawn later in this run) show ``value``, e.g. after the back button."""
    if key not in st.session_state or st.session_state[key] != value:
        st.session_state[key] = value


def setting(key: str, allowed: Iterable[str], default: str) -> str:
    """A page setting read from the URL; an unknown value falls back to ``default``."""
    values = st.query_params.get_all(key)
    value = values[-1] if values else default
    return value if value in set(allowed) else default


def param(key: str, default: str = "") -> str:
    """The last value of one URL parameter, or ``default``."""
    values = st.query_params.get_all(key)
    return values[-1] if values else default


def remember_query() -> None:
    """Keep the URL as this whole-page run has it (at its start, after the callbacks, and after each
    write), for `restore_query`."""
    st.session_state[keys.URL_OF_LAST_RUN] = read_query()


def restore_query() -> None:
    """Before a fragment reruns the whole page: put back the URL the last whole-page run had.

    Every rerun request carries the browser's URL as it was when sent, and Streamlit sets
    `st.query_params` from it, fragment runs too. A timed fragment's tick sent after a widget change
    but before the browser had the URL that change's callback wrote carries the old URL; a whole-page
    rerun from that fragment would then run, and write back, the filters of before the change (a typed
    search vanished this way under load). The last whole-page run's URL is the newest the server knows.
    """
    last = st.session_state.get(keys.URL_OF_LAST_RUN)
    if last is not None and last != read_query():
        st.query_params.from_dict(last)
