"""A fragment's whole-page rerun keeps the newest URL (the first start's progress bar).

Every rerun request carries the browser's URL as it was when sent, fragment ticks too. Under load a
tick of the build's progress bar was sent after a typed search but before the browser had the URL with
``q``; the bar then found the build done and reran the whole page with the URL of before the search,
which lost it (the twenty-sessions test saw ``q`` vanish). `url.restore_query` puts back the URL of
the last whole-page run before such a rerun. AppTest sends ``at.query_params`` as the browser's URL,
so a run given an older URL than the last one plays the late tick.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script() -> None:
    import streamlit as st

    from dashboard.ui import url

    if st.session_state.get("tick"):
        url.restore_query()  # what `context.build_progress` does before `st.rerun(scope="app")`
    else:
        url.remember_query()  # what `navigation.begin` does at the start of every whole-page run
        if st.session_state.get("type"):
            url.update_filters(lambda f: f.__class__.from_query({"q": [st.session_state["type"]]})[0])
    filters, _ = url.read_filters()
    st.text(f"q={filters.q}")


def _shown(at: AppTest) -> str:
    return str(at.text[0].value)


def test_a_late_fragment_tick_does_not_undo_a_search_typed_before_it() -> None:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params["q"] = "transformer"
    at.run()
    assert _shown(at) == "q=transformer"
    # The tick left the browser before the URL with the search arrived there.
    at.query_params.clear()
    at.session_state["tick"] = True
    at.run()
    assert _shown(at) == "q=transformer"
    assert at.query_params.get("q") in ("transformer", ["transformer"])  # the URL the browser is sent


def test_it_restores_the_newest_whole_page_url_and_what_the_run_wrote() -> None:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params["q"] = "graph"
    at.run()
    # A later whole-page run (back, a link) with another URL, whose run then writes a search itself.
    at.query_params["q"] = "diffusion"
    at.session_state["type"] = "diffusion model"
    at.run()
    assert _shown(at) == "q=diffusion model"
    at.session_state["type"] = ""
    at.query_params["q"] = "graph"  # a tick carrying the first URL
    at.session_state["tick"] = True
    at.run()
    assert _shown(at) == "q=diffusion model"


def test_a_tick_carrying_the_current_url_changes_nothing() -> None:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params["q"] = "graph"
    at.run()
    at.session_state["tick"] = True
    at.run()
    assert _shown(at) == "q=graph"
