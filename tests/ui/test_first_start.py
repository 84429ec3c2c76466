"""A first start on a large raw corpus: its papers and filters at once, the build's progress, then topics.

The seeds count as large here (``PAPER_DASHBOARD_CACHE_MIN_MB=0``). The build is the real one
(`diskcache.build_with_cli`: ``paper-dashboard index`` in a child process); the test holds it still
(SIGSTOP) once it has reached a stage, so the page is seen mid-build whatever the machine's speed,
then lets it go on and finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from support.apptest import APP, assert_no_exception, count_line
from support.builds import BUILD_THREAD, build_children, nice_of, wait_for

from dashboard.filters import Filters
from dashboard.index import diskcache
from dashboard.index import progress as stages


def _progress_log(root: Path) -> Path | None:
    return next(root.glob(".progress-*.log"), None)


def _building() -> bool:
    return any(thread.name == BUILD_THREAD for thread in threading.enumerate())


def _build_child(root: Path) -> int | None:
    """The process id of the build child writing under ``root``, if one runs."""
    return next(iter(build_children(root)), None)


@pytest.fixture
def fresh_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty disk cache in which the seeds count as large, and no corpus in memory (a new server)."""
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE_MIN_MB", "0")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield tmp_path
    wait_for(lambda: not _building(), 180)  # nothing of this test's build outlives it
    st.cache_resource.clear()
    st.cache_data.clear()


def _texts(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.info, *at.caption, *at.warning])


def test_a_first_start_answers_filters_while_topics_are_built_then_shows_them(fresh_server: Path) -> None:
    root = fresh_server
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["q"] = "graph"
    at.run()
    assert_no_exception(at)
    # Read from the raw files at once: every paper, the search answered, no topics yet.
    shown, total = count_line(at)
    assert total == 57 and 0 < shown < total
    assert not any("analysis cached on disk" in e.label for e in at.sidebar.expander)
    assert len(at.progress) == 1 and "so far" in at.progress[0].text

    # Hold the real build still once it has said a stage, and look at the page then.
    wait_for(lambda: (log := _progress_log(root)) is not None and stages.read(log).step >= 1, 180, 0.02)
    pid = _build_child(root)
    assert pid is not None, "the build runs in a child process"
    os.kill(pid, signal.SIGSTOP)
    try:
        # It yields to the server's page runs; raised back here (where allowed) so that beside a busy
        # test worker it still gets the processor time to finish.
        assert nice_of(pid) == diskcache.FIRST_START_NICE
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, 0)
        log = _progress_log(root)
        assert log is not None
        state = stages.read(log)
        assert 1 <= state.step <= 4 and not state.done
        at.switch_page("src/dashboard/app_pages/topics.py").run()
        assert_no_exception(at)
        (bar,) = at.progress
        said = bar.text.replace("\\", "")  # as drawn: the markdown escapes go
        assert said.startswith(f"Step {state.step} of 4: {state.message.split(';')[0]}")
        assert bar.value == round(100 * state.fraction)
        assert "Topics are being computed" in _texts(at)
        assert count_line(at) == (shown, total)  # the filter holds on this page too
    finally:
        os.kill(pid, signal.SIGCONT)

    wait_for(lambda: not _building(), 180)
    assert not _building(), "the build ended"
    assert not list(root.glob(".progress-*.log")), "its progress file went with it"
    at.run()
    assert_no_exception(at)
    # The next run opens the built entry: topics on the Topics page, the search still in the URL.
    assert any("analysis cached on disk" in e.label for e in at.sidebar.expander)
    assert not at.progress
    assert "Topics are being computed" not in _texts(at)
    assert at.get("plotly_chart"), "the Topics page draws its charts"
    assert Filters.from_query(at.query_params)[0].q == "graph"
    assert count_line(at) == (shown, total)


def test_a_failed_build_leaves_the_corpus_analysed_in_memory_with_a_message(fresh_server: Path) -> None:
    root = fresh_server
    at = AppTest.from_file(APP, default_timeout=180)
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    assert_no_exception(at)
    assert len(at.progress) == 1 and "Topics are being computed" in _texts(at)
    # The build dies halfway (as a killed or crashed child would) after the page showed the raw papers.
    wait_for(lambda: _build_child(root) is not None, 180, 0.02)
    pid = _build_child(root)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _building(), 180)
    assert not list(root.glob("index-*")), "no entry"
    at.run()
    assert_no_exception(at)
    assert not at.progress
    texts = _texts(at)
    assert "could not be kept on disk" in texts and str(root) not in texts  # no server path shown
    assert at.get("plotly_chart"), "topics fitted in memory, drawn on the Topics page"
    assert count_line(at) == (57, 57)
