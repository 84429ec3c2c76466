"""Run a check: which repositories need asking, in what order of requests, and keeping every answer.

    checker = Checker(Store.open(path), Client(Settings.from_env(os.environ)))
    summary = checker.run(targets_in(papers))

A repository answered less than ``max_age_days`` ago is not asked again. Every request for a path
answered before carries its ETag (``If-None-Match``); a 304 reuses the stored body and costs
nothing against GitHub's rate limit. A repository known to have moved is asked under its new name,
so a re-check needs no unconditional redirect. Each answer is written as soon as it is known (one
transaction), so a stopped or killed run keeps everything it learned and the next run resumes.
"""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from dashboard.repocheck import states
from dashboard.repocheck.client import (
    GITHUB,
    GITLAB,
    HUGGINGFACE,
    BudgetSpent,
    CheckError,
    Client,
    RateLimited,
    Stopped,
    api_path,
)
from dashboard.repocheck.states import Facts, Malformed
from dashboard.repocheck.store import DEFAULT_MAX_AGE_DAYS, Store, Stored, row_problem
from dashboard.repocheck.targets import GITHUB as GITHUB_HOST
from dashboard.repocheck.targets import GITLAB as GITLAB_HOST
from dashboard.repocheck.targets import Target

API_OF = {GITHUB_HOST: GITHUB, GITLAB_HOST: GITLAB}
Progress = Callable[[int, int, "Target | None", "Facts | None"], None]


@dataclass
class Summary:
    """What a run did: states found, how many were fresh already, left, and why it stopped."""

    total: int = 0
    fresh: int = 0
    checked: int = 0
    left: int = 0
    states: Counter[str] = field(default_factory=Counter)
    stopped_because: str = ""
    resume_at: float | None = None
    waited: float = 0.0  # seconds spent waiting for rate limits

    @property
    def complete(self) -> bool:
        """Every repository has an answer that is not an error."""
        return self.left == 0 and self.states.get("error", 0) == 0


class _Answer:
    """The responses one repository's check produced, written with its facts in one transaction."""

    def __init__(self) -> None:
        self.responses: list[tuple[str, str, Stored]] = []


