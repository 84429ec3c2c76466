"""The one module that talks HTTP: API bases, headers, tokens, rate limits, retries, bounded reads.

Only the standard library (`http.client`): one keep-alive connection per thread and host, no
redirect followed off the API, no proxy surprises. Requests are built from a configured API base
and URL-encoded path segments (`api_path`), never from a URL found in an abstract.

    >>> api_path("repos", "a b", "c%2F..")
    '/repos/a%20b/c%252F..'

Bases and tokens come from the environment variables each host names (`dashboard.repocheck.hosts`:
``GITHUB_API_URL``/``GITHUB_TOKEN``, ``GITLAB_API_URL``/``GITLAB_TOKEN``, ``HF_ENDPOINT``/``HF_TOKEN``,
``CODEBERG_API_URL``/``CODEBERG_TOKEN``). Each token is sent in ``Authorization`` with its host's
scheme to its own API only, never logged, stored or shown (`Settings` leaves them out of its repr).

Rate limits follow GitHub's documented rules (also what GitLab and the Hub send): a 403 or 429 with
``X-RateLimit-Remaining: 0`` waits until ``X-RateLimit-Reset`` (epoch seconds), one with
``Retry-After`` waits that many seconds, a bare 429 (or a 403 whose body says "rate limit") waits the
minute GitHub asks for when it names no time; a wait longer than ``max_wait`` raises `RateLimited`
with the time the run can resume, and later calls to that API fail at once without a request.
Server errors (5xx), timeouts and dropped connections are retried with exponential backoff.

Headers are numbers within bounds or the answer is not trusted: ``X-RateLimit-Remaining`` a whole
number up to `MAX_REMAINING`, ``X-RateLimit-Reset`` an epoch time at most `MAX_RESET_AHEAD` ahead,
``Retry-After`` whole seconds up to `MAX_RETRY_AFTER` (or an HTTP date); anything else (``inf``,
``1e18``, ``1e999``) is a `CheckError` naming the header, so one repository gets an ``error``.

Deadlines: ``timeout`` bounds each socket read, ``deadline`` a whole request (every read, retry,
backoff and rate-limit wait of it: a server that trickles a byte every few seconds is cut there) and
``run_deadline`` a whole run (`Client.run_ends`). A rate-limit wait longer than ``max_wait`` or than
the request's deadline leaves is not waited: the API counts as rate limited until the time it gave.
``PAPER_DASHBOARD_REQUEST_DEADLINE`` and ``PAPER_DASHBOARD_RUN_DEADLINE`` (seconds) set the two.
"""

from __future__ import annotations

import email.utils
import http.client
import io
import math
import random
import re
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from dashboard import __version__
from dashboard.repocheck.hosts import BY_API
from dashboard.repocheck.hosts.base import api_path

__all__ = ["Client", "Settings", "api_path"]  # api_path: where requests' paths are built (hosts.base)

MAX_REDIRECTS = 3
MAX_REMAINING = 10**9  # no API grants more requests than this in one window
MAX_RESET_AHEAD = 7 * 86400.0  # GitHub's windows last an hour; a reset further ahead is not a time
MAX_RETRY_AFTER = 86400.0
REQUEST_DEADLINE_VARIABLE = "PAPER_DASHBOARD_REQUEST_DEADLINE"
RUN_DEADLINE_VARIABLE = "PAPER_DASHBOARD_RUN_DEADLINE"
_WHOLE_NUMBER = re.compile(r"\s*\d{1,15}\s*\Z")


class CheckError(Exception):
    """A request that gave no usable answer (after retries): the message is the reason kept."""


class RateLimited(Exception):
    """The API's budget is spent; ``reset_at`` (epoch seconds) says when a run can resume."""

    def __init__(self, api: str, reset_at: float, message: str) -> None:
        super().__init__(message)
        self.api = api
        self.reset_at = reset_at


class BudgetSpent(Exception):
    """The run's own ``--max-requests`` budget is used up."""


class Stopped(Exception):
    """The run was asked to stop (Ctrl-C, a cancelled app run)."""


