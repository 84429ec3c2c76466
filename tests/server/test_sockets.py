"""Nagle's algorithm off on the server's listening socket (`dashboard.ui.sockets`): on sockets made
the way Streamlit makes its own, and on the real servers, read from the running process's own socket.
Its effect on a visit's time is measured in `bench/floor.py`, never here."""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.server import running_server

from dashboard.ui import sockets

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Linux passes TCP_NODELAY from a listener to its connections"
)


def _listener() -> socket.socket:
    """A listening socket as Streamlit's server binds it (`starlette_server._bind_socket`): protocol 0."""
    sock = socket.socket(family=socket.AF_INET)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _accepted_no_delay(listener: socket.socket) -> int:
    with socket.create_connection(listener.getsockname()) as client:
        accepted, _ = listener.accept()
        with accepted, client:
            return accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_listener_of_the_port_passes_no_delay_to_its_connections_and_nothing_else_changes() -> None:
    with _listener() as ours, _listener() as other:
        assert ours.proto == 0 and _accepted_no_delay(ours) == 0  # why this exists
        with socket.create_connection(other.getsockname()) as connected:
            open_before = sorted(os.listdir("/proc/self/fd"))
            assert sockets.no_delay(ours.getsockname()[1]) == 1
            assert sorted(os.listdir("/proc/self/fd")) == open_before  # nothing closed, nothing left open
            assert _accepted_no_delay(ours) == 1
            assert _accepted_no_delay(other) == 0  # another port's listener is left alone
            assert connected.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
            connected.sendall(b"still open")


def test_a_port_nothing_listens_on_changes_nothing() -> None:
    with _listener() as ours:
        port = ours.getsockname()[1]
    assert sockets.no_delay(port) == 0


def _pidfd_getfd(pid: int, fd: int) -> int:
    """A copy of another process's descriptor (Linux 5.6's ``pidfd_getfd``; Python has no wrapper)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        copy = libc.syscall(438, pidfd, fd, 0)  # SYS_pidfd_getfd on every Linux architecture
        if copy < 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error))
        return copy
    finally:
        os.close(pidfd)


@contextlib.contextmanager
def _server_listener(pid: int, port: int) -> Iterator[socket.socket]:
    """The running server's own listening socket on ``port``, copied into this process."""
    for name in os.listdir(f"/proc/{pid}/fd"):
        if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
            continue
        try:
            copy = _pidfd_getfd(pid, int(name))
        except OSError as error:
            pytest.skip(f"this machine does not let a test read its server's sockets ({error})")
        with socket.socket(fileno=copy) as sock:
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) and sock.getsockname()[1] == port:
                yield sock
                return
    raise AssertionError(f"no listening socket on port {port} in process {pid}")


@pytest.mark.parametrize(("script", "expected"), [("app.py", 1), ("bench/floor/app.py", 0)])
def test_the_dashboards_server_listens_without_nagle_and_bare_streamlit_does_not(
    script: str, expected: int, tmp_path: Path
) -> None:
    """Read from the server process itself: the dashboard's lifespan set the option, and Streamlit's
    own server (the floor app, no lifespan of ours) shows the default this replaces."""
    with running_server(script=script) as (url, process):
        port = int(url.rsplit(":", 1)[1])
        with _server_listener(process.pid, port) as listener:
            assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == expected
