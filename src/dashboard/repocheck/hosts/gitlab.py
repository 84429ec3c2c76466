"""GitLab through its REST API v4 (``GET /api/v4/projects/{path}``, ``/repository/tree``, raw files).

Base: ``GITLAB_API_URL`` (default ``https://gitlab.com``; the API is under ``/api/v4`` of it). Token:
``GITLAB_TOKEN``, sent as ``Authorization: Bearer``. Projects sit in nested groups
(``group/sub/project``); a moved project answers 301 to ``/api/v4/projects/{id}``.
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
    decoded,
    from_top_level,
    json_subset,
    trim_listing,
    trim_text,
)
from dashboard.repocheck.states import Facts

MAX_DEPTH = 20  # GitLab allows nested subgroups; a longer path is not a project
_ROUTES = frozenset(
    {"tree", "blob", "raw", "commits", "commit", "issues", "merge_requests", "wikis", "releases", "tags",
     "branches", "pipelines", "blame", "archive", "edit", "compare", "activity", "graphs", "network"}
)  # fmt: skip
_PROJECT_FIELDS = ("path_with_namespace", "star_count", "forks_count", "archived", "empty_repo", "license",
                   "created_at", "last_activity_at", "default_branch", "description")  # fmt: skip


def repo_of(url: str, parts: list[str]) -> str | None:
    """``group/.../project`` of a GitLab URL: the project ends at ``-`` or, in old-style URLs, at the
    first route word (``tree``, ``blob``, ...)."""
    if "-" in parts:
        parts = parts[: parts.index("-")]
    else:
        routes = [i for i, p in enumerate(parts) if i >= 2 and p in _ROUTES]
        parts = parts[: routes[0]] if routes else parts
    if parts and parts[-1].lower().endswith(".git"):
        parts = [*parts[:-1], parts[-1][:-4]]
    if not 2 <= len(parts) <= MAX_DEPTH:
        return None
    return checked(parts)


def project(body: dict[str, Any], requested: str) -> tuple[Facts, bool]:
    """Facts from ``GET /api/v4/projects/{path}``, and whether the top level must be listed."""
    path = states.text_of(body.get("path_with_namespace"))
    if not path or "star_count" not in body:
        raise states.Malformed("malformed answer (no path_with_namespace or star_count)")
    states.repository_name(path, "path_with_namespace", (2, MAX_DEPTH))
    license_value = body.get("license")
    facts = Facts(
        "live",
        stars=states.count_of(body, "star_count"),
        license=states.text_of(license_value.get("key")) if isinstance(license_value, dict) else "",
        created_at=states.date_of(body.get("created_at")),
        pushed_at=states.date_of(body.get("last_activity_at")),
        detail=states.text_of(body.get("description"))[:200],
    )
    if path.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=path), False
    if body.get("archived") is True:
        return facts.with_state("archived"), False
    if body.get("empty_repo") is True:
        return facts.with_state("empty"), False
    return facts, True


def check(ask: Ask, repo: str, moved_to: str) -> Facts:
    """The state of the project ``repo``, asked under ``moved_to`` when it moved before."""
    asked = moved_to or repo
    path = api_path("api", "v4", "projects", asked)
    status, body, _ = ask(path, lambda b: json_subset(b, _PROJECT_FIELDS), "license=true")
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    data = states.parse_json(body, dict)
    facts, list_top = project(data, asked)
    if moved_to and facts.state != "moved":
        return replace(facts, state="moved", moved_to=moved_to)
    if not list_top:
        return facts
    status, body, _ = ask(path + "/repository/tree", trim_listing, "")
    if status == 404:
        return facts.with_state("empty")
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    entries = states.entries_of(states.parse_json(body, list), "tree", "tree")
    branch = data.get("default_branch") if isinstance(data.get("default_branch"), str) else "main"

    def readme() -> str | None:
        file_name = states.readme_name(entries)
        if not file_name:
            return None
        raw = path + api_path("repository", "files", file_name, "raw")
        return decoded(*ask(raw, trim_text, "ref=" + quote(branch, safe=""))[:2])

    return from_top_level(facts, entries, readme)


HOST = Host(
    site="gitlab.com",
    api="gitlab",
    label="GitLab",
    base_variable="GITLAB_API_URL",
    default_base="https://gitlab.com",
    token_variable="GITLAB_TOKEN",
    repo_of=repo_of,
    check=check,
)