@dataclass(frozen=True)
class Settings:
    """Where and how to ask. Tokens are kept out of ``repr`` so they never reach a log or a page."""

    bases: Mapping[str, str] = field(default_factory=lambda: {a: h.default_base for a, h in BY_API.items()})
    tokens: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = 10.0
    max_body: int = 2_000_000
    retries: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0
    max_in_flight: int = 8
    deadline: float = 60.0
    run_deadline: float | None = 3600.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **options: object) -> Settings:
        """Bases, tokens and deadlines from the environment (see the module docstring); other fields
        as given. A deadline variable that is not a number of seconds > 0 raises ValueError naming it."""
        bases = {
            api: (environ.get(host.base_variable) or host.default_base).rstrip("/")
            for api, host in BY_API.items()
        }
        tokens = {
            api: environ[host.token_variable].strip()
            for api, host in BY_API.items()
            if environ.get(host.token_variable, "").strip()
        }
        for name, variable in (
            ("deadline", REQUEST_DEADLINE_VARIABLE),
            ("run_deadline", RUN_DEADLINE_VARIABLE),
        ):
            text = environ.get(variable, "").strip()
            if text and name not in options:
                options[name] = seconds(text, variable)
        return cls(bases=bases, tokens=tokens, **options)  # type: ignore[arg-type]


