"""GitHub through its REST API (``GET /repos/{owner}/{repo}``, ``/contents/``, ``/readme``).

Base: ``GITHUB_API_URL`` (default ``https://api.github.com``, the variable GitHub Actions sets, so
GitHub Enterprise works). Token: ``GITHUB_TOKEN``, sent as ``Authorization: Bearer``. A renamed
repository answers 301 to ``/repositories/{id}``, whose ``full_name`` is the new name (``moved``).
The top level is listed only for repositories smaller than `SMALL_REPO_KB` (a README-only one with a
teaser figure stays well under it); larger ones are ``live`` from their metadata alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

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

SMALL_REPO_KB = 2048
_REPO_FIELDS = ("full_name", "stargazers_count", "forks_count", "size", "archived", "fork", "license",
                "created_at", "pushed_at", "default_branch", "description")  # fmt: skip


def repo_of(url: str, parts: list[str]) -> str | None:
    """``owner/name`` of a GitHub repository URL (``/tree/...``, ``.git`` and the like dropped)."""
    repo = links.repo_of(url)
    return checked(repo.split("/")) if repo and len(repo.split("/")) == 2 else None


def repository(body: dict[str, Any], requested: str) -> tuple[Facts, bool]:
    """Facts from ``GET /repos/{owner}/{repo}``, and whether the top level must be listed to decide.

    ``requested`` is the ``owner/name`` asked for; another ``full_name`` in the answer means moved.
    """
    full_name = states.text_of(body.get("full_name"))
    if not full_name or "stargazers_count" not in body:
        raise states.Malformed("malformed answer (no full_name or stargazers_count)")
    states.repository_name(full_name, "full_name", (2, 2))
    license_value = body.get("license")
    spdx = states.text_of(license_value.get("spdx_id")) if isinstance(license_value, dict) else ""
    facts = Facts(
        "live",
        stars=states.count_of(body, "stargazers_count"),
        license="" if spdx == "NOASSERTION" else spdx,
        created_at=states.date_of(body.get("created_at")),
        pushed_at=states.date_of(body.get("pushed_at")),
        detail=states.text_of(body.get("description"))[:200],
    )
    if full_name.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=full_name), False
    if body.get("archived") is True:
        return facts.with_state("archived"), False
    size = states.count_of(body, "size")
    if size == 0:
        return facts.with_state("empty"), False
    return facts, size is None or size < SMALL_REPO_KB


def check(ask: Ask, repo: str, moved_to: str) -> Facts:
    """The state of ``repo`` (``owner/name``), asked under ``moved_to`` when it moved before."""
    asked = moved_to or repo
    owner, name = split_name(asked)
    status, body, _ = ask(api_path("repos", owner, name), lambda b: json_subset(b, _REPO_FIELDS), "")
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    facts, list_top = repository(states.parse_json(body, dict), asked)
    if moved_to and facts.state != "moved":
        return replace(facts, state="moved", moved_to=moved_to)
    if not list_top:
        return facts
    status, body, _ = ask(api_path("repos", owner, name, "contents", ""), trim_listing, "")
    if status == 404:
        return facts.with_state("empty")  # "This repository is empty."
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    entries = states.entries_of(states.parse_json(body, list), "dir", "contents")

    def readme() -> str | None:
        status, body, _ = ask(api_path("repos", owner, name, "readme"), trim_base64_file, "")
        return states.base64_content(states.parse_json(body, dict)) if status == 200 else None

    return from_top_level(facts, entries, readme)


HOST = Host(
    site="github.com",
    api="github",
    label="GitHub",
    base_variable="GITHUB_API_URL",
    default_base="https://api.github.com",
    token_variable="GITHUB_TOKEN",
    repo_of=repo_of,
    check=check,
    headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
)
