"""The repository hosts a check can ask: one module per host, one entry each in `HOSTS`.

Each module states its API base variable, token variable, URL patterns and the documented answers
it parses, as a `Host` (`dashboard.repocheck.hosts.base`). Adding a host is one module and one entry
below; a host not listed is never asked (its repositories are an ``error`` saying "unsupported host").
"""

from __future__ import annotations

from dashboard.repocheck.hosts import codeberg, github, gitlab, huggingface
from dashboard.repocheck.hosts.base import Ask, Host

HOSTS: dict[str, Host] = {
    host.site: host for host in (github.HOST, gitlab.HOST, huggingface.HOST, codeberg.HOST)
}
BY_API: dict[str, Host] = {host.api: host for host in HOSTS.values()}


def host_of(site: str) -> Host | None:
    """The host of a web host name (``github.com``), or None when it is not one a check can ask."""
    return HOSTS.get(site)


def labels() -> str:
    """The hosts' names for people: ``GitHub, GitLab, Hugging Face and Codeberg``."""
    names = [host.label for host in HOSTS.values()]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


__all__ = ["BY_API", "HOSTS", "Ask", "Host", "host_of", "labels"]
