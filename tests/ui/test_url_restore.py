"""A run that carries an old URL gets the newest one (`url.settle_query`).

Every rerun request carries the browser's URL as it was when sent, fragment ticks too. Under load a
tick of the first start's progress bar was sent after a typed search but before the browser had the
URL with ``q``: a callback wrote on top of that old URL, and the search vanished (the twenty-sessions
test saw it). AppTest sends ``at.query_params`` as the browser's URL, so a run given a URL the page
had before plays the late request; a URL never seen plays a link followed, in a run with no widget
change, and a glitch of the browser where a widget changed.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script() -> None:
    import streamlit as st

    from dashboard.filters import Filters
    from dashboard.ui import url

    # Widgets' callbacks run first, before the page's script.
    typed = st.session_state.pop("type", None)
    if typed:  # a search typed (its callback writes the URL)
        url.update_filters(lambda f: Filters.from_query({**f.to_query(), "q": typed})[0])
    sort = st.session_state.pop("sort", None)
    if sort:  # a page setting changed
        url.write_query({"sort": sort})
    if st.session_state.get("tick"):
        url.settle_query()  # what `context.build_progress` does before `st.rerun(scope="app")`
    else:
        url.settle_query()  # what `navigation.begin` does at the start of every whole-page run
        url.remember_query()
    filters, _ = url.read_filters()
    st.text(f"q={filters.q} sort={url.param('sort')}")


def _shown(at: AppTest) -> str:
    return str(at.text[0].value)


def _typed_transformer() -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params["code"] = "released"
    at.run()  # the page as opened
    at.session_state["type"] = "transformer"
    at.run()
    assert _shown(at) == "q=transformer sort="
    return at


def test_a_late_fragment_tick_does_not_undo_a_search_typed_before_it() -> None:
    at = _typed_transformer()
    # The tick left the browser before the URL with the search arrived there: it carries the URL of
    # before the search.
    at.query_params.pop("q")
    at.session_state["tick"] = True
    at.run()
    assert _shown(at) == "q=transformer sort="


def test_a_change_sent_with_the_old_url_is_written_on_the_newest() -> None:
    at = _typed_transformer()
    at.query_params.pop("q")  # a second click, sent before the first one's URL arrived
    at.session_state["sort"] = "title"
    at.run()
    assert _shown(at) == "q=transformer sort=title"


def test_a_change_sent_with_a_url_the_page_never_had_is_written_on_the_newest() -> None:
    at = _typed_transformer()
    at.query_params.clear()  # no URL this page showed: a change made on the page is made on its newest
    at.session_state["sort"] = "title"
    at.run()
    assert _shown(at) == "q=transformer sort=title"
    assert at.query_params["code"] == "released"


def test_a_url_never_seen_is_taken_as_it_comes() -> None:
    at = _typed_transformer()
    at.query_params["q"] = "graph"  # a link opened, a URL pasted
    at.run()
    assert _shown(at) == "q=graph sort="
    # and the newest is now that one: the URL with "transformer" is an old one
    at.query_params["q"] = "transformer"
    at.run()
    assert _shown(at) == "q=graph sort="
