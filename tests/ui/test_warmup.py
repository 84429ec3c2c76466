"""The server warms the default corpus as it starts (`dashboard.ui.warmup`), in the caches every page uses.

In-process: `warm` fills the same cache entries a page run reads (one load, never two, even when a visit
arrives mid-way), reads an index's stored topics but never fits a raw corpus's, and a failure is logged
and left to the page. Against a real server (`streamlit run app.py`): `app.py` declares the server app
that `streamlit run` finds, and the warm-up runs as the server starts, before any visit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.web.server.app_discovery import discover_asgi_app
from support import people_corpus
from support.server import healthy, running_server

from dashboard import corpus, sources
from dashboard import index as index
from dashboard.analytics import analysis, hierarchy, trends
from dashboard.figures import charts
from dashboard.repocheck import columns as repo_columns
from dashboard.repocheck import targets as repo_targets
from dashboard.text import extract
from dashboard.ui import data, keys, repos, tables, timings, warmup

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture(scope="module")
def seeds_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    return out


def _source(corpus_path: Path) -> data.ChosenCorpus:
    return data.default_source(["--corpus", str(corpus_path)], {})


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, delay: float = 0.0) -> list[int]:
    """Count (and optionally slow down) the real ``owner.name``; the calls' list grows by one per call."""
    real = getattr(owner, name)
    calls: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        time.sleep(delay)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_app_py_declares_the_server_app_that_streamlit_run_finds() -> None:
    found = discover_asgi_app(REPO / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"


def test_warm_fills_the_cache_entry_a_page_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = _counting(monkeypatch, corpus, "load")
    warmup.warm(["--corpus", str(SEEDS)], {})
    assert len(loads) == 1
    source = _source(SEEDS)
    first = data.load(source, "auto")
    assert data.load(source, "auto") is first and len(loads) == 1  # the page's load is a cache hit
    assert len(first.papers) > 0


def test_a_visit_during_the_warm_up_waits_for_it_and_never_loads_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loads = _counting(monkeypatch, corpus, "load", delay=0.5)
    thread = threading.Thread(target=warmup.warm, args=(["--corpus", str(SEEDS)], {}))
    thread.start()
    time.sleep(0.1)  # the warm-up is inside its (slowed) load now
    visit = data.load(_source(SEEDS), "auto")
    thread.join(timeout=60)
    assert len(loads) == 1
    assert data.load(_source(SEEDS), "auto") is visit


def test_raw_files_are_never_fitted_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    fits = _counting(monkeypatch, analysis, "analyze")
    warmup.warm(["--corpus", str(SEEDS)], {})
    assert fits == []


def test_an_index_s_stored_topics_are_read_at_start(
    monkeypatch: pytest.MonkeyPatch, seeds_index: Path
) -> None:
    reads = _counting(monkeypatch, sources.IndexSource, "analysis")
    fits = _counting(monkeypatch, analysis, "analyze")
    warmup.warm(["--corpus", str(seeds_index)], {})
    assert len(reads) == 1 and fits == []
    source = _source(seeds_index)
    papers = data.load(source, "auto").papers
    topics = data.analyze(source.digest, "auto", papers)
    assert len(reads) == 1  # the page's analysis is a cache hit
    assert topics.topics["topic"].nunique() > 1


def test_an_index_is_read_into_the_page_cache_after_its_first_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, seeds_index: Path
) -> None:
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv(timings.ENV_TIMINGS, str(log))
    with caplog.at_level(logging.INFO, logger=warmup.LOG.name):
        warmup.warm(["--corpus", str(seeds_index)], {})
    (line,) = [json.loads(text) for text in log.read_text().splitlines()]
    assert list(line["marks"])[-3:] == ["first page", "page cache", "other pages"]
    size = sum(path.stat().st_size for path in seeds_index.rglob("*") if path.is_file())
    assert f"read {size / 1e6:.0f} MB of the index into the page cache" in caplog.text


