"""The Hugging Face Hub (``GET /api/{models,datasets,spaces}/{id}``, files under ``/resolve/main/``).

Base: ``HF_ENDPOINT`` (default ``https://huggingface.co``). Token: ``HF_TOKEN``, sent as
``Authorization: Bearer``. A repository path is ``owner/name`` for a model and
``datasets/owner/name`` or ``spaces/owner/name`` otherwise. The Hub answers 401 for a repository that
does not exist (or is private) without a token: that is ``not_found`` here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from dashboard.repocheck import states
from dashboard.repocheck.hosts.base import (
    Ask,
    Host,
    api_path,
    checked,
    decoded,
    from_top_level,
    split_name,
    trim_text,
)
from dashboard.repocheck.states import Facts, Malformed
from dashboard.text import links

KINDS = {"spaces": "space", "datasets": "dataset", "models": "model"}


def repo_of(url: str, parts: list[str]) -> str | None:
    """``owner/name`` (a model), ``datasets/owner/name`` or ``spaces/owner/name`` of a Hub URL."""
    prefix = ""
    if parts and parts[0] in KINDS:
        prefix = "" if parts[0] == "models" else parts[0] + "/"
        parts = parts[1:]
    if len(parts) < 2 or links.repo_of(url) == "":
        return None
    name = checked(parts[:2])
    return prefix + name if name else None


def kind_of(repo: str) -> tuple[str, str]:
    """(``model``, ``dataset`` or ``space``; the ``owner/name`` without the kind's prefix)."""
    first, _, rest = repo.partition("/")
    if first in ("datasets", "spaces"):
        return KINDS[first], rest
    return "model", repo


def repository(body: dict[str, Any], requested: str) -> tuple[Facts, list[str]]:
    """Facts from ``GET /api/{models|datasets|spaces}/{id}``, and the repository's file names."""
    repo_id = states.text_of(body.get("id")) or states.text_of(body.get("modelId"))
    siblings = body.get("siblings")
    if not repo_id or not isinstance(siblings, list):
        raise Malformed("malformed answer (no id or siblings)")
    states.repository_name(repo_id, "id", (2, 2))
    names = [states.text_of(s.get("rfilename")) for s in siblings if isinstance(s, dict)]
    card = body.get("cardData")
    license_name = states.text_of(card.get("license")) if isinstance(card, dict) else ""
    if not license_name and isinstance(body.get("tags"), list):
        license_name = next(
            (t[8:] for t in body["tags"] if isinstance(t, str) and t.startswith("license:")), ""
        )
    facts = Facts(
        "live",
        stars=states.count_of(body, "likes"),
        license=license_name,
        created_at=states.date_of(body.get("createdAt")),
        pushed_at=states.date_of(body.get("lastModified")),
    )
    if repo_id.lower() != requested.lower():
        return replace(facts, state="moved", moved_to=repo_id), names
    if body.get("disabled") is True:
        return facts.with_state("blocked", "disabled on the Hub"), names
    return facts, names


def entries(names: list[str]) -> list[tuple[str, bool]]:
    """Top-level (name, is_directory) entries from the Hub's flat list of file paths."""
    top: dict[str, bool] = {}
    for name in names:
        first, slash, _ = name.partition("/")
        if first:
            top[first] = top.get(first, False) or bool(slash)
    return list(top.items())


def trim(body: bytes) -> bytes:
    """The fields a state is decided from, and the top level of ``siblings`` only."""
    try:
        value: Any = states.json_value(body)
    except Malformed:
        return body
    if not isinstance(value, dict):
        return body
    kept = {k: value[k] for k in ("id", "modelId", "likes", "createdAt", "lastModified", "disabled", "tags")
            if k in value}  # fmt: skip
    if isinstance(value.get("cardData"), dict):
        kept["cardData"] = {"license": value["cardData"].get("license")}
    if isinstance(value.get("siblings"), list):
        top: dict[str, None] = {}
        for sibling in value["siblings"]:
            name = sibling.get("rfilename") if isinstance(sibling, dict) else None
            if isinstance(name, str):
                first, slash, _ = name.partition("/")
                top[first + ("/x" if slash else "")] = None  # "/x": a folder, as `entries` reads it
        kept["siblings"] = [{"rfilename": name} for name in top]
    return json.dumps(kept, separators=(",", ":")).encode()


def check(ask: Ask, repo: str, moved_to: str) -> Facts:
    """The state of the Hub repository ``repo``, asked under ``moved_to`` when it moved before."""
    kind, own = kind_of(repo)
    asked = moved_to or own
    owner, name = split_name(asked)
    status, body, _ = ask(api_path("api", kind + "s", owner, name), trim, "")
    early = HOST.status_facts(status, body)
    if early is not None:
        return early
    facts, names = repository(states.parse_json(body, dict), asked)
    if moved_to and facts.state != "moved":
        return replace(facts, state="moved", moved_to=moved_to)
    if facts.state != "live":
        return facts
    top = entries(names)
    prefix = () if kind == "model" else (kind + "s",)

    def readme() -> str | None:
        file_name = states.readme_name(top)
        if not file_name:
            return None
        return decoded(*ask(api_path(*prefix, owner, name, "resolve", "main", file_name), trim_text, "")[:2])

    return from_top_level(facts, top, readme)


HOST = Host(
    site="huggingface.co",
    api="huggingface",
    label="Hugging Face",
    base_variable="HF_ENDPOINT",
    default_base="https://huggingface.co",
    token_variable="HF_TOKEN",
    repo_of=repo_of,
    check=check,
    missing=frozenset({401}),
)
