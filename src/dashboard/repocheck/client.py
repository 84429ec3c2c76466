"""The one module that talks HTTP: API bases, headers, tokens, rate limits, retries, bounded reads.

Only the standard library (`http.client`): one keep-alive connection per thread and host, no
redirect followed off the API, no proxy surprises. Requests are built from a configured API base
and URL-encoded path segments (`api_path`), never from a URL found in an abstract.

    >>> api_path("repos", "a b", "c%2F..")
    '/repos/a%20b/c%252F..'

Bases come from the environment: ``GITHUB_API_URL`` (default ``https://api.github.com``, the
variable GitHub Actions sets, so GitHub Enterprise works), ``GITLAB_API_URL`` (default
``https://gitlab.com``) and ``HF_ENDPOINT`` (default ``https://huggingface.co``). Tokens:
``GITHUB_TOKEN``, ``GITLAB_TOKEN``, ``HF_TOKEN``, each sent as ``Authorization: Bearer`` to its own
API host only, never logged, stored or shown (`Settings` leaves them out of its repr).

Rate limits follow GitHub's documented rules (also what GitLab and the Hub send): a 403 or 429 with
``X-RateLimit-Remaining: 0`` waits until ``X-RateLimit-Reset`` (epoch seconds), one with
``Retry-After`` waits that many seconds, a bare 429 (or a 403 whose body says "rate limit") waits the
minute GitHub asks for when it names no time; a wait longer than ``max_wait`` raises `RateLimited`
with the time the run can resume, and later calls to that API fail at once without a request.
Server errors (5xx), timeouts and dropped connections are retried with exponential backoff.
"""

from __future__ import annotations

import http.client
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urljoin, urlsplit

from dashboard import __version__

GITHUB, GITLAB, HUGGINGFACE = "github", "gitlab", "huggingface"
DEFAULT_BASES = {
    GITHUB: "https://api.github.com",
    GITLAB: "https://gitlab.com",
    HUGGINGFACE: "https://huggingface.co",
}
BASE_VARIABLES = {GITHUB: "GITHUB_API_URL", GITLAB: "GITLAB_API_URL", HUGGINGFACE: "HF_ENDPOINT"}
TOKEN_VARIABLES = {GITHUB: "GITHUB_TOKEN", GITLAB: "GITLAB_TOKEN", HUGGINGFACE: "HF_TOKEN"}
MAX_REDIRECTS = 3


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

    bases: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_BASES))
    tokens: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = 10.0
    max_body: int = 2_000_000
    retries: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0
    max_in_flight: int = 8

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **options: object) -> Settings:
        """Bases and tokens from the environment (see the module docstring); other fields as given."""
        bases = {
            api: (environ.get(var) or DEFAULT_BASES[api]).rstrip("/") for api, var in BASE_VARIABLES.items()
        }
        tokens = {
            api: environ[var].strip() for api, var in TOKEN_VARIABLES.items() if environ.get(var, "").strip()
        }
        return cls(bases=bases, tokens=tokens, **options)  # type: ignore[arg-type]


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


def api_path(*segments: str) -> str:
    """An API path from parts, each URL-encoded on its own (a ``/`` in a part stays inside it).

    An empty last part gives a trailing slash (``contents/``). Parts ``.`` and ``..`` are refused:
    they would step outside the API once a server normalises the path.
    """
    for segment in segments:
        if segment in (".", "..") or any(ord(c) < 32 for c in segment):
            raise ValueError(f"refusing path part {segment!r}")
    return "/" + "/".join(quote(segment, safe="") for segment in segments)


