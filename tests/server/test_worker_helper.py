"""The server's helper process for a page's short steps (`worker.in_helper`): real processes, started,
used, killed and replaced; the Terms page's word cloud drawn in it."""

from __future__ import annotations

import functools
import operator
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.figures import charts
from dashboard.server import worker

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fresh_helper() -> Iterator[None]:
    worker.stop_helper()
    yield
    worker.stop_helper()


def _helper_pid(timeout: float = 120) -> int:
    """The helper's process id, once it has started (calls before that run in this process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = worker.in_helper(os.getpid)
        if pid != os.getpid():
            return pid
        time.sleep(0.05)
    raise AssertionError("the helper did not start")


def test_the_first_step_runs_here_while_the_helper_starts_then_in_the_helper() -> None:
    assert worker.in_helper(os.getpid) == os.getpid()  # no wait for the start
    helper = _helper_pid()
    assert helper != os.getpid() and os.path.exists(f"/proc/{helper}")
    assert [worker.in_helper(os.getpid) for _ in range(3)] == [helper] * 3  # one long-lived process
    assert worker.in_helper(operator.add, 2, 3) == 5


def test_an_error_in_a_step_comes_back_and_the_helper_stays() -> None:
    helper = _helper_pid()
    with pytest.raises(ZeroDivisionError):
        worker.in_helper(operator.truediv, 1, 0)
    assert worker.in_helper(os.getpid) == helper


def test_a_dead_helper_loses_no_step_and_is_replaced() -> None:
    helper = _helper_pid()
    os.kill(helper, signal.SIGKILL)
    time.sleep(0.5)
    assert worker.in_helper(operator.mul, 6, 7) == 42  # the step runs here: not lost, not an error
    replacement = _helper_pid()
    assert replacement not in (helper, os.getpid())


def test_a_step_without_a_name_to_send_runs_here() -> None:
    helper = _helper_pid()
    assert worker.in_helper(lambda: os.getpid()) == os.getpid()  # a closure cannot be sent by name
    assert worker.in_helper(os.getpid) == helper


def test_stop_ends_the_helper_process() -> None:
    helper = _helper_pid()
    worker.stop_helper()
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{helper}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{helper}")


def test_the_word_cloud_is_drawn_in_the_helper_and_is_the_same_picture(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dashboard.ui import data

    drawn_here: list[object] = []
    real = charts.word_cloud_png

    @functools.wraps(real)  # the same name: the job still goes to the helper as the real function
    def counted(*args: object, **kwargs: object) -> bytes:
        drawn_here.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(charts, "word_cloud_png", counted)
    _helper_pid()
    terms = (("graph", 9.0), ("neural", 5.0), ("kernel", 4.0), ("transformer", 3.0))
    png = data.word_cloud(terms, "dark").result(timeout=120)
    assert drawn_here == []  # not drawn in this process
    assert png == real(dict(terms), theme="dark")  # the picture the page would have drawn itself
    with pytest.raises(ValueError):  # no drawable term: the page's caption, as before
        data.word_cloud((("   ", 1.0),), "light").result(timeout=120)


def test_start_helper_readies_the_helper_without_running_a_step_here() -> None:
    assert not worker.helper_ready()
    worker.start_helper(charts.word_cloud_png, imports=("wordcloud",))
    deadline = time.monotonic() + 120
    while not worker.helper_ready():
        assert time.monotonic() < deadline, "the helper did not start"
        time.sleep(0.05)
    assert worker.in_helper(os.getpid) != os.getpid()  # the very first step goes to the helper


def test_the_server_starts_the_helper_after_a_visit_once_no_page_has_run_for_a_while() -> None:
    from dashboard.ui import warmup

    visits = warmup.Visits()
    starter = threading.Thread(target=warmup.start_helper_after, args=(visits, 1.0), daemon=True)
    starter.start()
    time.sleep(1.5)
    assert starter.is_alive() and not worker.helper_ready()  # nobody visited: no helper
    with visits.run():
        time.sleep(1.5)
        assert starter.is_alive()  # a page is running: still none
    for _ in range(3):  # runs keep coming: each resets the quiet second
        time.sleep(0.5)
        with visits.run():
            pass
    assert starter.is_alive() and not worker.helper_ready()
    starter.join(30)
    assert not starter.is_alive()
    deadline = time.monotonic() + 120
    while not worker.helper_ready():
        assert time.monotonic() < deadline, "the helper did not start after the visit"
        time.sleep(0.05)
    assert worker.in_helper(os.getpid) != os.getpid()


def test_app_py_counts_its_page_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    from dashboard.ui import warmup

    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])
    visits = warmup.Visits()
    monkeypatch.setattr(warmup, "VISITS", visits)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.switch_page("src/dashboard/app_pages/compare.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    waiter = threading.Thread(target=visits.wait_idle, args=(0.0,), daemon=True)
    waiter.start()
    waiter.join(5)
    assert not waiter.is_alive()  # returned at once: a run has ended and none is running


def _stand_in_server(script: str, pids: Path, errors: Path) -> list[int]:
    """Run ``script`` as a stand-in server (its first argument: the file it writes the ids of the
    processes it started to); those ids."""
    import subprocess
    import sys

    with open(errors, "w") as stderr:  # no pipes: the processes left behind would hold them open
        done = subprocess.run(
            [sys.executable, "-c", script, str(pids)], stdout=subprocess.DEVNULL, stderr=stderr, timeout=180
        )
    assert done.returncode == 0, errors.read_text()
    return [int(pid) for pid in pids.read_text().split()]


def _all_end(pids: list[int]) -> None:
    """Every process of ``pids`` ends within 20 s (those still running after it are killed)."""
    import psutil

    left = [psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)]
    _, alive = psutil.wait_procs(left, timeout=20)
    try:
        assert not alive, [(p.pid, " ".join(p.cmdline())[:80]) for p in alive]
    finally:
        for process in alive:
            process.kill()


def test_the_helper_and_its_forkserver_end_when_the_server_process_ends(tmp_path: Path) -> None:
    # A stand-in server starts the helper, then ends without any clean-up (as a killed server does).
    # Before, the helper waited for work forever and kept the forkserver and the resource tracker
    # alive with it: about 245 MB left behind by every stopped server.
    script = (
        "import os, sys, time, operator\n"
        "import psutil\n"
        "from dashboard.server import worker\n"
        "worker.start_helper(operator.add)\n"
        "deadline = time.monotonic() + 120\n"
        "while not worker.helper_ready() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "assert worker.in_helper(os.getpid) != os.getpid()\n"
        "children = psutil.Process().children(recursive=True)\n"
        "open(sys.argv[1], 'w').write(' '.join(str(p.pid) for p in children))\n"
        "os._exit(0)\n"
    )
    started = _stand_in_server(script, tmp_path / "pids", tmp_path / "stderr")
    assert len(started) >= 2  # the forkserver and the helper at least
    _all_end(started)


def test_a_helper_stopped_before_its_first_job_ends_with_the_server_too(tmp_path: Path) -> None:
    # A server stopped just after it started its helper (`stop_helper` cancels the helper's first job,
    # and the process ends before its queue has sent it). The helper used to watch its server from
    # that first job on, so one that never got it waited for work forever, with its forkserver and
    # resource tracker (found after a browser test's server stop). A race: about one such stop in four
    # left them behind; here eight stand-in servers in a row, and every process they started must end.
    script = (
        "import os, sys, operator\n"
        "import psutil\n"
        "from dashboard.server import worker\n"
        "worker.start_helper(operator.add)\n"
        "psutil.Process().children(recursive=True)  # a few milliseconds, as a server's stop takes\n"
        "worker.stop_helper(wait=False)\n"
        "started = psutil.Process().children(recursive=True)\n"
        "open(sys.argv[1], 'w').write(' '.join(str(p.pid) for p in started))\n"
        "os._exit(0)\n"
    )
    started = [
        pid
        for run in range(8)
        for pid in _stand_in_server(script, tmp_path / f"pids{run}", tmp_path / "stderr")
    ]
    assert len(started) >= 8  # a forkserver of each, at least
    _all_end(started)
