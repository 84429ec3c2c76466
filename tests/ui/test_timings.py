"""Per-run timings for the benchmarks (PAPER_DASHBOARD_TIMINGS): one line per script run, every page."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.ui import timings

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["app.py"])
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)


def test_every_run_is_logged_with_its_query_even_when_the_page_stops_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv(timings.ENV_TIMINGS, str(log))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["q"] = "diffusion"
    # Compare with fewer than two papers picked ends in st.stop(), after which Streamlit calls raise.
    at.switch_page("src/dashboard/app_pages/compare.py").run()
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["page"], r["query"]) for r in runs] == [
        ("Compare", {"q": ["diffusion"]}),
        ("Topics", {"q": ["diffusion"]}),
    ]
    assert runs[0]["status"] == "StopException" and runs[1]["status"] == "ok"
    assert all(r["seconds"] > 0 for r in runs)
    # The run's own processor time is within its wall time; the process's includes every thread.
    assert all(0 < r["cpu_seconds"] <= r["seconds"] + 0.01 for r in runs)
    assert all(r["process_cpu_seconds"] >= r["cpu_seconds"] - 0.01 for r in runs)


def test_a_run_that_touches_fresh_memory_logs_its_page_faults_and_kernel_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv(timings.ENV_TIMINGS, str(log))
    with timings.timed("quiet"):
        pass
    size = 64 << 20
    with timings.timed("fresh memory"):
        block = mmap.mmap(-1, size)  # zero pages from the kernel: one fault per page on its first write
        if hasattr(mmap, "MADV_NOHUGEPAGE"):  # ordinary 4 KB pages, whatever the system's huge-page setting
            block.madvise(mmap.MADV_NOHUGEPAGE)
        block[::4096] = b"\1" * (size // 4096)
        block.close()
    quiet, fresh = (json.loads(line) for line in log.read_text().splitlines())
    assert fresh["page_faults"] >= 0.9 * size / 4096  # one per page written
    assert quiet["page_faults"] < 1000
    assert 0 <= fresh["process_system_seconds"] <= fresh["process_cpu_seconds"] + 0.01


@pytest.mark.skipif(
    not Path("/proc/thread-self/schedstat").exists() or not hasattr(os, "sched_setaffinity"),
    reason="the processor waits are read from Linux's schedstat",
)
def test_a_run_sharing_its_processor_with_a_busy_program_logs_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv(timings.ENV_TIMINGS, str(log))
    processors = os.sched_getaffinity(0)
    one = {min(processors)}
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(busy.pid, one)
        os.sched_setaffinity(0, one)  # this thread only: the other threads of pytest keep theirs
        time.sleep(0.2)  # the busy program is running
        with timings.timed("shared"):
            _spin(0.6)
        os.sched_setaffinity(0, processors)
        busy.kill()
        busy.wait()
        with timings.timed("quiet"):
            time.sleep(0.3)
    finally:
        os.sched_setaffinity(0, processors)
        busy.kill()
        busy.wait()
    shared, quiet = (json.loads(line) for line in log.read_text().splitlines())
    # Two programs on one processor take turns: the run was ready but waiting for a good part of it.
    assert shared["waited_seconds"] >= 0.15
    assert shared["process_waited_seconds"] >= shared["waited_seconds"] - 0.01
    assert shared["cpu_seconds"] + shared["waited_seconds"] <= shared["seconds"] + 0.05
    assert quiet["waited_seconds"] < 0.05  # asleep is not waiting for a processor


def _spin(seconds: float) -> None:
    """Work (not sleep) for ``seconds`` of wall time."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
