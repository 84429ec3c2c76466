"""Warm the server as it starts, so the first visitor does not wait for what every visitor shares.

`streamlit run app.py` serves the dashboard as a Streamlit ``st.App`` whose `lifespan` starts one
background thread as the server starts (`warm`). The thread does what the first page run of the first
session would otherwise do before it could show anything, through the same cached functions
(`dashboard.ui.data`), keyed the same way: it reads the default corpus (the bundled seeds,
``--corpus`` or ``PAPER_DASHBOARD_CORPUS``; a large raw file's disk-cache build is started here, see
`dashboard.index.diskcache`), imports the pages' modules (pandas, Plotly's figure classes, the app's own:
about 0.6 s of a cold first run on the seeds) and, for a corpus whose topics are stored (a prebuilt
index or a disk-cache entry), reads its topics.

For a corpus whose topics are stored it then makes, once per corpus, the codes that the first page a
visitor sees (the Overview) and every page's context count from (`first_page`). At a million papers
the Overview's first run after a finished warm-up took 21.2 s, 19 s of it making these codes (the
method names' meanings alone 11 s), and the page was complete in the browser at 22.8 s; with them made
here (22 s more of warm-up, 34 s in all) the run takes 0.85 s and the page is complete at 6.5 s. Its
first chart came at 6.5-6.8 s either way: the browser loading its chart library. A visit that arrives
while they are made waits on the same entries, as above, but shares the interpreter with the rest of
the warm-up: opened the moment the server answered (two alternating pairs at 1M), its page was complete
at 31.8 and 34.2 s, against 29.3 and 32.1 s without this step.

Last, for an index, it reads the index's files once into the system's page cache
(`dashboard.index.build.prewarm`, when they take less than half of the memory available): the pages map
those files and read them when used, and on a cold cache the first search for a common word at a
million papers read the rows it lists from the disk (the Papers page's first try 0.35 s, against
0.12 s cached). About 6.5 s of reading for the 5.1 GB of a million papers' index, after the first
page's codes; the server's resident memory does not grow.

Then it makes what the other pages' first runs make once per corpus (`other_pages`): the Trends
page's codes and its topics' terms per year, the word counts' totals, the Links & code page's link
and repository tables, the Topics page's map hovers and topic tree. At a million papers a first visit
to Trends after the rest of the warm-up took 5.8-6.7 s on the server (its codes 1.6 s and its topics'
terms per year 1.3 s of one processor, the rest waiting on the kernel for fresh memory), Links & code
1.7-2.7 s, Terms 1.2-1.5 s and Topics 1.1-1.7 s. Made here (about 7 s more of warm-up), one run of
`bench/scale.py` each: Trends 5.80 -> 0.15 s, Links & code 2.70 -> 0.82, Topics 1.12 -> 0.39, Terms
1.25 -> 1.08 (the rest is its first word cloud).

It does not fit topics. A fit holds the interpreter for about a second (scikit-learn's import and the
model), and in `bench/floor.py` a fit running beside the first visit delayed that visit's count line
from 1.25 to 2.20 s; left to the visit, the fit runs after the count is shown, while the browser is
still loading its chart library.

The server listens at once: a visit that arrives while the thread works waits on the same cache entry
(Streamlit computes each entry once, under a lock) under the page's usual spinner, and never computes
it twice. A failure here is logged and changes nothing else: the first visit then does the work
itself and says what went wrong, as it always does.

Its health check waits for the thread's first step, though. ``/_stcore/health`` is what Streamlit's
page asks before it connects, and what a load balancer (or `bench/floor.py`) asks before it sends a
visitor: it answers once the thread has imported the pages' modules (`HealthAfterImports`, `READY`),
about 0.45 s after the server starts on the 2-processor machine the figures come from. Those imports
(pandas, scipy's sparse matrices, Plotly's validators and the app's own: 0.43 s of one processor)
are the same for every corpus. Running beside a first visit's page load, they shared the processors
with the browser: eight alternating cold visits each, opened once the health check answered, showed
the count line at 1.17 s with the check answering at once and at 0.85 s with it waiting (first chart
2.20 and 2.01 s). A browser opened the moment the server listens, as ``streamlit run`` opens one,
loses nothing: it loads Streamlit's scripts while the imports run, and its health check waits for
them where its first page run would have (eight alternating starts, from the process start: count
line 1.66 s either way, first chart 2.75 s waiting and 2.70 s not). The corpus is not waited for
(minutes at a million papers): a visit that comes in the meantime sees the page's spinner, as above.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

LOG = logging.getLogger(__name__)

# What every page run imports, whatever the corpus: imported by `_import_pages` before the health check
# answers, not at a visitor's first run (most of a cold first run; Plotly's figure classes load on
# first use).
MODULES = (
    "dashboard.ui.data",  # pandas, SciPy's sparse matrices, the readers
    "dashboard.sources",
    "dashboard.ui.context",
    "dashboard.ui.components",
    "dashboard.ui.tables",
    "dashboard.ui.sidebar",
    "dashboard.figures.charts",
    "dashboard.figures.trends",
    "dashboard.figures.tree",
    "dashboard.analytics.papermap",
)

THREAD_NAME = "paper-dashboard-warm-up"
TIMINGS_PAGE = "(server start)"  # its line in a timings file (`dashboard.ui.timings`)
HELPER_IDLE = 10.0  # seconds without a page run, after a first visit, before the helper starts
# Seconds after a first visit's run when the helper starts even if runs never pause that long: until
# it is ready the Terms page draws its clouds in the server's own interpreter (`app_pages/terms.py`).
HELPER_AT_MOST = 60.0


class Visits:
    """When the server's page runs happen (app.py runs each page inside `run`), so that background work
    can wait for a quiet moment after a first visit (`wait_idle`)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0
        self._last_end: float | None = None  # monotonic seconds; None until a first run has ended

    @contextmanager
    def run(self) -> Iterator[None]:
        """One page run."""
        with self._changed:
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._last_end = time.monotonic()
                self._changed.notify_all()

    def wait_idle(self, seconds: float, at_most: float | None = None) -> None:
        """Return once a page run has ended and no run has happened for ``seconds``, or (given
        ``at_most``) once ``at_most`` seconds have passed since the first run ended, busy or not."""
        with self._changed:
            while self._last_end is None:
                self._changed.wait()
            deadline = None if at_most is None else time.monotonic() + at_most
            while True:
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return
                if self._running == 0 and self._last_end is not None:
                    left = self._last_end + seconds - now
                    if left <= 0:
                        return
                else:
                    left = None
                if deadline is not None:
                    left = deadline - now if left is None else min(left, deadline - now)
                self._changed.wait(left)