def seconds(text: str, what: str) -> float:
    """A number of seconds > 0 and finite, or ValueError naming ``what``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{what} must be a number of seconds > 0, got {text[:40]!r}")
    return value


@dataclass(frozen=True)
class Reply:
    """One answer: status, body (bounded), ETag; ``path`` is where it came from after any move."""

    status: int
    body: bytes
    etag: str
    path: str
    moved_from: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Counts:
    """What a client did, for summaries and the benchmark."""

    requests: int = 0
    conditional: int = 0
    not_modified: int = 0
    retries: int = 0
    waits: float = 0.0


class DeadlineReached(TimeoutError):
    """A request's (or the run's) deadline passed while waiting for the server."""


class Client:
    """A thread-safe client for the APIs.

    client = Client(Settings.from_env(os.environ))
    reply = client.get("github", api_path("repos", "owner", "name"), etag='"abc"')
    """

    def __init__(self, settings: Settings, *, max_requests: int | None = None) -> None:
        self.settings = settings
        self.max_requests = max_requests
        self.counts = Counts()
        self.stop = threading.Event()
        self.run_ends: float | None = None  # `time.monotonic` time the run must end by (`Checker.run`)
        self._lock = threading.Lock()
        self._limits: dict[str, tuple[int | None, float | None]] = {}
        self._local = threading.local()

    # ------------------------------------------------------------------ what is known of the limits

    def remaining(self, api: str) -> tuple[int | None, float | None]:
        """(requests remaining, reset time in epoch seconds) from the last answer of ``api``."""
        with self._lock:
            return self._limits.get(api, (None, None))

    def limits(self) -> dict[str, tuple[int | None, float | None]]:
        """Every API's last known (remaining, reset time)."""
        with self._lock:
            return dict(self._limits)

    def _note_limits(self, api: str, remaining: int | None, reset: float | None) -> None:
        if remaining is None and reset is None:
            return
        with self._lock:
            old_remaining, old_reset = self._limits.get(api, (None, None))
            self._limits[api] = (
                remaining if remaining is not None else old_remaining,
                reset if reset is not None else old_reset,
            )

    def _spend(self, conditional: bool) -> None:
        with self._lock:
            if self.max_requests is not None and self.counts.requests >= self.max_requests:
                raise BudgetSpent(f"the budget of {self.max_requests} requests is used up")
            self.counts.requests += 1
            self.counts.conditional += int(conditional)

    # ------------------------------------------------------------------ deadlines

    def _ends(self) -> tuple[float, bool]:
        """(monotonic time a request starting now must end by, whether the run's deadline sets it)."""
        ends = time.monotonic() + self.settings.deadline
        if self.run_ends is not None and self.run_ends <= ends:
            return self.run_ends, True
        return ends, False

    def _past(self, ends: float, by_run: bool, what: str) -> Exception:
        """The exception for a deadline that has passed: the run's stops the run, a request's is an error."""
        if by_run:
            return Stopped(f"the run's deadline of {self.settings.run_deadline:g} s was reached")
        return CheckError(f"{what}no answer within the request deadline of {self.settings.deadline:g} s")

    # ------------------------------------------------------------------ requests

    def get(self, api: str, path: str, *, etag: str = "", query: str = "") -> Reply:
        """GET ``path`` (from `api_path`) on ``api``; follows moves within the API; retries transient errors.

        Everything, moves and retries included, ends by the request's deadline.
        Raises `RateLimited`, `BudgetSpent`, `Stopped`, or `CheckError` with the reason.
        """
        base = self.settings.bases.get(api)
        if base is None:
            raise CheckError(f"unsupported host API {api!r}")
        target = base + path + (("?" + query) if query else "")
        moved_from = ""
        ends, by_run = self._ends()
        for _hop in range(MAX_REDIRECTS + 1):
            reply = self._get_with_retries(api, target, etag, ends, by_run)
            if reply.status in (301, 302, 307, 308):
                location = reply.headers.get("location", "")
                next_url = urljoin(target, location)
                if not location or not _inside(base, next_url):
                    raise CheckError(f"moved outside the API ({reply.status}); not followed")
                moved_from = moved_from or path
                target, etag = next_url, ""
                continue
            new_path = urlsplit(target).path[len(urlsplit(base).path) :]
            return Reply(reply.status, reply.body, reply.etag, new_path, moved_from, reply.headers)
        raise CheckError(f"more than {MAX_REDIRECTS} redirects")

    def _get_with_retries(self, api: str, url: str, etag: str, ends: float, by_run: bool) -> Reply:
        settings = self.settings
        last_problem = ""
        for attempt in range(settings.retries + 1):
            if self.stop.is_set():
                raise Stopped("stopped")
            self._check_known_limit(api)
            if attempt:
                delay = settings.backoff * (2 ** (attempt - 1)) * (1 + random.random() * 0.25)
                if time.monotonic() + delay >= ends:
                    raise self._past(ends, by_run, f"{last_problem}; ")
                with self._lock:
                    self.counts.retries += 1
                if self.stop.wait(delay):
                    raise Stopped("stopped")
            if time.monotonic() >= ends:
                raise self._past(ends, by_run, f"{last_problem}; " if last_problem else "")
            self._spend(bool(etag))
            try:
                reply = self._send(api, url, etag, ends)
            except DeadlineReached:
                raise self._past(ends, by_run, "") from None
            except TimeoutError:
                last_problem = f"timed out after {settings.timeout:g} s"
                continue
            except (OSError, http.client.HTTPException) as error:
                last_problem = f"connection failed ({type(error).__name__})"
                continue
            remaining, reset, retry_after = rate_headers(reply.headers, time.time())
            self._note_limits(api, remaining, reset)
            if reply.status == 304:
                with self._lock:
                    self.counts.not_modified += 1
            if reply.status in (403, 429) and _is_rate_limit(reply):
                wait, reset_at = _wait_for(remaining, reset, retry_after)
                if wait > settings.max_wait or time.monotonic() + wait >= ends:
                    with self._lock:
                        self._limits[api] = (0, reset_at)
                    raise RateLimited(
                        api, reset_at, f"{api} rate limit reached; it resets at {_utc(reset_at)}"
                    )
                with self._lock:
                    self.counts.waits += wait
                if self.stop.wait(wait):
                    raise Stopped("stopped")
                last_problem = f"rate limited (HTTP {reply.status})"
                continue
            if reply.status >= 500:
                last_problem = f"HTTP {reply.status}"
                continue
            return reply
        raise CheckError(f"{last_problem} after {settings.retries + 1} tries")

    def _check_known_limit(self, api: str) -> None:
        remaining, reset_at = self.remaining(api)
        if remaining == 0 and reset_at is not None:
            if reset_at > time.time():
                raise RateLimited(api, reset_at, f"{api} rate limit reached; it resets at {_utc(reset_at)}")
            with self._lock:
                self._limits[api] = (None, None)

    def _headers(self, api: str, etag: str) -> dict[str, str]:
        host = BY_API[api]
        headers = {
            "User-Agent": f"paper-dashboard/{__version__}",
            "Accept": "application/json",
            **host.headers,
        }
        token = self.settings.tokens.get(api)
        if token:
            headers["Authorization"] = f"{host.auth_scheme} {token}"
        if etag:
            headers["If-None-Match"] = etag
        return headers

    def _connection(self, scheme: str, netloc: str) -> _DeadlineConnection:
        pool: dict[tuple[str, str], _DeadlineConnection] = getattr(self._local, "pool", None) or {}
        self._local.pool = pool
        connection = pool.get((scheme, netloc))
        if connection is None:
            kind = _DeadlineHTTPSConnection if scheme == "https" else _DeadlineHTTPConnection
            connection = kind(netloc, timeout=self.settings.timeout)
            connection.read_timeout = self.settings.timeout
            pool[(scheme, netloc)] = connection
        return connection

    def _drop(self, scheme: str, netloc: str) -> None:
        pool = getattr(self._local, "pool", {})
        connection = pool.pop((scheme, netloc), None)
        if connection is not None:
            connection.close()

    def _send(self, api: str, url: str, etag: str, ends: float) -> Reply:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise CheckError(f"unsupported scheme {parts.scheme!r}")
        connection = self._connection(parts.scheme, parts.netloc)
        connection.ends = ends
        connection.timeout = max(min(self.settings.timeout, ends - time.monotonic()), 0.001)
        request_path = parts.path + (("?" + parts.query) if parts.query else "")
        try:
            connection.request("GET", request_path, headers=self._headers(api, etag))
            response = connection.getresponse()
            headers = {name.lower(): value for name, value in response.getheaders()}
            length = _int_or_none(headers.get("content-length"))
            limit = self.settings.max_body
            if length is not None and length > limit:
                self._drop(parts.scheme, parts.netloc)
                raise CheckError(f"answer larger than {limit:,} bytes ({length:,}); not read")
            body = response.read(limit + 1)
            if len(body) > limit:
                self._drop(parts.scheme, parts.netloc)
                raise CheckError(f"answer larger than {limit:,} bytes; not read")
            if response.will_close:
                self._drop(parts.scheme, parts.netloc)
        except CheckError:
            raise
        except BaseException:
            self._drop(parts.scheme, parts.netloc)
            raise
        return Reply(response.status, body, headers.get("etag", ""), parts.path, "", headers)