class Client:
    """A thread-safe client for the three APIs.

    client = Client(Settings.from_env(os.environ))
    reply = client.get("github", api_path("repos", "owner", "name"), etag='"abc"')
    """

    def __init__(self, settings: Settings, *, max_requests: int | None = None) -> None:
        self.settings = settings
        self.max_requests = max_requests
        self.counts = Counts()
        self.stop = threading.Event()
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

    def _note_limits(self, api: str, headers: Mapping[str, str]) -> None:
        remaining = _int_or_none(headers.get("x-ratelimit-remaining"))
        reset = _int_or_none(headers.get("x-ratelimit-reset"))
        if remaining is None and reset is None:
            return
        with self._lock:
            old_remaining, old_reset = self._limits.get(api, (None, None))
            self._limits[api] = (
                remaining if remaining is not None else old_remaining,
                float(reset) if reset is not None else old_reset,
            )

    def _spend(self, conditional: bool) -> None:
        with self._lock:
            if self.max_requests is not None and self.counts.requests >= self.max_requests:
                raise BudgetSpent(f"the budget of {self.max_requests} requests is used up")
            self.counts.requests += 1
            self.counts.conditional += int(conditional)

    # ------------------------------------------------------------------ requests

    def get(self, api: str, path: str, *, etag: str = "", query: str = "") -> Reply:
        """GET ``path`` (from `api_path`) on ``api``; follows moves within the API; retries transient errors.

        Raises `RateLimited`, `BudgetSpent`, `Stopped`, or `CheckError` with the reason.
        """
        base = self.settings.bases[api]
        target = base + path + (("?" + query) if query else "")
        moved_from = ""
        for _hop in range(MAX_REDIRECTS + 1):
            reply = self._get_with_retries(api, target, etag)
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

    def _get_with_retries(self, api: str, url: str, etag: str) -> Reply:
        settings = self.settings
        last_problem = ""
        for attempt in range(settings.retries + 1):
            if self.stop.is_set():
                raise Stopped("stopped")
            self._check_known_limit(api)
            if attempt:
                delay = settings.backoff * (2 ** (attempt - 1)) * (1 + random.random() * 0.25)
                with self._lock:
                    self.counts.retries += 1
                if self.stop.wait(delay):
                    raise Stopped("stopped")
            self._spend(bool(etag))
            try:
                reply = self._send(api, url, etag)
            except TimeoutError:
                last_problem = f"timed out after {settings.timeout:g} s"
                continue
            except (OSError, http.client.HTTPException) as error:
                last_problem = f"connection failed ({type(error).__name__})"
                continue
            self._note_limits(api, reply.headers)
            if reply.status == 304:
                with self._lock:
                    self.counts.not_modified += 1
            if reply.status in (403, 429) and _is_rate_limit(reply):
                wait, reset_at = self._wait_for(reply)
                if wait > settings.max_wait:
                    with self._lock:
                        self._limits[api] = (0, reset_at)
                    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(reset_at))
                    raise RateLimited(api, reset_at, f"{api} rate limit reached; it resets at {when}")
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
                when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(reset_at))
                raise RateLimited(api, reset_at, f"{api} rate limit reached; it resets at {when}")
            with self._lock:
                self._limits[api] = (None, None)

    def _wait_for(self, reply: Reply) -> tuple[float, float]:
        now = time.time()
        retry_after = _int_or_none(reply.headers.get("retry-after"))
        if retry_after is not None:
            return float(max(retry_after, 0)), now + max(retry_after, 0)
        reset = _int_or_none(reply.headers.get("x-ratelimit-reset"))
        if reply.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            return max(reset - now, 0.0), float(reset)
        return 60.0, now + 60.0  # GitHub: "otherwise, wait for at least one minute"

    def _headers(self, api: str, etag: str) -> dict[str, str]:
        headers = {"User-Agent": f"paper-dashboard/{__version__}", "Accept": "application/json"}
        if api == GITHUB:
            headers["Accept"] = "application/vnd.github+json"
            headers["X-GitHub-Api-Version"] = "2022-11-28"
        token = self.settings.tokens.get(api)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if etag:
            headers["If-None-Match"] = etag
        return headers

    def _connection(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        pool: dict[tuple[str, str], http.client.HTTPConnection] = getattr(self._local, "pool", None) or {}
        self._local.pool = pool
        connection = pool.get((scheme, netloc))
        if connection is None:
            kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            connection = kind(netloc, timeout=self.settings.timeout)
            pool[(scheme, netloc)] = connection
        return connection

    def _drop(self, scheme: str, netloc: str) -> None:
        pool = getattr(self._local, "pool", {})
        connection = pool.pop((scheme, netloc), None)
        if connection is not None:
            connection.close()

    def _send(self, api: str, url: str, etag: str) -> Reply:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise CheckError(f"unsupported scheme {parts.scheme!r}")
        connection = self._connection(parts.scheme, parts.netloc)
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
    if headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers:
        return True
    return b"rate limit" in reply.body[:2000].lower()


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(float(value.strip()))
    except ValueError:
        return None
