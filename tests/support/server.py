"""Start the real app (`streamlit run app.py`) on a free port for browser tests, and stop it again.

Started with `subprocess.Popen` from the repo root, so the PID is Streamlit's own and terminating
it frees the port (a backgrounded shell would leave the server running). Ready means
``/_stcore/health`` answers ``ok``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


@contextlib.contextmanager
def running_app(
    app_args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = 60.0,
    log_path: Path | None = None,
    script: str = "app.py",
) -> Iterator[str]:
    """Run the app until the block ends; yields its base URL (``http://127.0.0.1:PORT``)."""
    with running_server(
        app_args, env=env, startup_timeout=startup_timeout, log_path=log_path, script=script
    ) as (url, _):
        yield url


@contextlib.contextmanager
def running_server(
    app_args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = 60.0,
    log_path: Path | None = None,
    script: str = "app.py",
    wait: bool = True,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """As `running_app`, also yielding the server process (to watch its memory or whether it lives).

    ``script`` is another Streamlit script to serve from the repo root (e.g. ``bench/floor/app.py``);
    ``wait=False`` yields as soon as the process is started, before it answers.
    """
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    if app_args:
        command += ["--", *app_args]
    process_env = {k: v for k, v in os.environ.items() if k != "PAPER_DASHBOARD_CORPUS"}
    process_env.update(env or {})
    # A server started by a test never touches the user's library: a throw-away one unless told otherwise.
    scratch = tempfile.TemporaryDirectory(prefix="pd-library-")
    process_env.setdefault("PAPER_DASHBOARD_LIBRARY", str(Path(scratch.name) / "library.sqlite"))
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, cwd=REPO, env=process_env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_timeout
        while wait and not healthy(url):
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {process.returncode} before answering")
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer on {url} within {startup_timeout:.0f} s")
            time.sleep(0.3)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if log is not subprocess.DEVNULL:
            log.close()
        scratch.cleanup()
