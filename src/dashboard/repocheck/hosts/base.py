"""What a repository host is to the checker: one `Host` per module of this package.

A host states where its API lives (``base_variable``, ``default_base``), which token it takes and how
(``token_variable``, ``auth_scheme``), which URLs name one of its repositories (``repo_of``) and how
its documented answers become one state (``check``). The checker, the client and the targets know
hosts only through this record and the registry in `dashboard.repocheck.hosts`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from dashboard.repocheck import states
from dashboard.repocheck.states import Facts, Malformed


def api_path(*segments: str) -> str:
    """An API path from parts, each URL-encoded on its own (a ``/`` in a part stays inside it).

    An empty last part gives a trailing slash (``contents/``). Parts ``.`` and ``..`` are refused:
    they would step outside the API once a server normalises the path.
    """
    for segment in segments:
        if segment in (".", "..") or any(ord(c) < 32 for c in segment):
            raise ValueError(f"refusing path part {segment!r}")
    return "/" + "/".join(quote(segment, safe="") for segment in segments)


Trim = Callable[[bytes], bytes]
# ask(path, trim, query) -> (status, body, final path): one GET on the host's own API, conditional
# when the path was answered before (a 304 gives the stored body), following moves within the API.
Ask = Callable[[str, Trim, str], tuple[int, bytes, str]]


@dataclass(frozen=True)
class Host:
    """One repository host: where and how to ask it, which URLs are its repositories, what answers mean."""

    site: str  # the web host in links, and the first part of a cache key: "github.com"
    api: str  # the API's name in the cache's responses and limits tables: "github"
    label: str  # for people: "GitHub"
    base_variable: str
    default_base: str
    token_variable: str
    repo_of: Callable[[str, list[str]], str | None]  # (URL, decoded path parts) -> repository path
    check: Callable[[Ask, str, str], Facts]  # (ask, repository path, the name it moved to) -> facts
    auth_scheme: str = "Bearer"  # Authorization: <scheme> <token>
    headers: Mapping[str, str] = field(default_factory=dict)  # sent with every request
    missing: frozenset[int] = frozenset()  # statuses besides 404, 410 and 451 meaning "not found"

    def status_facts(self, status: int, body: bytes) -> Facts | None:
        """The state a non-200 status decides on its own (`states.from_status`), or None."""
        return states.from_status(status, states.message_of(body), missing=self.missing)


def split_name(name: str) -> tuple[str, str]:
    """``owner``, ``name`` of an ``owner/name`` path (`Malformed` when it is not one)."""
    owner, slash, rest = name.partition("/")
    if not slash or not owner or not rest or "/" in rest:
        raise Malformed(f"malformed name {name[:80]!r} (not owner/name)")
    return owner, rest


def checked(parts: Sequence[str]) -> str | None:
    """The repository path of ``parts``, or None when a part may not be sent (`states.valid_segment`)."""
    if not parts or not all(states.valid_segment(p) for p in parts):
        return None
    return "/".join(parts)


def from_top_level(facts: Facts, entries: list[tuple[str, bool]], readme: Callable[[], str | None]) -> Facts:
    """The state from the top-level entries, reading the README only when there is no code."""
    kind = states.top_level(entries)
    if kind == "empty":
        return facts.with_state("empty")
    if kind == "code":
        return facts
    text = readme()
    return facts.with_state("readme_only" if text is None else states.readme_state(text))


# ---------------------------------------------------------------------- what is kept of each answer
# Only the fields a state is decided from: a 304 reuses these, and the cache stays small.


def json_subset(body: bytes, fields: Sequence[str]) -> bytes:
    """The body with only ``fields`` of its JSON object (unchanged when it is no JSON object)."""
    try:
        value = states.json_value(body)
    except Malformed:
        return body  # kept as is: parsing it again gives the same "malformed" answer
    if not isinstance(value, dict):
        return body
    return json.dumps({k: value[k] for k in fields if k in value}, separators=(",", ":")).encode()


def trim_listing(body: bytes) -> bytes:
    """A directory listing with each item's ``name`` and ``type`` only."""
    try:
        value = states.json_value(body)
    except Malformed:
        return body
    if not isinstance(value, list):
        return body
    return json.dumps(
        [{"name": i.get("name"), "type": i.get("type")} if isinstance(i, dict) else i for i in value],
        separators=(",", ":"),
    ).encode()


def trim_base64_file(body: bytes) -> bytes:
    """A file answer (``encoding: base64``, ``content``) with the first `states.README_CHARS` only."""
    try:
        value = states.json_value(body)
        text = states.base64_content(value) if isinstance(value, dict) else None
    except Malformed:
        return body
    if text is None:
        return body
    return json.dumps({"encoding": "base64", "content": states.encode_base64(text)}).encode()


def trim_text(body: bytes) -> bytes:
    """A raw text file, cut to what a README check reads."""
    return body[: states.README_CHARS * 4]


def decoded(status: int, body: bytes) -> str | None:
    """A raw file's text (200), else None."""
    return body.decode("utf-8", "replace") if status == 200 else None
