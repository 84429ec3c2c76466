"""A killed index build leaves no worker behind.

A first start's disk-cache build is a child of the server that ends with it (`diskcache.build_with_cli`);
its count workers wait on a queue and never learned that the build was gone: each killed build left two
processes of 150-420 MB running for good. The pool's workers now end with the build
(`dashboard.system.lifetime.end_with`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
from support.builds import wait_for

REPO = Path(__file__).resolve().parents[2]
# A build of the seeds with two count workers, held in its read step so the workers are up and idle
# (waiting on the pool's queue, as they are between tasks of a real build) when it is killed.
BUILD = """
import sys, time
from pathlib import Path
from dashboard.index import maps
started = maps.LocalMaps(2)
jobs = [started.pool.submit(time.sleep, 1) for _ in range(2)]  # at once: both workers start
[job.result() for job in jobs]
print("ready", flush=True)
time.sleep(600)
"""


def test_the_workers_of_a_killed_build_end_with_it():
    build = subprocess.Popen(
        [sys.executable, "-c", BUILD],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    try:
        assert build.stdout is not None and build.stdout.readline().strip() == "ready"
        workers = [p for p in psutil.Process(build.pid).children() if "spawn_main" in " ".join(p.cmdline())]
        assert len(workers) == 2
        build.send_signal(signal.SIGKILL)  # no clean-up of its own: as a stopped server's child ends
        build.wait()
        wait_for(lambda: not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers), 60)
        alive = [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
        assert alive == [], f"workers {alive} outlived their build"
    finally:
        if build.poll() is None:
            build.kill()
        for child in psutil.Process().children(recursive=True):
            if child.pid != build.pid and "spawn_main" in " ".join(child.cmdline()):
                child.kill()