class Checker:
    """Checks targets against the APIs with bounded concurrency, keeping answers in a `Store`."""

    def __init__(self, store: Store, client: Client, *, max_age_days: float = DEFAULT_MAX_AGE_DAYS) -> None:
        self.store = store
        self.client = client
        self.max_age_days = max_age_days

    # ------------------------------------------------------------------ a whole run

    def pending(self, targets: Sequence[Target]) -> list[Target]:
        """The targets without a fresh answer, in the order given."""
        fresh = self.store.fresh_keys([t.key for t in targets], self.max_age_days)
        return [t for t in dict.fromkeys(targets) if t.key not in fresh]

    def run(self, targets: Sequence[Target], *, on_progress: Progress | None = None) -> Summary:
        """Check every target without a fresh answer; stops cleanly on a spent rate limit or budget.

        ``on_progress(done, total, target, facts)`` is called after each repository (from this thread).
        A KeyboardInterrupt stops the run after the answers in flight are written, then re-raises.
        """
        unique = list(dict.fromkeys(targets))
        todo = self.pending(unique)
        summary = Summary(total=len(unique), fresh=len(unique) - len(todo))
        if on_progress:
            on_progress(0, len(todo), None, None)
        run_deadline = self.client.settings.run_deadline
        self.client.run_ends = None if run_deadline is None else time.monotonic() + run_deadline
        limited: dict[str, float] = {}
        done = 0
        window = max(1, self.client.settings.max_in_flight)
        queue = iter(todo)
        in_flight: dict[Future[Facts], Target] = {}
        with ThreadPoolExecutor(max_workers=window, thread_name_prefix="repocheck") as pool:
            try:
                while True:
                    while len(in_flight) < window and not summary.stopped_because:
                        if self.client.run_ends is not None and time.monotonic() >= self.client.run_ends:
                            summary.stopped_because = f"the run's deadline of {run_deadline:g} s was reached"
                            break
                        target = next(queue, None)
                        if target is None:
                            break
                        if self._api(target) in limited:
                            summary.left += 1
                            continue
                        in_flight[pool.submit(self.check, target)] = target
                    if not in_flight:
                        break
                    finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in finished:
                        target = in_flight.pop(future)
                        facts = None
                        try:
                            facts = future.result()
                        except RateLimited as limit:
                            limited[limit.api] = limit.reset_at
                            summary.left += 1
                            summary.resume_at = max(summary.resume_at or 0.0, limit.reset_at)
                            if len(limited) == len({self._api(t) for t in todo}):
                                summary.stopped_because = str(limit)
                        except BudgetSpent as spent:
                            summary.left += 1
                            summary.stopped_because = str(spent)
                        except Stopped as stop:
                            summary.left += 1
                            summary.stopped_because = summary.stopped_because or str(stop)
                        else:
                            summary.checked += 1
                            summary.states[facts.state] += 1
                        done += 1
                        if on_progress:
                            on_progress(done, len(todo), target, facts)
            except KeyboardInterrupt:
                self.client.stop.set()
                for future in in_flight:
                    future.cancel()
                raise
            finally:
                summary.waited = self.client.counts.waits
                self.client.run_ends = None
                self.store.save_limits(self.client.limits())
        remaining = sum(1 for _ in queue)
        summary.left += remaining
        if limited and not summary.stopped_because:
            when = max(limited.values())
            summary.stopped_because = (
                f"rate limit of {', '.join(sorted(limited))} reached; resumes {_when(when)}"
            )
        return summary

    def _api(self, target: Target) -> str:
        return API_OF.get(target.host, HUGGINGFACE)

    # ------------------------------------------------------------------ one repository

    def check(self, target: Target) -> Facts:
        """Ask about one repository and store the answer; returns its facts.

        `RateLimited`, `BudgetSpent` and `Stopped` propagate (nothing is stored: it stays to do). Any
        other failure, whatever the answer held, is this repository's ``error`` with the reason.
        """
        answer = _Answer()
        moved_to = self._moved_to(target)
        try:
            if target.host == GITHUB_HOST:
                facts = self._github(target, answer, moved_to)
            elif target.host == GITLAB_HOST:
                facts = self._gitlab(target, answer, moved_to)
            else:
                facts = self._hub(target, answer, moved_to)
        except (CheckError, Malformed) as error:
            facts = Facts("error", detail=str(error))
        except (RateLimited, BudgetSpent, Stopped):
            raise
        except Exception as error:  # noqa: BLE001 - one answer never ends the run
            facts = Facts("error", detail=f"unreadable answer ({type(error).__name__})")
            answer.responses.clear()
        row = {
            "key": target.key,
            "host": target.host,
            "repo": target.repo,
            "state": facts.state,
            "stars": facts.stars,
            "license": facts.license,
            "created_at": facts.created_at,
            "pushed_at": facts.pushed_at,
            "moved_to": facts.moved_to,
            "detail": facts.detail,
            "checked_at": time.time(),
        }
        problem = row_problem(row)
        if problem:  # never keep what cannot be read back
            facts = Facts("error", detail=f"malformed answer ({problem})")
            row.update(state="error", stars=None, license="", created_at="", pushed_at="", moved_to="",
                       detail=facts.detail)  # fmt: skip
            answer.responses.clear()
        self.store.save_answer(row, answer.responses)
        return facts

    def _moved_to(self, target: Target) -> str:
        """The name a repository moved to, from its stored answer (a bad stored row is skipped)."""
        previous = self.store.answers([target.key])
        if len(previous) and previous["state"].iat[0] == "moved":
            return str(previous["moved_to"].iat[0])
        return ""

    def _get(
        self, answer: _Answer, api: str, path: str, trim: Callable[[bytes], bytes], query: str = ""
    ) -> tuple[int, bytes, str]:
        """(status, body, final path): conditional when the path was answered before; 304 reuses the body."""
        stored = self.store.response(api, path)
        reply = self.client.get(api, path, etag=stored.etag if stored else "", query=query)
        if reply.status == 304:
            if stored is None:
                raise CheckError("HTTP 304 to a request that was not conditional")
            return stored.status, stored.body, path
        body = reply.body
        if reply.status == 200:
            body = trim(body)
            if reply.etag:
                answer.responses.append((api, path, Stored(reply.etag, 200, body)))
        return reply.status, body, reply.path

    def _github(self, target: Target, answer: _Answer, moved_to: str) -> Facts:
        asked = moved_to or target.name
        owner, name = asked.split("/", 1)
        status, body, _ = self._get(answer, GITHUB, api_path("repos", owner, name), _trim_github_repo)
        early = states.from_status(status, GITHUB, states.message_of(body))
        if early is not None:
            return early
        facts, list_top = states.github_repository(states.parse_json(body, dict), asked)
        if moved_to and facts.state != "moved":
            return replace(facts, state="moved", moved_to=moved_to)
        if not list_top:
            return facts
        status, body, _ = self._get(
            answer, GITHUB, api_path("repos", owner, name, "contents", ""), _trim_listing
        )
        if status == 404:
            return facts.with_state("empty")  # "This repository is empty."
        early = states.from_status(status, GITHUB, states.message_of(body))
        if early is not None:
            return early
        entries = states.github_contents(states.parse_json(body, list))
        return self._from_top_level(facts, entries, lambda: self._github_readme(answer, owner, name))

    def _github_readme(self, answer: _Answer, owner: str, name: str) -> str | None:
        status, body, _ = self._get(answer, GITHUB, api_path("repos", owner, name, "readme"), _trim_readme)
        if status != 200:
            return None
        return states.github_readme(states.parse_json(body, dict))

    def _gitlab(self, target: Target, answer: _Answer, moved_to: str) -> Facts:
        asked = moved_to or target.name
        project = api_path("api", "v4", "projects", asked)
        status, body, final = self._get(answer, GITLAB, project, _trim_gitlab_project, query="license=true")
        early = states.from_status(status, GITLAB, states.message_of(body))
        if early is not None:
            return early
        data = states.parse_json(body, dict)
        facts, list_top = states.gitlab_project(data, asked)
        if moved_to and facts.state != "moved":
            return replace(facts, state="moved", moved_to=moved_to)
        if not list_top:
            return facts
        status, body, _ = self._get(answer, GITLAB, project + "/repository/tree", _trim_listing)
        if status == 404:
            return facts.with_state("empty")
        early = states.from_status(status, GITLAB, states.message_of(body))
        if early is not None:
            return early
        entries = states.gitlab_tree(states.parse_json(body, list))
        branch = data.get("default_branch") if isinstance(data.get("default_branch"), str) else "main"

        def readme() -> str | None:
            file_name = states.readme_name(entries)
            if not file_name:
                return None
            path = project + api_path("repository", "files", file_name, "raw")
            status, text, _ = self._get(
                answer, GITLAB, path, _trim_text, query="ref=" + quote(branch, safe="")
            )
            return text.decode("utf-8", "replace") if status == 200 else None

        return self._from_top_level(facts, entries, readme)

    def _hub(self, target: Target, answer: _Answer, moved_to: str) -> Facts:
        kind = target.kind
        asked = moved_to or target.name
        owner, name = asked.split("/", 1)
        status, body, _ = self._get(answer, HUGGINGFACE, api_path("api", kind + "s", owner, name), _trim_hub)
        early = states.from_status(status, HUGGINGFACE, states.message_of(body))
        if early is not None:
            return early
        facts, names = states.hub_repository(states.parse_json(body, dict), asked)
        if moved_to and facts.state != "moved":
            return replace(facts, state="moved", moved_to=moved_to)
        if facts.state != "live":
            return facts
        entries = states.hub_entries(names)
        prefix = () if kind == "model" else (kind + "s",)

        def readme() -> str | None:
            file_name = states.readme_name(entries)
            if not file_name:
                return None
            path = api_path(*prefix, owner, name, "resolve", "main", file_name)
            status, text, _ = self._get(answer, HUGGINGFACE, path, _trim_text)
            return text.decode("utf-8", "replace") if status == 200 else None

        return self._from_top_level(facts, entries, readme)

    @staticmethod
    def _from_top_level(
        facts: Facts, entries: list[tuple[str, bool]], readme: Callable[[], str | None]
    ) -> Facts:
        kind = states.top_level(entries)
        if kind == "empty":
            return facts.with_state("empty")
        if kind == "code":
            return facts
        text = readme()
        return facts.with_state("readme_only" if text is None else states.readme_state(text))


