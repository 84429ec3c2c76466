"""What to check: the repositories a paper links to on the hosts a check can ask
(`dashboard.repocheck.hosts`: GitHub, GitLab, Hugging Face, Codeberg).

A `Target` is a host and a repository path, never a URL to fetch: the client builds the request
from the configured API base and the URL-encoded path segments, so a link in an abstract cannot
make the checker reach any other host. Which URLs name a repository is each host's ``repo_of``.

    >>> target_of("https://github.com/Owner/Repo/tree/main/src")
    Target(host='github.com', repo='Owner/Repo')
    >>> target_of("https://huggingface.co/spaces/org/demo").repo
    'spaces/org/demo'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd

from dashboard.repocheck.hosts import HOSTS as _REGISTRY
from dashboard.repocheck.hosts import host_of
from dashboard.repocheck.states import MAX_SEGMENT_CHARS, valid_segment
from dashboard.text import links

GITHUB = "github.com"
HOSTS: tuple[str, ...] = tuple(_REGISTRY)
__all__ = ["GITHUB", "HOSTS", "MAX_SEGMENT_CHARS", "Target", "github_target", "paper_targets", "target_of",
           "target_table", "targets_in", "valid_segment"]  # fmt: skip


@dataclass(frozen=True, order=True)
class Target:
    """One repository to check: ``host`` (a site in `HOSTS`) and its path there, as the host's
    ``repo_of`` gives it (``owner/name`` on GitHub and Codeberg, ``group/.../project`` on GitLab,
    ``owner/name``, ``datasets/owner/name`` or ``spaces/owner/name`` on Hugging Face)."""

    host: str
    repo: str

    @property
    def key(self) -> str:
        """The cache key: host and path, lowercase (every host ignores case in names)."""
        return f"{self.host}/{self.repo}".lower()

    @property
    def url(self) -> str:
        """The repository's page, for people (never fetched)."""
        return f"https://{self.host}/{self.repo}"


def target_of(url: str) -> Target | None:
    """The repository a URL points at on one of the hosts a check can ask, or None."""
    site = links.url_host(url)
    host = host_of(site)
    if host is None:
        return None
    try:
        path = urlsplit(url if "://" in url else "https://" + url).path
    except ValueError:
        return None
    repo = host.repo_of(url, [unquote(p) for p in path.split("/") if p])
    return Target(site, repo) if repo else None


def github_target(owner_repo: str) -> Target | None:
    """The target of a ``github_repo`` value (``owner/name``), or None when it is not one."""
    parts = owner_repo.split("/")
    if len(parts) != 2 or not all(valid_segment(p) for p in parts):
        return None
    return Target(GITHUB, owner_repo)


def paper_targets(papers: pd.DataFrame) -> pd.Series:
    """Per paper (same index), the cache key of its own repository, ``""`` when it has none to check.

    The paper's own repository is ``code_url`` (what `links.code_release` chose), else ``github_repo``.
    Each distinct value is parsed once, so this is cheap even at a million papers.
    """
    keys = np.full(len(papers), "", dtype=object)
    for column, parse in (("code_url", target_of), ("github_repo", github_target)):
        if column not in papers.columns:
            continue
        codes, distinct = pd.factorize(papers[column].fillna("").astype(str).to_numpy(dtype=object))
        parsed = [parse(value) if value else None for value in distinct]
        found = np.array([t.key if t is not None else "" for t in parsed] + [""], dtype=object)[codes]
        keys = np.where(keys == "", found, keys)
    return pd.Series(keys, index=papers.index, name="repo_key", dtype=object)


def target_table(
    papers: pd.DataFrame, link_table: pd.DataFrame | None = None
) -> tuple[dict[str, Target], pd.DataFrame]:
    """Every repository the papers link to, and which paper links which.

    Returns (targets by cache key, in order of first appearance; a frame of ``row`` (the paper's
    position) and ``key`` pairs, one per paper and repository). A paper's repositories are its own
    (``code_url``, ``github_repo``) and every code or data link on the hosts a check can ask. ``link_table``
    (row, url, kind, host per link, as the app keeps it) saves walking the links again; each
    distinct URL is parsed once, so a million papers cost about what their distinct links do.
    """
    pieces: list[pd.DataFrame] = []

    def piece(rows: np.ndarray, urls: np.ndarray, order: int) -> None:
        pieces.append(pd.DataFrame({"row": rows.astype(np.int64), "url": urls, "order": order}))

    for order, column in enumerate(("code_url", "github_repo")):
        if column not in papers.columns:
            continue
        values = papers[column].fillna("").astype(str).to_numpy(dtype=object)
        rows = np.flatnonzero(values != "")
        urls = values[rows]
        if column == "github_repo":
            urls = np.array([f"https://{GITHUB}/{v}" for v in urls], dtype=object)
        piece(rows, urls, order)
    if link_table is None and "links" in papers.columns:
        rows_list: list[int] = []
        urls_list: list[str] = []
        for row, paper_links in enumerate(papers["links"].to_numpy()):
            for url in _code_link_urls(paper_links):
                rows_list.append(row)
                urls_list.append(url)
        piece(np.asarray(rows_list, dtype=np.int64), np.asarray(urls_list, dtype=object), 2)
    elif link_table is not None and len(link_table):
        kinds, hosts = link_table["kind"], link_table["host"]
        wanted = kinds.isin(["code", "data"]).to_numpy() & hosts.isin(list(HOSTS)).to_numpy()
        piece(link_table["row"].to_numpy()[wanted], link_table["url"].to_numpy(dtype=object)[wanted], 2)
    if not pieces:
        return {}, pd.DataFrame({"row": np.zeros(0, dtype=np.int64), "key": pd.Series([], dtype=object)})
    frame = pd.concat(pieces, ignore_index=True)
    codes, distinct = pd.factorize(frame["url"].to_numpy(dtype=object))
    parsed = [target_of(url) for url in distinct]
    keys = np.array([t.key if t is not None else "" for t in parsed], dtype=object)
    frame["key"] = keys[codes] if len(codes) else np.zeros(0, dtype=object)
    frame["target"] = codes
    frame = frame[frame["key"] != ""].sort_values(["row", "order"], kind="stable")
    frame = frame.drop_duplicates(["row", "key"])
    found: dict[str, Target] = {}
    for key, code in zip(frame["key"].to_numpy(), frame["target"].to_numpy(), strict=True):
        if key not in found:
            target = parsed[code]
            assert target is not None
            found[key] = target
    rows_out, keys_out = frame["row"].to_numpy(dtype=np.int64), frame["key"].to_numpy(dtype=object)
    pairs = pd.DataFrame({"row": rows_out, "key": pd.Series(keys_out, dtype=object)})
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
