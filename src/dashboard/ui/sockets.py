"""Turn off Nagle's algorithm on the server's listening socket, so that each of its connections answers
at once (`no_delay`; the dashboard's `lifespan` calls it as the server starts).

Streamlit's server binds its socket itself (``socket.socket(family=...)``, whose protocol number is 0)
and hands it to uvicorn. Each accepted connection inherits that 0, and asyncio only sets
``TCP_NODELAY`` on a connection whose protocol reads ``IPPROTO_TCP``: so every connection of a
``streamlit run`` server keeps Nagle's algorithm on. A response written in two parts (its head, then
its body) then holds its second part until the browser acknowledges the first, which Linux delays
by about 40 ms: on this machine every request after the first on a kept-alive connection took 44 ms
(the health check, the page, each script), and the some 60 modules a first visit fetches over the
browser's six connections took 0.42 s, against 0.09 s with the option set. The same cause is known
in uvicorn's own pre-bound path (Kludex/uvicorn#3149).

Linux copies ``TCP_NODELAY`` from a listening socket to the connections it accepts, so setting it once
on the listener is enough. Elsewhere (or where the process's descriptors cannot be listed) this
changes nothing, and the server works as before.
"""

from __future__ import annotations

import os
import socket

# Where a process's open descriptors are listed: Linux, then macOS and the BSDs.
_FD_DIRS = ("/proc/self/fd", "/dev/fd")


def _descriptors() -> list[int]:
    for folder in _FD_DIRS:
        try:
            return sorted(int(name) for name in os.listdir(folder) if name.isdigit())
        except OSError:
            continue
    return []


def no_delay(port: int) -> int:
    """Set ``TCP_NODELAY`` on this process's listening TCP sockets bound to `port`; how many.

    Each descriptor is looked at through a socket object that is detached afterwards, so none is
    closed or changed but the listeners named."""
    done = 0
    for fd in _descriptors():
        try:
            sock = socket.socket(fileno=fd)
        except OSError:  # not a socket (or closed since it was listed)
            continue
        try:
            if (
                sock.family in (socket.AF_INET, socket.AF_INET6)
                and sock.type == socket.SOCK_STREAM
                and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                and sock.getsockname()[1] == port
            ):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                done += 1
        except OSError:
            continue
        finally:
            sock.detach()
    return done
