"""Codeberg through the Forgejo/Gitea API v1 (any Forgejo or Gitea server with ``CODEBERG_API_URL``).

Calls: ``GET /repos/{owner}/{repo}`` (``full_name``, ``empty``, ``archived``, ``stars_count``,
``created_at``, ``updated_at``, ``default_branch``, ``mirror`` with ``original_url``) and
``GET /repos/{owner}/{repo}/contents?ref=BRANCH`` (the top level: ``name``, ``type`` ``file`` or
``dir``), then ``/contents/{README}?ref=BRANCH`` (base64 ``content``) only when the top level holds
no code. Base: ``CODEBERG_API_URL`` (default ``https://codeberg.org/api/v1``). Token:
``CODEBERG_TOKEN``, sent as ``Authorization: token ...``. A renamed repository (or owner) answers a
redirect to its new name, whose ``full_name`` then differs from the one asked (``moved``). A pull
mirror is judged by what it holds; ``detail`` names the ``original_url`` it mirrors.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import quote

from dashboard.repocheck import states
from dashboard.repocheck.hosts.base import (
    Ask,
    Host,
    api_path,
    checked,
    from_top_level,
    json_subset,
    split_name,
    trim_base64_file,
    trim_listing,
)
from dashboard.repocheck.states import Facts
from dashboard.text import links

# First path parts of codeberg.org pages that are not an owner.
_NOT_OWNERS = frozenset(
    {"explore", "user", "org", "repo", "api", "assets", "admin", "notifications", "avatars", "attachments",
     "login", "issues", "pulls", "milestones", "-", ".well-known"}
)  # fmt: skip
_REPO_FIELDS = ("full_name", "empty", "archived", "stars_count", "created_at", "updated_at", "default_branch",
                "mirror", "original_url", "description")  # fmt: skip


def repo_of(url: str, parts: list[str]) -> str | None:
    """``owner/name`` of a Codeberg repository URL (``/src/branch/...``, ``.git`` and the like dropped)."""
    if not parts or parts[0].lower() in _NOT_OWNERS:
        return None
    repo = links.repo_of(url)
    return checked(repo.split("/")) if repo and len(repo.split("/")) == 2 else None


def repository(body: dict[str, Any], requested: str) -> tuple[Facts, str]:
    """Facts from ``GET /repos/{owner}/{repo}``, and the branch to list (``""``: decided already)."""
    full_name = states.text_of(body.get("full_name"))
    if not full_name or "stars_count" not in body:
        raise states.Malformed("malformed answer (no full_name or stars_count)")
    states.repository_name(full_name, "full_name", (2, 2))
    original = states.text_of(body.get("original_url")) if body.get("mirror") is True else ""
    facts = Facts(
        "live",
        stars=states.count_of(body, "stars_count"),
        created_at=states.date_of(body.get("created_at")),
        pushed_at=states.date_of(body.get("updated_at")),
        detail=f"mirror of {original}" if original else states.text_of(body.get("description"))[:200],
    )
    if full_name.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=full_name), ""
    if body.get("archived") is True:
        return facts.with_state("archived"), ""
    if body.get("empty") is True:
        return facts.with_state("empty"), ""
    branch = states.text_of(body.get("default_branch"))
    return facts, branch if branch and len(branch) <= 250 else "main"


def check(ask: Ask, repo: str, moved_to: str) -> Facts:
    """The state of ``repo`` (``owner/name``), asked under ``moved_to`` when it moved before."""
    asked = moved_to or repo
    owner, name = split_name(asked)
    status, body, _ = ask(api_path("repos", owner, name), lambda b: json_subset(b, _REPO_FIELDS), "")
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    facts, branch = repository(states.parse_json(body, dict), asked)
    if moved_to and facts.state != "moved":
        return replace(facts, state="moved", moved_to=moved_to)
    if not branch:
        return facts
    ref = "ref=" + quote(branch, safe="")
    status, body, _ = ask(api_path("repos", owner, name, "contents"), trim_listing, ref)
    if status == 404:
        return facts.with_state("empty")  # no branch yet: nothing was ever pushed
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    entries = states.entries_of(states.parse_json(body, list), "dir", "contents")

    def readme() -> str | None:
        file_name = states.readme_name(entries)
        if not file_name:
            return None
        status, body, _ = ask(api_path("repos", owner, name, "contents", file_name), trim_base64_file, ref)
        return states.base64_content(states.parse_json(body, dict)) if status == 200 else None

    return from_top_level(facts, entries, readme)


HOST = Host(
    site="codeberg.org",
    api="codeberg",
    label="Codeberg",
    base_variable="CODEBERG_API_URL",
    default_base="https://codeberg.org/api/v1",
    token_variable="CODEBERG_TOKEN",
    repo_of=repo_of,
    check=check,
    auth_scheme="token",
)
