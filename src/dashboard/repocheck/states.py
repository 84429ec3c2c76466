"""API answers -> one repository state. Pure functions: no I/O, no clock, no HTTP.

States (`dashboard.schema.REPO_STATES`):

==============  ==================================================================================
live            the repository holds more than a README and licence files
empty           size 0, no commits, or no files (GitHub ``size == 0`` or "This repository is empty")
readme_only     the top level holds only a README, licence, citation, dotfiles and asset folders
placeholder     as readme_only, and the README says the code is coming ("coming soon", "will be
                released", "under construction", "stay tuned", ... in any case)
archived        the host marks it archived (read-only)
moved           the API redirected to another name (``moved_to`` keeps it)
not_found       404, 410 or 451 (and the Hub's 401, its answer for a missing repository)
blocked         403 that is not a rate limit (e.g. disabled, legal block), or a refused token
error           5xx after retries, a malformed or oversized answer, a timeout (``detail`` says which)
not_checked     no answer yet (offline, checking switched off, the run stopped before it)
==============  ==================================================================================

What each host's answers say is read in its module (`dashboard.repocheck.hosts`); here are the
rules they share: statuses, the top level (code or not), README placeholders, bounded numbers and
names. The README is read only when the top level holds no code.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from dashboard.schema import REPO_STATES

README_CHARS = 20_000  # a placeholder says so near the top; more is never needed
MAX_SEGMENT_CHARS = 100
MAX_COUNT = 2**53 - 1  # the largest whole number a JSON number holds exactly; no count comes near it
MAX_TEXT = {"license": 100, "detail": 300, "moved_to": 300}  # characters kept of each text
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")

PLACEHOLDER = re.compile(
    r"coming\s+soon|(?:will|would|shall)\s+be\s+(?:made\s+)?(?:publicly\s+|fully\s+|open[-\s]?)?"
    r"(?:released|available|uploaded|published|open[-\s]?sourced|public|updated)"
    r"|under\s+construction|stay\s+tuned|to\s+be\s+(?:released|uploaded|published)"
    r"|(?:code|implementation)\s+(?:is\s+)?coming|release\s+soon|work\s+in\s+progress|\btbd\b|\btba\b",
    re.IGNORECASE,
)
_README = re.compile(r"^readme(?:\.[a-z0-9]+)?$", re.IGNORECASE)
_NOT_CODE_FILES = re.compile(
    r"^(?:licen[cs]e|copying|notice|citation|authors|contributing|code_of_conduct|security|changelog)"
    r"(?:[.-][a-z0-9.]+)?$|^\.[a-z0-9_.-]+$",
    re.IGNORECASE,
)
_NOT_CODE_DIRS = frozenset(
    {"assets", "asset", "images", "image", "imgs", "img", "figures", "figure", "figs", "fig", "docs",
     "doc", "static", "media", "pics", "pic", "resources", "teaser", "gifs", ".github"}
)  # fmt: skip


@dataclass(frozen=True)
class Facts:
    """What a check learned about one repository."""

    state: str
    stars: int | None = None
    license: str = ""
    created_at: str = ""
    pushed_at: str = ""
    moved_to: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        """Bounded before it can be stored: a known state, a count in range, short clean texts."""
        if self.state not in REPO_STATES:
            raise ValueError(f"unknown repository state {self.state!r}")
        if self.stars is not None and not (
            isinstance(self.stars, int) and not isinstance(self.stars, bool) and 0 <= self.stars <= MAX_COUNT
        ):
            raise Malformed(f"malformed answer (a count out of range: {str(self.stars)[:30]})")
        for name, limit in MAX_TEXT.items():
            value = getattr(self, name)
            if not isinstance(value, str):
                raise Malformed(f"malformed answer ({name} is not text)")
            cleaned = _CONTROL.sub(" ", value[: limit * 2])[:limit]
            if cleaned != value:
                object.__setattr__(self, name, cleaned)

    def with_state(self, state: str, detail: str = "") -> Facts:
        """The same facts with another state (and detail, when given)."""
        return replace(self, state=state, detail=detail or self.detail)


class Malformed(ValueError):
    """An answer that is not the documented shape."""


def json_value(body: bytes) -> Any:
    """The JSON value of a body, or `Malformed` (bad UTF-8, bad JSON, nesting too deep to read)."""
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Malformed(f"malformed answer ({type(error).__name__})") from None


def parse_json(body: bytes, expected: type) -> Any:
    """The JSON of a body, which must be a ``dict`` or ``list`` as ``expected``; else `Malformed`."""
    value = json_value(body)
    if not isinstance(value, expected):
        raise Malformed(f"malformed answer (expected a JSON {expected.__name__})")
    return value


def from_status(status: int, message: str = "", *, missing: Collection[int] = ()) -> Facts | None:
    """The state a non-200 status decides on its own, or None (200, 304: read the body).

    ``missing``: the host's other statuses for "no such repository" (the Hub answers 401).

    >>> from_status(451).state, from_status(401).state, from_status(401, missing={401}).state
    ('not_found', 'blocked', 'not_found')
    """
    detail = f"HTTP {status}" + (f": {message[:120]}" if message else "")
    if status in (404, 410, 451) or status in missing:
        return Facts("not_found", detail=detail)
    if status in (401, 403):
        return Facts("blocked", detail=detail)
    if status >= 500:
        return Facts("error", detail=detail)
    if status not in (200, 304):
        return Facts("error", detail=f"unexpected HTTP {status}")
    return None


def message_of(body: bytes) -> str:
    """The ``message`` (GitHub, GitLab) or ``error`` (Hub) of an error body, if it has one."""
    try:
        value = json_value(body[:10_000].decode("utf-8", "replace").encode())
    except Malformed:
        return ""
    if isinstance(value, dict):
        text = value.get("message", value.get("error", ""))
        return text if isinstance(text, str) else ""
    return ""


def text_of(value: Any) -> str:
    """``value`` when it is text, else ``""``."""
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def count_of(body: dict[str, Any], name: str) -> int | None:
    """A count field: absent or not a whole number is None; out of range (``2**70``, ``-5``) `Malformed`."""
    value = _int(body.get(name))
    if value is not None and not 0 <= value <= MAX_COUNT:
        raise Malformed(f"malformed answer ({name} out of range: {str(value)[:30]})")
    return value


def valid_segment(segment: str) -> bool:
    """Whether one path part may be sent (encoded): not empty, not ``.``/``..``, no control characters."""
    return (
        0 < len(segment) <= MAX_SEGMENT_CHARS
        and segment not in (".", "..")
        and not any(ord(c) < 32 or c.isspace() or ord(c) == 127 for c in segment)
        and "/" not in segment
        and "\\" not in segment
    )


def repository_name(value: str, field: str, parts: tuple[int, int]) -> str:
    """``value`` when it is a repository path of ``parts`` (fewest, most) valid segments, else `Malformed`.

    What a moved repository is stored under, and asked for next time: ``acme``, ``acme/..`` or a
    name with a newline is no repository.
    """
    segments = value.split("/")
    if not (parts[0] <= len(segments) <= parts[1] and all(valid_segment(s) for s in segments)):
        raise Malformed(f"malformed answer ({field} {value[:80]!r} is not a repository name)")
    return value


def date_of(value: Any) -> str:
    """ISO date (``YYYY-MM-DD``) of an ISO timestamp; ``""`` when absent or not one."""
    text = text_of(value)
    return text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}", text) else ""


def top_level(entries: list[tuple[str, bool]]) -> str:
    """``empty``, ``code`` or ``no_code`` for the top level as (name, is_directory) pairs.

    >>> top_level([("README.md", False), ("LICENSE", False), ("assets", True)])
    'no_code'
    """
    real = [(name, is_dir) for name, is_dir in entries if name not in (".gitattributes", ".gitkeep")]
    if not real:
        return "empty"
    for name, is_dir in real:
        if is_dir:
            if name.lower() not in _NOT_CODE_DIRS:
                return "code"
        elif not (_README.match(name) or _NOT_CODE_FILES.match(name)):
            return "code"
    return "no_code"


def readme_name(entries: list[tuple[str, bool]]) -> str:
    """The README's file name among the top-level entries, ``""`` when there is none."""
    return next((name for name, is_dir in entries if not is_dir and _README.match(name)), "")