# ---------------------------------------------------------------------- what is kept of each answer
# Only the fields a state is decided from: a 304 reuses these, and the cache stays small.


def _json_subset(body: bytes, fields: Sequence[str]) -> bytes:
    try:
        value = states.json_value(body)
    except Malformed:
        return body  # kept as is: parsing it again gives the same "malformed" answer
    if not isinstance(value, dict):
        return body
    return json.dumps({k: value[k] for k in fields if k in value}, separators=(",", ":")).encode()


def _trim_github_repo(body: bytes) -> bytes:
    fields = ("full_name", "stargazers_count", "forks_count", "size", "archived", "fork", "license",
              "created_at", "pushed_at", "default_branch", "description")  # fmt: skip
    return _json_subset(body, fields)


def _trim_gitlab_project(body: bytes) -> bytes:
    fields = ("path_with_namespace", "star_count", "forks_count", "archived", "empty_repo", "license",
              "created_at", "last_activity_at", "default_branch", "description")  # fmt: skip
    return _json_subset(body, fields)


def _trim_hub(body: bytes) -> bytes:
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
                top[first + ("/x" if slash else "")] = None  # "/x": a folder, as `hub_entries` reads it
        kept["siblings"] = [{"rfilename": name} for name in top]
    return json.dumps(kept, separators=(",", ":")).encode()


def _trim_listing(body: bytes) -> bytes:
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


def _trim_readme(body: bytes) -> bytes:
    try:
        value = states.json_value(body)
        text = states.github_readme(value) if isinstance(value, dict) else None
    except Malformed:
        return body
    if text is None:
        return body
    return json.dumps({"encoding": "base64", "content": base64.b64encode(text.encode()).decode()}).encode()


def _trim_text(body: bytes) -> bytes:
    return body[: states.README_CHARS * 4]


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))