VISITS = Visits()
READY = threading.Event()  # set once `warm` has imported the pages' modules (`HealthAfterImports`)
READY_WAIT = 10.0  # seconds a health check waits for READY at most
READY_POLL = 0.01  # seconds between two looks at READY
HEALTH_PATH = "/_stcore/health"  # Streamlit's health check (under any base URL)


class HealthAfterImports:
    """ASGI middleware of the dashboard's server (``app.py``): ``/_stcore/health`` answers once the
    warm-up has imported the pages' modules (`READY`), or after `READY_WAIT` seconds at most. Every
    other request passes at once."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and str(scope.get("path", "")).endswith(HEALTH_PATH)
            and not READY.is_set()
        ):
            # Polled, not waited for in a thread: a client that gives up early leaves no thread behind.
            deadline = time.monotonic() + READY_WAIT
            while not READY.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(READY_POLL)
        await self.app(scope, receive, send)


def warm(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> float:
    """Import the pages' modules (then set `READY`), load the default corpus, read stored topics;
    the seconds it took.

    Never raises: a corpus that cannot be read or analysed is left to the first page run, which
    reports it in the page.
    """
    started = time.perf_counter()
    from dashboard.ui import timings

    with timings.timed(TIMINGS_PAGE):
        try:
            _import_pages()
            timings.mark("modules")
            LOG.info("imported the pages' modules in %.2f s", time.perf_counter() - started)
        except Exception:  # the first page run imports them again and shows the problem in the page
            LOG.exception("importing the pages' modules failed; the first visit will import them")
        finally:
            READY.set()
        try:
            from dashboard import index as paper_index
            from dashboard.ui import data

            source = data.default_source(argv, environ)
            result = data.load(source, "auto")
            timings.mark("load")
            path = data.index_path(source.digest)  # None: not an index
            if path is not None and len(result.papers) >= 2:  # stored topics: no fit
                fitted = data.analyze(source.digest, "auto", result.papers)
                timings.mark("topics")
                papers = first_page(source.digest, fitted.papers)
                timings.mark("first page")
                read = paper_index.prewarm(path)
                timings.mark("page cache")
                LOG.info("read %.0f MB of the index into the page cache", read / 1e6)
                other_pages(source.digest, fitted, papers)
                timings.mark("other pages")
        except Exception:  # the first page run does the same work and shows the problem in the page
            LOG.exception("warming the default corpus failed; the first visit will load it")
    seconds = time.perf_counter() - started
    LOG.info("warmed the default corpus in %.2f s", seconds)
    return seconds


def _import_pages() -> None:
    """Import what every page run needs, whatever the corpus: the app's modules, pandas, Plotly's
    figure classes and their validators."""
    for name in MODULES:
        importlib.import_module(name)
    import plotly.graph_objects as go

    go.Figure(go.Bar(x=[1], y=["a"], orientation="h")).to_plotly_json()  # loads the validators


def first_page(digest: str, papers: Any) -> Any:
    """Make the per-corpus codes the Overview and the page context read, through the pages' own cached
    functions and keys (the default number of topics, the repository cache as it is now); the paper
    table the pages read (with its repository columns).

    `tests/ui/test_warmup.py` runs the Overview after this and checks that its first run makes none.
    """
    import numpy as np

    from dashboard.ui import components, data

    cache_path = data.repo_cache_path()
    answers, latest, _ = data.repo_generation(cache_path)
    papers = data.with_repo_columns(digest, "auto", (answers, latest), str(cache_path), papers)
    for column in ("venue", "topic", "code_status"):
        data.groups(digest, "auto", column, papers)
    data.released(digest, papers)
    data.link_counts(digest, papers)
    data.list_items(digest, "datasets", True, papers)
    data.method_meanings(digest, papers)
    every = np.ones(len(papers), dtype=bool)
    for field in components.FILTER_COLUMNS:
        codes = components.field_codes(digest, "auto", field, papers)
        if codes is not None:
            codes.counts(every)  # a list column's papers x values matrix (`tables.Groups.counts`)
    return papers


def other_pages(digest: str, fitted: Any, papers: Any) -> None:
    """Make what the other pages' first runs make once per corpus, through their own cached functions
    and keys, as `first_page` does for the Overview: the Trends page's codes, its default periods'
    word counts and its topics' terms per year; the Links & code page's link table and repositories;
    the Topics page's map hovers and topic tree; the Terms page's word counts; the lookup of a paper
    by its id.

    Figures in the module's docstring. A visit that asks for one of these while it is made waits on the
    same entry (Streamlit computes it once, under a lock).
    """
    import numpy as np

    from dashboard.analytics import trends
    from dashboard.ui import data, repos, trend_data

    counts = data.term_counts(digest, 1, False, papers)  # Terms' and Trends' default: single words
    axes = trend_data.axes(digest, "auto", papers)
    years, _ = axes.span()
    if len(years) >= 2:  # what Trends draws past its "one year" notice
        for period in trends.default_periods(years):
            trend_data.period_counts(digest, 1, tuple(period), counts, axes)
        trend_data.topic_year_terms(digest, "auto", papers)
    for column in ("year", "source"):  # the release charts' groupings beyond the Overview's
        data.groups(digest, "auto", column, papers)
    repos.keys_in_view(digest, papers, np.ones(len(papers), dtype=bool))  # the link table, then targets
    data.repo_groups(digest, papers)
    data.map_sample_order(digest, papers)
    tree = data.fitted_tree(digest, papers)
    if tree is not None:
        data.tree_node_labels(digest, tree[0])
    if len(papers):
        _ = str(papers["id"].iloc[0]) in fitted.positions  # builds the id lookup (`components.positions_of`)


def start_helper_after(visits: Visits, idle: float = HELPER_IDLE, at_most: float = HELPER_AT_MOST) -> None:
    """Once a first visit's page run has ended and no page has run for ``idle`` seconds (or ``at_most``
    seconds after it, however busy), start the helper process that pages send short steps to (the
    Terms page's word cloud, `data.word_cloud`; a Terms page before then draws it itself).

    Started by the Terms page's first cloud instead, the helper was still importing (about 0.8 s of
    Plotly, pandas and wordcloud) when that page's first filter change came, which then drew its cloud
    in the server's own interpreter beside the helper's imports: the first new search on Terms took
    0.83 s at a million papers, the next two 0.35 s. Not as the server starts, nor right after a run:
    those imports would share the two processors with a visitor's browser drawing its page.
    """
    visits.wait_idle(idle, at_most)
    from dashboard.ui import data

    data.start_cloud_helper()


def _start() -> None:
    warm()
    start_helper_after(VISITS)


def log_to_terminal() -> None:
    """Write the dashboard's log lines (``dashboard.*``: the warm-up's steps, an upload read, a
    failure) to the server's terminal, as Streamlit writes its own: its ``logger.level`` and
    ``logger.messageFormat`` options. Python's default shows only warnings and errors, and no
    handler is set for a library's logger."""
    from streamlit import config

    logger = logging.getLogger("dashboard")
    if any(getattr(handler, "paper_dashboard", False) for handler in logger.handlers):
        return
    handler = logging.StreamHandler()
    handler.paper_dashboard = True  # type: ignore[attr-defined]
    formatter = logging.Formatter(config.get_option("logger.messageFormat"))
    formatter.default_msec_format = "%s.%03d"  # as Streamlit's own lines
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    logger.setLevel(str(config.get_option("logger.level")).upper())


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """The dashboard server's start and stop (``st.App(..., lifespan=lifespan)``): start `warm`, then
    (after the first visit) the helper process of the pages' short steps (`start_helper_after`); at
    the stop, end that helper (`dashboard.server.worker.in_helper`). First, the dashboard's log lines go to
    the server's terminal (`log_to_terminal`) and its connections answer without Nagle's delay
    (`dashboard.ui.sockets`); NumPy's arrays stay on ordinary pages (`dashboard.system.heap.small_pages`)."""
    from streamlit import config

    from dashboard.server import worker
    from dashboard.system import heap
    from dashboard.ui import sockets

    log_to_terminal()
    LOG.debug("NumPy's huge-page requests turned off: %s", heap.small_pages())
    port = config.get_option("server.port")
    LOG.debug("TCP_NODELAY set on %d listening socket(s) of port %s", sockets.no_delay(port), port)
    threading.Thread(target=_start, name=THREAD_NAME, daemon=True).start()
    try:
        yield
    finally:
        worker.stop_helper(wait=False)
