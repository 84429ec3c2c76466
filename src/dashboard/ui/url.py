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

Query = dict[str, list[str]]  # a URL's query: every key with all its values


def read_query() -> Query:
    """Every query parameter with all its values (``st.query_params.to_dict`` keeps only the last)."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def read_filters() -> tuple[Filters, list[str]]:
    """The filters in the URL now, with notices about values that were ignored."""
    return Filters.from_query(read_query())


def _normalised(query: dict[str, str | list[str]]) -> dict[str, list[str]]:
    return {k: [v] if isinstance(v, str) else list(v) for k, v in query.items()}


def write_query(new_values: dict[str, str | list[str] | None]) -> None:
    """Set (or with None, remove) some URL parameters in one update, keeping the others.

    Written on the newest URL (`settle_query`); in a fragment-only run nothing is written (the app's
    one fragment has no widgets, so a change there is an echo: `in_fragment_run`).
    """
    if in_fragment_run():
        return
    settle_query(changing=True)
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


def run_context() -> Any:
    """This script run's context (None outside a run, e.g. in a bare test)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx()


SEEN_URLS = 32  # the URLs of one page a session remembers having had (`settle_query`)


def _frozen(query: Query) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((key, tuple(values)) for key, values in query.items()))


def remember_query(query: Query | None = None) -> None:
    """Keep the URL as this session's server last had it (or ``query``, about to be this page's),
    with its page and the page's earlier URLs, for `settle_query`."""
    page = getattr(run_context(), "page_script_hash", "")
    query = read_query() if query is None else query
    before = st.session_state.get(keys.NAV_NEWEST_URL)
    seen = [u for u in before[2] if u != _frozen(query)] if before and before[0] == page else []
    st.session_state[keys.NAV_NEWEST_URL] = (page, query, [*seen[-SEEN_URLS + 1 :], _frozen(query)])


def settle_query(*, changing: bool = False) -> None:
    """Make `st.query_params` the newest URL of this page the session knows, where the run's is older.

    Every rerun request carries the browser's URL as it was when sent, and Streamlit sets
    `st.query_params` from it, fragment ticks too. A request sent after a change but before the browser
    had the URL that change's callback wrote (a fragment's timed tick, a second click on a busy server)
    carries the URL of before the change: a callback writing on top of it, or a whole-page rerun from
    it, brought back the old filters (under load a typed search vanished this way). So a run whose URL
    is one this page had before, without the back or forward button, gets the newest instead. A URL
    never seen (a link followed to this page) and the back and forward buttons are taken as they come.

    ``changing``: called to change the URL (`write_query`, a widget's callback, before the page has
    run). A change is made on the page the browser shows, whose URL the server wrote or saw, so one
    whose run carries a URL this page never had is written on the newest too: a typed search must not
    drop the session's other filters because its request carried a URL the browser never showed.
    """
    ctx, last = run_context(), st.session_state.get(keys.NAV_NEWEST_URL)
    if ctx is None or last is None or ctx.is_history_navigation:
        return
    page, newest, seen = last
    current = read_query()
    if page == ctx.page_script_hash and current != newest and (changing or _frozen(current) in seen):
        st.query_params.from_dict(newest)


def in_fragment_run() -> bool:
    """Whether this run reruns fragments only. No widget outside a fragment can change in such a
    run: a change of one sends a whole-page rerun, so a callback called in it got a widget value the
    browser sent before the last run's value reached it (an echo), and must change nothing."""
    ctx = run_context()
    return bool(getattr(ctx, "fragment_ids_this_run", None))
