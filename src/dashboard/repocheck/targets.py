"""What to check: the repositories a paper links to on GitHub, GitLab and Hugging Face.

A `Target` is a host and a repository path, never a URL to fetch: the client builds the request
from the configured API base and the URL-encoded path segments, so a link in an abstract cannot
make the checker reach any other host.

    >>> target_of("https://github.com/Owner/Repo/tree/main/src")
    Target(host='github.com', repo='Owner/Repo')
    >>> target_of("https://huggingface.co/spaces/org/demo").kind
    'space'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd

from dashboard import links

GITHUB, GITLAB, HUGGINGFACE = "github.com", "gitlab.com", "huggingface.co"
HOSTS: tuple[str, ...] = (GITHUB, GITLAB, HUGGINGFACE)
_HF_PREFIXES = {"spaces": "space", "datasets": "dataset", "models": "model"}
MAX_SEGMENT_CHARS = 100
_GITLAB_ROUTES = frozenset(
    {"tree", "blob", "raw", "commits", "commit", "issues", "merge_requests", "wikis", "releases", "tags",
     "branches", "pipelines", "blame", "archive", "edit", "compare", "activity", "graphs", "network"}
)  # fmt: skip
MAX_GITLAB_DEPTH = 20  # GitLab allows nested subgroups; a longer path is not a project


@dataclass(frozen=True, order=True)
class Target:
    """One repository to check: ``host`` in `HOSTS` and its path there.

    ``repo`` is ``owner/name`` on GitHub, ``group/.../project`` on GitLab, and on Hugging Face
    ``owner/name`` for a model, ``datasets/owner/name`` or ``spaces/owner/name`` otherwise.
    """

    host: str
    repo: str

    @property
    def key(self) -> str:
        """The cache key: host and path, lowercase (all three hosts ignore case in names)."""
        return f"{self.host}/{self.repo}".lower()

    @property
    def kind(self) -> str:
        """``repository`` (GitHub, GitLab) or the Hugging Face kind: ``model``, ``dataset``, ``space``."""
        if self.host != HUGGINGFACE:
            return "repository"
        first = self.repo.split("/", 1)[0]
        return _HF_PREFIXES.get(first, "model")

    @property
    def name(self) -> str:
        """The repository's own path, without the Hugging Face kind prefix."""
        if self.host == HUGGINGFACE and self.kind != "model":
            return self.repo.split("/", 1)[1]
        return self.repo

    @property
    def segments(self) -> tuple[str, ...]:
        """The path split into its parts (each is URL-encoded on its own by the client)."""
        return tuple(self.name.split("/"))

    @property
    def url(self) -> str:
        """The repository's page, for people (never fetched)."""
        return f"https://{self.host}/{self.repo}"


def valid_segment(segment: str) -> bool:
    """Whether one path part may be sent (encoded): not empty, not ``.``/``..``, no control characters."""
    return (
        0 < len(segment) <= MAX_SEGMENT_CHARS
        and segment not in (".", "..")
        and not any(ord(c) < 32 or c.isspace() or ord(c) == 127 for c in segment)
        and "/" not in segment
        and "\\" not in segment
    )


def target_of(url: str) -> Target | None:
    """The repository a URL points at on one of the three hosts, or None."""
    host = links.url_host(url)
    if host not in HOSTS:
        return None
    try:
        path = urlsplit(url if "://" in url else "https://" + url).path
    except ValueError:
        return None
    parts = [unquote(p) for p in path.split("/") if p]
    if host == GITHUB:
        repo = links.repo_of(url)
        parts = repo.split("/") if repo else []
    elif host == GITLAB:
        if "-" in parts:
            parts = parts[: parts.index("-")]
        else:  # old-style ``group/project/tree/main``: the project ends before the first route word
            routes = [i for i, p in enumerate(parts) if i >= 2 and p in _GITLAB_ROUTES]
            parts = parts[: routes[0]] if routes else parts
        if parts and parts[-1].lower().endswith(".git"):
            parts[-1] = parts[-1][:-4]
        if not 2 <= len(parts) <= MAX_GITLAB_DEPTH:
            return None
    else:
        prefix = ""
        if parts and parts[0] in _HF_PREFIXES:
            prefix = "" if parts[0] == "models" else parts[0] + "/"
            parts = parts[1:]
        if len(parts) < 2 or links.repo_of(url) == "":
            return None
        parts = parts[:2]
        return _checked(host, parts, prefix)
    if len(parts) != 2 and host == GITHUB:
        return None
    return _checked(host, parts, "")