def entries_of(body: list[Any], directory: str, what: str) -> list[tuple[str, bool]]:
    """(name, is_directory) of each item of a listing whose items have ``name`` and ``type``
    (``directory`` is the type a folder has: ``dir`` on GitHub and Forgejo, ``tree`` on GitLab)."""
    entries = []
    for item in body:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise Malformed(f"malformed answer (a {what} item without a name)")
        entries.append((item["name"], item.get("type") == directory))
    return entries


def encode_base64(text: str) -> str:
    """``text`` as base64 (what `base64_content` reads back)."""
    return base64.b64encode(text.encode()).decode()


def base64_content(body: dict[str, Any]) -> str:
    """The text of a file answer with base64 ``content`` (GitHub's ``/readme``, Forgejo's
    ``/contents/{file}``), cut to `README_CHARS`."""
    content = body.get("content")
    if not isinstance(content, str) or body.get("encoding", "base64") != "base64":
        raise Malformed("malformed answer (no base64 content)")
    try:
        raw = base64.b64decode(content, validate=False)
    except (binascii.Error, ValueError):
        raise Malformed("malformed answer (content is not base64)") from None
    return raw[: README_CHARS * 4].decode("utf-8", "replace")[:README_CHARS]


def readme_state(text: str) -> str:
    """``placeholder`` when a README says the code is coming, else ``readme_only``.

    >>> readme_state("# Method\\nCode COMING SOON!"), readme_state("# Method\\nSee the paper.")
    ('placeholder', 'readme_only')
    """
    return "placeholder" if PLACEHOLDER.search(text[:README_CHARS]) else "readme_only"
