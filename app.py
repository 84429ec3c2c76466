"""Paper Dashboard: `streamlit run app.py` (add `-- --corpus PATH...` for another corpus)."""

from pathlib import Path

import streamlit as st

# A local image, served by the app itself: a `:material/...:` page icon is fetched from a Google host.
ICON = Path(__file__).resolve().parent / "src" / "dashboard" / "data" / "page_icon.png"


def main() -> None:
    """One script run: the page the URL names, under page links that carry the filters."""
    from dashboard.ui import navigation, timings, warmup

    st.set_page_config(page_title="Paper Dashboard", page_icon=str(ICON), layout="wide")
    # Streamlit's own links drop the query (and so the filters): the app draws its own
    # (`dashboard.ui.navigation`).
    page = st.navigation(navigation.st_pages(), position="hidden")
    links = navigation.begin(page)
    # Runs are counted for the helper process's start (`warmup.start_helper_after`) and timed if
    # PAPER_DASHBOARD_TIMINGS names a file (bench/).
    with warmup.VISITS.run(), timings.script_run(page.title):
        page.run()
    navigation.finish(links)


if __name__ == "__main__":  # a script run (Streamlit runs this file as "__main__" for each)
    main()
else:
    # `streamlit run app.py` finds this server app in the file: the dashboard's own server, which warms
    # the default corpus as it starts and answers its health check once the pages' modules are
    # imported (`dashboard.ui.warmup`), turns Nagle's delay off on its connections
    # (`dashboard.ui.sockets`) and then runs this file for each page; its page tells the browser to
    # fetch the chart library at once and the other pages' modules after the first page
    # (`dashboard.ui.preload`).
    from starlette.middleware import Middleware

    from dashboard.ui.preload import ModulePreload
    from dashboard.ui.warmup import HealthAfterImports, lifespan

    app = st.App(
        __file__, lifespan=lifespan, middleware=[Middleware(HealthAfterImports), Middleware(ModulePreload)]
    )