# ---------------------------------------------------------------------- one deadline over every read


class _DeadlineSocket:
    """A connected socket whose every receive waits at most until its connection's deadline.

    ``timeout`` alone bounds each read, so a server sending a byte every few seconds never trips
    it; here each read's timeout is also cut to what the request has left, and a read that runs into
    the deadline raises `DeadlineReached`. Everything else goes to the socket itself.
    """

    def __init__(self, sock: socket.socket, connection: _DeadlineConnection) -> None:
        self._sock = sock
        self._connection = connection
        self._readers = 0
        self._closed = False

    def _arm(self) -> bool:
        left = self._connection.ends - time.monotonic()
        if left <= 0:
            raise DeadlineReached("deadline reached")
        read_timeout = self._connection.read_timeout
        self._sock.settimeout(min(read_timeout, left))
        return left <= read_timeout

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        """`socket.socket.recv_into`, ending by the deadline."""
        by_deadline = self._arm()
        try:
            return self._sock.recv_into(buffer, nbytes, flags)
        except TimeoutError:
            if by_deadline:
                raise DeadlineReached("deadline reached") from None
            raise

    def recv(self, size: int, flags: int = 0) -> bytes:
        """`socket.socket.recv`, ending by the deadline."""
        buffer = bytearray(size)
        got = self.recv_into(buffer, size, flags)
        return bytes(buffer[:got])

    def makefile(self, mode: str = "rb", buffering: int | None = None, **_: object) -> io.BufferedReader:
        """A buffered reader whose reads come through `recv_into` (what `http.client` reads answers with).

        As with `socket.socket.makefile`, the socket stays open until its last reader is closed too.
        """
        self._readers += 1
        raw = socket.SocketIO(self, "rb")  # type: ignore[arg-type]
        return io.BufferedReader(raw, buffering or io.DEFAULT_BUFFER_SIZE)

    def _decref_socketios(self) -> None:
        self._readers -= 1
        if self._closed and self._readers <= 0:
            self._sock.close()

    def close(self) -> None:
        """Close now, or once the last reader is closed."""
        self._closed = True
        if self._readers <= 0:
            self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineConnection(http.client.HTTPConnection):
    """An HTTP connection whose reads end by ``ends`` (`time.monotonic`), set before each request."""

    ends: float = math.inf
    read_timeout: float = 10.0

    def _wrap(self) -> None:
        self.sock = _DeadlineSocket(self.sock, self)  # type: ignore[assignment]

    def connect(self) -> None:
        """Connect (within ``timeout``), then read only through the deadline."""
        super().connect()
        self._wrap()