def _checked(host: str, parts: list[str], prefix: str) -> Target | None:
    if not parts or not all(valid_segment(p) for p in parts):
        return None
    return Target(host, prefix + "/".join(parts))


def github_target(owner_repo: str) -> Target | None:
    """The target of a ``github_repo`` value (``owner/name``), or None when it is not one."""
    parts = owner_repo.split("/")
    return _checked(GITHUB, parts, "") if len(parts) == 2 else None


def paper_targets(papers: pd.DataFrame) -> pd.Series:
    """Per paper (same index), the cache key of its own repository, ``""`` when it has none to check.

    The paper's own repository is ``code_url`` (what `links.code_release` chose), else ``github_repo``.
    Each distinct value is parsed once, so this is cheap even at a million papers.
    """
    keys = np.full(len(papers), "", dtype=object)
    if "code_url" in papers.columns:
        urls = papers["code_url"].fillna("").astype(str).to_numpy()
        parsed = {u: target_of(u) for u in pd.unique(urls) if u}
        for row, url in enumerate(urls):
            target = parsed.get(url) if url else None
            if target is not None:
                keys[row] = target.key
    if "github_repo" in papers.columns:
        repos = papers["github_repo"].fillna("").astype(str).to_numpy()
        parsed_repos = {r: github_target(r) for r in pd.unique(repos) if r}
        for missing in np.flatnonzero(keys == ""):
            github = parsed_repos.get(repos[missing]) if repos[missing] else None
            if github is not None:
                keys[missing] = github.key
    return pd.Series(keys, index=papers.index, name="repo_key", dtype=object)


def target_table(papers: pd.DataFrame) -> tuple[dict[str, Target], pd.DataFrame]:
    """Every repository the papers link to, and which paper links which.

    Returns (targets by cache key, in order of first appearance; a frame of ``row`` (the paper's
    position) and ``key`` pairs, one per paper and repository). A paper's repositories are its own
    (``code_url``, ``github_repo``) and every code or data link on the three hosts.
    """
    found: dict[str, Target] = {}
    rows: list[int] = []
    keys: list[str] = []
    parsed: dict[str, Target | None] = {}

    def add(row: int, target: Target | None, seen: set[str]) -> None:
        if target is None or target.key in seen:
            return
        seen.add(target.key)
        found.setdefault(target.key, target)
        rows.append(row)
        keys.append(target.key)

    def parse(url: str) -> Target | None:
        if url not in parsed:
            parsed[url] = target_of(url)
        return parsed[url]

    def strings(column: str) -> np.ndarray | None:
        return papers[column].fillna("").astype(str).to_numpy() if column in papers.columns else None

    code_urls, github = strings("code_url"), strings("github_repo")
    all_links = papers["links"].to_numpy() if "links" in papers.columns else None
    for row in range(len(papers)):
        seen: set[str] = set()
        if code_urls is not None and code_urls[row]:
            add(row, parse(code_urls[row]), seen)
        if github is not None and github[row]:
            add(row, github_target(github[row]), seen)
        if all_links is not None:
            for url in _code_link_urls(all_links[row]):
                add(row, parse(url), seen)
    pairs = pd.DataFrame({"row": np.asarray(rows, dtype=np.int64), "key": pd.Series(keys, dtype=object)})
    return found, pairs


def targets_in(papers: pd.DataFrame) -> list[Target]:
    """Every distinct repository the papers link to (see `target_table`), in order of first appearance."""
    return list(target_table(papers)[0].values())


def _code_link_urls(paper_links: object) -> Iterable[str]:
    if isinstance(paper_links, dict):
        paper_links = [paper_links]
    if not isinstance(paper_links, list | tuple | np.ndarray):
        return ()
    return [
        str(link["url"])
        for link in paper_links
        if isinstance(link, dict) and link.get("url") and link.get("kind") in ("code", "data")
    ]
