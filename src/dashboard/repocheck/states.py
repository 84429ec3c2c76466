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

The top level is only listed where it can tell states apart: GitHub repositories smaller than
`SMALL_REPO_KB` (a README-only repository with a teaser figure stays well under it); larger ones
are ``live`` from their metadata alone. The README is read only when the top level holds no code.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from dashboard.repocheck.targets import MAX_GITLAB_DEPTH, valid_segment
from dashboard.schema import REPO_STATES

SMALL_REPO_KB = 2048
README_CHARS = 20_000  # a placeholder says so near the top; more is never needed
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


def from_status(status: int, host: str, message: str = "") -> Facts | None:
    """The state a non-200 status decides on its own, or None (200, 304: read the body).

    >>> from_status(451, "github").state
    'not_found'
    """
    detail = f"HTTP {status}" + (f": {message[:120]}" if message else "")
    if status in (404, 410, 451):
        return Facts("not_found", detail=detail)
    if status == 401:
        # The Hub answers 401 for a repository that does not exist (or is private) without a token.
        return Facts("not_found" if host == "huggingface" else "blocked", detail=detail)
    if status == 403:
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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(body: dict[str, Any], name: str) -> int | None:
    """A count field: absent or not a whole number is None; out of range (``2**70``, ``-5``) `Malformed`."""
    value = _int(body.get(name))
    if value is not None and not 0 <= value <= MAX_COUNT:
        raise Malformed(f"malformed answer ({name} out of range: {str(value)[:30]})")
    return value


def repository_name(value: str, field: str, parts: tuple[int, int]) -> str:
    """``value`` when it is a repository path of ``parts`` (fewest, most) valid segments, else `Malformed`.

    What a moved repository is stored under, and asked for next time: ``acme``, ``acme/..`` or a
    name with a newline is no repository.
    """
    segments = value.split("/")
    if not (parts[0] <= len(segments) <= parts[1] and all(valid_segment(s) for s in segments)):
        raise Malformed(f"malformed answer ({field} {value[:80]!r} is not a repository name)")
    return value


def _date(value: Any) -> str:
    """ISO date (``YYYY-MM-DD``) of an ISO timestamp; ``""`` when absent or not one."""
    text = _text(value)
    return text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}", text) else ""


def github_repository(body: dict[str, Any], requested: str) -> tuple[Facts, bool]:
    """Facts from ``GET /repos/{owner}/{repo}``, and whether the top level must be listed to decide.

    ``requested`` is the ``owner/name`` asked for; another ``full_name`` in the answer means moved.
    """
    full_name = _text(body.get("full_name"))
    if not full_name or "stargazers_count" not in body:
        raise Malformed("malformed answer (no full_name or stargazers_count)")
    repository_name(full_name, "full_name", (2, 2))
    license_value = body.get("license")
    spdx = _text(license_value.get("spdx_id")) if isinstance(license_value, dict) else ""
    facts = Facts(
        "live",
        stars=_count(body, "stargazers_count"),
        license="" if spdx == "NOASSERTION" else spdx,
        created_at=_date(body.get("created_at")),
        pushed_at=_date(body.get("pushed_at")),
        detail=_text(body.get("description"))[:200],
    )
    if full_name.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=full_name), False
    if body.get("archived") is True:
        return facts.with_state("archived"), False
    size = _count(body, "size")
    if size == 0:
        return facts.with_state("empty"), False
    return facts, size is None or size < SMALL_REPO_KB


def gitlab_project(body: dict[str, Any], requested: str) -> tuple[Facts, bool]:
    """Facts from ``GET /api/v4/projects/{path}``, and whether the top level must be listed."""
    path = _text(body.get("path_with_namespace"))
    if not path or "star_count" not in body:
        raise Malformed("malformed answer (no path_with_namespace or star_count)")
    repository_name(path, "path_with_namespace", (2, MAX_GITLAB_DEPTH))
    license_value = body.get("license")
    facts = Facts(
        "live",
        stars=_count(body, "star_count"),
        license=_text(license_value.get("key")) if isinstance(license_value, dict) else "",
        created_at=_date(body.get("created_at")),
        pushed_at=_date(body.get("last_activity_at")),
        detail=_text(body.get("description"))[:200],
    )
    if path.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=path), False
    if body.get("archived") is True:
        return facts.with_state("archived"), False
    if body.get("empty_repo") is True:
        return facts.with_state("empty"), False
    return facts, True


def hub_repository(body: dict[str, Any], requested: str) -> tuple[Facts, list[str]]:
    """Facts from ``GET /api/{models|datasets|spaces}/{id}``, and the repository's file names."""
    repo_id = _text(body.get("id")) or _text(body.get("modelId"))
    siblings = body.get("siblings")
    if not repo_id or not isinstance(siblings, list):
        raise Malformed("malformed answer (no id or siblings)")
    repository_name(repo_id, "id", (2, 2))
    names = [_text(s.get("rfilename")) for s in siblings if isinstance(s, dict)]
    card = body.get("cardData")
    license_name = _text(card.get("license")) if isinstance(card, dict) else ""
    if not license_name and isinstance(body.get("tags"), list):
        license_name = next(
            (t[8:] for t in body["tags"] if isinstance(t, str) and t.startswith("license:")), ""
        )
    facts = Facts(
        "live",
        stars=_count(body, "likes"),
        license=license_name,
        created_at=_date(body.get("createdAt")),
        pushed_at=_date(body.get("lastModified")),
    )
    if repo_id.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=repo_id), names
    if body.get("disabled") is True:
        return facts.with_state("blocked", "disabled on the Hub"), names
    return facts, names


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


def github_contents(body: list[Any]) -> list[tuple[str, bool]]:
    """(name, is_directory) of each item of ``GET /repos/{owner}/{repo}/contents/``."""
    entries = []
    for item in body:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise Malformed("malformed answer (a contents item without a name)")
        entries.append((item["name"], item.get("type") == "dir"))
    return entries


def gitlab_tree(body: list[Any]) -> list[tuple[str, bool]]:
    """(name, is_directory) of each item of ``GET /projects/{id}/repository/tree``."""
    entries = []
    for item in body:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise Malformed("malformed answer (a tree item without a name)")
        entries.append((item["name"], item.get("type") == "tree"))
    return entries


def hub_entries(names: list[str]) -> list[tuple[str, bool]]:
    """Top-level (name, is_directory) entries from the Hub's flat list of file paths."""
    top: dict[str, bool] = {}
    for name in names:
        first, slash, _ = name.partition("/")
        if first:
            top[first] = top.get(first, False) or bool(slash)
    return list(top.items())


def github_readme(body: dict[str, Any]) -> str:
    """The text of ``GET /repos/{owner}/{repo}/readme`` (base64 ``content``), cut to `README_CHARS`."""
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