class _DeadlineHTTPConnection(_DeadlineConnection):
    """Plain HTTP (local test servers, an http:// API base)."""


class _DeadlineHTTPSConnection(http.client.HTTPSConnection, _DeadlineConnection):
    """HTTPS: the TLS socket is wrapped once the handshake is done."""

    def connect(self) -> None:
        """Connect and shake hands (within ``timeout``), then read only through the deadline."""
        http.client.HTTPSConnection.connect(self)
        self._wrap()


# ---------------------------------------------------------------------- headers, bounded


def rate_headers(headers: Mapping[str, str], now: float) -> tuple[int | None, float | None, float | None]:
    """(remaining, reset epoch time, retry-after seconds) of an answer, each None when absent.

    Raises `CheckError` naming the header when one is there but not a number within bounds.
    """

    def bad(name: str, value: str) -> CheckError:
        return CheckError(f"malformed header {name}: {value[:40]!r}")

    remaining = reset = retry_after = None
    value = headers.get("x-ratelimit-remaining")
    if value is not None:
        if not _WHOLE_NUMBER.match(value) or int(value) > MAX_REMAINING:
            raise bad("X-RateLimit-Remaining", value)
        remaining = int(value)
    value = headers.get("x-ratelimit-reset")
    if value is not None:
        if not _WHOLE_NUMBER.match(value) or int(value) > now + MAX_RESET_AHEAD:
            raise bad("X-RateLimit-Reset", value)
        reset = float(int(value))
    value = headers.get("retry-after")
    if value is not None:
        if _WHOLE_NUMBER.match(value):
            retry_after = float(int(value))
        else:
            try:
                retry_after = email.utils.parsedate_to_datetime(value).timestamp() - now
            except (TypeError, ValueError, IndexError, OverflowError):
                raise bad("Retry-After", value) from None
            retry_after = max(retry_after, 0.0)
        if retry_after > MAX_RETRY_AFTER:
            raise bad("Retry-After", value)
    return remaining, reset, retry_after


def _wait_for(remaining: int | None, reset: float | None, retry_after: float | None) -> tuple[float, float]:
    """(seconds to wait, epoch time the API takes requests again) of a rate-limit answer."""
    now = time.time()
    if retry_after is not None:
        return retry_after, now + retry_after
    if remaining == 0 and reset is not None:
        return max(reset - now, 0.0), reset
    return 60.0, now + 60.0  # GitHub: "otherwise, wait for at least one minute"


def _utc(epoch: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return "an unknown time"


def _inside(base: str, url: str) -> bool:
    """Whether ``url`` is on the API base's scheme, host and port and under its path."""
    base_parts, parts = urlsplit(base), urlsplit(url)
    base_path = base_parts.path.rstrip("/")
    return (
        (parts.scheme, parts.netloc) == (base_parts.scheme, base_parts.netloc)
        and (parts.path == base_path or parts.path.startswith(base_path + "/"))
        and "/../" not in parts.path + "/"
    )


def _is_rate_limit(reply: Reply) -> bool:
    if reply.status == 429:  # "Too Many Requests" is a rate limit whatever headers come with it
        return True
    headers = reply.headers
    if headers.get("x-ratelimit-remaining", "").strip() == "0" or "retry-after" in headers:
        return True
    return b"rate limit" in reply.body[:2000].lower()


def _int_or_none(value: str | None) -> int | None:
    if value is None or not _WHOLE_NUMBER.match(value):
        return None
    return int(value)