def test_a_failure_is_logged_and_left_to_the_page(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise OSError("disk on fire")

    monkeypatch.setattr(data, "load", broken)
    with caplog.at_level(logging.ERROR, logger=warmup.LOG.name):
        warmup.warm(["--corpus", str(SEEDS)], {})  # does not raise
    assert "warming the default corpus failed" in caplog.text and "disk on fire" in caplog.text


def test_the_warm_up_writes_its_own_timings_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv(timings.ENV_TIMINGS, str(log))
    warmup.warm(["--corpus", str(SEEDS)], {})
    (line,) = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["page"] == warmup.TIMINGS_PAGE and line["status"] == "ok"
    assert list(line["marks"]) == ["modules", "load"]  # raw files: no topics at start


@pytest.mark.slow
def test_a_real_server_warms_its_corpus_as_it_starts_before_any_visit(
    tmp_path: Path, seeds_index: Path
) -> None:
    log = tmp_path / "runs.jsonl"
    env = {timings.ENV_TIMINGS: str(log)}
    with running_server(["--corpus", str(seeds_index)], env=env) as (_url, process):
        deadline = time.monotonic() + 60
        while not (log.is_file() and log.read_text().strip()):
            assert process.poll() is None and time.monotonic() < deadline, "no warm-up line within 60 s"
            time.sleep(0.2)
        lines = [json.loads(text) for text in log.read_text().splitlines()]
    assert [line["page"] for line in lines] == [warmup.TIMINGS_PAGE]  # no page has run: nobody visited
    assert lines[0]["status"] == "ok"
    assert list(lines[0]["marks"]) == ["modules", "load", "topics", "first page", "page cache", "other pages"]


@pytest.fixture
def not_ready() -> Iterator[None]:
    """`warmup.READY` cleared for the test (as in a server that has just started), set again after."""
    warmup.READY.clear()
    try:
        yield
    finally:
        warmup.READY.set()


def _through_gate(path: str) -> tuple[asyncio.Task, list[str]]:
    """A GET of ``path`` sent through `HealthAfterImports` to an app that notes the paths it answers."""
    answered: list[str] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        answered.append(scope["path"])

    gate = warmup.HealthAfterImports(app)
    scope = {"type": "http", "method": "GET", "path": path}
    return asyncio.ensure_future(gate(scope, None, None)), answered


def test_the_health_check_waits_for_the_pages_modules_and_nothing_else_does(not_ready: None) -> None:
    async def scenario() -> None:
        health, answered = _through_gate("/base/_stcore/health")
        page, page_answered = _through_gate("/base/")
        await asyncio.wait_for(page, 5)
        assert page_answered == ["/base/"]  # the page and its files are served while the imports run
        await asyncio.sleep(0.3)
        assert not health.done() and answered == []
        warmup.READY.set()
        await asyncio.wait_for(health, 5)
        assert answered == ["/base/_stcore/health"]

    asyncio.run(scenario())


def test_a_health_check_is_answered_after_its_longest_wait_anyway(
    not_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warmup, "READY_WAIT", 0.2)

    async def scenario() -> list[str]:
        health, answered = _through_gate("/_stcore/health")
        await asyncio.wait_for(health, 5)
        return answered

    assert asyncio.run(scenario()) == ["/_stcore/health"] and not warmup.READY.is_set()


def test_a_failed_import_still_lets_the_health_check_answer(
    not_ready: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> None:
        raise ImportError("no module named pandas")

    monkeypatch.setattr(warmup, "_import_pages", broken)
    with caplog.at_level(logging.ERROR, logger=warmup.LOG.name):
        warmup.warm(["--corpus", str(SEEDS)], {})
    assert warmup.READY.is_set()
    assert "importing the pages' modules failed" in caplog.text and "no module named pandas" in caplog.text


@pytest.mark.slow
def test_a_real_server_answers_its_health_check_once_the_pages_modules_are_imported(tmp_path: Path) -> None:
    """Asked every 20 ms from the server's start, the health check first says ``ok`` after the warm-up's
    imports have ended (the server's terminal says so first), and the corpus is warmed after."""
    log = tmp_path / "server.log"
    with running_server(["--corpus", str(SEEDS)], log_path=log, wait=False) as (url, process):
        deadline = time.monotonic() + 60
        while not healthy(url):
            assert process.poll() is None and time.monotonic() < deadline, "no answer within 60 s"
            time.sleep(0.02)
        at_ok = log.read_text(errors="replace")
        while "warmed the default corpus in" not in log.read_text(errors="replace"):
            assert process.poll() is None and time.monotonic() < deadline, "no warm-up line within 60 s"
            time.sleep(0.1)
    assert re.search(r"imported the pages' modules in \d+\.\d\d s", at_ok), at_ok[-2000:]


@pytest.fixture(scope="module")
def people_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of a corpus with authors, institutions, countries and decisions: every Overview chart."""
    out = tmp_path_factory.mktemp("people-index") / "people.index"
    index.build_index([people_corpus.write(out.parent)], out, workers=1)
    return out


# What the Overview and the page context make once per corpus: each a real function, counted.
CODE_MAKERS = (
    (tables, "group_codes"),
    (tables, "list_items"),
    (index, "read_meanings"),  # an index keeps each paper's method names per meaning
    (repo_columns, "repo_columns"),
    (repo_targets, "paper_targets"),
)


def _counted(monkeypatch: pytest.MonkeyPatch, makers: tuple[tuple[object, str], ...]) -> dict[str, list[int]]:
    """Each of ``makers`` (owner, function name) counted: its calls' list, by name."""
    return {
        f"{getattr(owner, '__name__', owner)}.{name}": _counting(monkeypatch, owner, name)
        for owner, name in makers
    }


def _first_overview(monkeypatch: pytest.MonkeyPatch, corpus_path: Path) -> AppTest:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py", "--corpus", str(corpus_path)])
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    titles = json.dumps([chart.proto.spec for chart in at.get("plotly_chart")])
    assert "Top authors" in titles and "Papers per decision" in titles  # the people charts were drawn
    return at


@pytest.fixture(scope="module")
def years_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The people corpus as two years of one venue (two Paper Copilot files): what Trends draws."""
    folder = tmp_path_factory.mktemp("years")
    records = [people_corpus.record(i) for i in range(people_corpus.N_PAPERS)]
    for year, half in ((2019, records[::2]), (2020, records[1::2])):
        half = [{**r, "site": r["site"].replace("2019", str(year))} for r in half]  # the year is read there
        (folder / f"icml{year}.json").write_text(json.dumps(half), encoding="utf-8")
    out = folder / "years.index"
    index.build_index([folder / "icml2019.json", folder / "icml2020.json"], out, workers=1)
    return out


# What the other pages make once per corpus (`warmup.other_pages`): each a real function, counted.
OTHER_PAGE_MAKERS = (
    (trends.Axes, "of"),
    (trends, "period_counts"),
    (trends, "topic_year_terms"),
    (sources.IndexSource, "term_counts"),
    (tables, "link_table"),
    (repos, "target_table"),
    (tables, "repo_groups"),
    (charts, "map_hover"),
    (hierarchy.TopicTree, "node_labels"),
)
OTHER_PAGES = ("trends", "links", "topics", "terms")


def _first_visits(monkeypatch: pytest.MonkeyPatch, corpus_path: Path) -> None:
    """The Overview, then each of `OTHER_PAGES` for the first time, in one session."""
    at = _first_overview(monkeypatch, corpus_path)
    for page in OTHER_PAGES:
        if page == "topics":  # its tree is drawn only while its expander is open
            at.session_state[f"{keys.TOPICS_TREE}.open"] = True
        at.switch_page(f"src/dashboard/app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.get("plotly_chart"), page  # the page drew its charts
        if page == "trends":  # past its "one year" notice: the topic lines and the rising terms
            assert "Topic share over time" in [h.value for h in at.header]


# Each first visit, the corpus fixture it opens and the functions counted in it.
FIRST_VISITS = {
    "overview": (_first_overview, "people_index", CODE_MAKERS),
    "other pages": (_first_visits, "years_index", OTHER_PAGE_MAKERS),
}


@pytest.mark.parametrize("visits", FIRST_VISITS)
def test_after_the_warm_up_first_visits_make_nothing_once_per_corpus(
    visits: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    visit, fixture, makers = FIRST_VISITS[visits]
    corpus_path = request.getfixturevalue(fixture)
    warmup.warm(["--corpus", str(corpus_path)], {})
    made = _counted(monkeypatch, makers)
    visit(monkeypatch, corpus_path)
    assert {name: len(calls) for name, calls in made.items() if calls} == {}


def test_an_index_s_overview_reads_its_stored_method_meanings_not_its_abstracts(
    monkeypatch: pytest.MonkeyPatch, people_index: Path
) -> None:
    made = _counted(monkeypatch, ((extract, "name_meanings"), (index, "read_meanings")))
    at = _first_overview(monkeypatch, people_index)
    assert {name: len(calls) for name, calls in made.items()} == {
        "dashboard.text.extract.name_meanings": 0,
        "dashboard.index.read_meanings": 1,
    }
    assert not at.exception


@pytest.mark.parametrize("visits", FIRST_VISITS)
def test_without_the_warm_up_first_visits_make_them(
    visits: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    visit, fixture, makers = FIRST_VISITS[visits]
    corpus_path = request.getfixturevalue(fixture)
    made = _counted(monkeypatch, makers)  # the counters above see the pages' own work
    visit(monkeypatch, corpus_path)
    assert all(made.values()), {name: len(calls) for name, calls in made.items()}
