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

import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from dashboard.repocheck.client import BudgetSpent, CheckError, Client, RateLimited, Stopped
from dashboard.repocheck.hosts import Host, host_of
from dashboard.repocheck.hosts.base import Trim
from dashboard.repocheck.states import Facts, Malformed
from dashboard.repocheck.store import DEFAULT_MAX_AGE_DAYS, Store, Stored, row_problem
from dashboard.repocheck.targets import Target

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

    @staticmethod
    def _api(target: Target) -> str:
        host = host_of(target.host)
        return host.api if host is not None else "unsupported:" + target.host

    # ------------------------------------------------------------------ one repository

    def check(self, target: Target) -> Facts:
        """Ask about one repository and store the answer; returns its facts.

        `RateLimited`, `BudgetSpent` and `Stopped` propagate (nothing is stored: it stays to do). Any
        other failure, whatever the answer held, is this repository's ``error`` with the reason.
        """
        answer = _Answer()
        moved_to = self._moved_to(target)
        host = host_of(target.host)
        try:
            if host is None:  # never sent down another host's path
                raise CheckError(f"unsupported host {target.host[:80]!r}")
            facts = host.check(self._asker(host, answer), target.repo, moved_to)
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

    def _asker(self, host: Host, answer: _Answer) -> Callable[[str, Trim, str], tuple[int, bytes, str]]:
        """The host's ``ask``: a GET of its API, conditional when the path was answered before."""

        def ask(path: str, trim: Trim, query: str) -> tuple[int, bytes, str]:
            stored = self.store.response(host.api, path)
            reply = self.client.get(host.api, path, etag=stored.etag if stored else "", query=query)
            if reply.status == 304:
                if stored is None:
                    raise CheckError("HTTP 304 to a request that was not conditional")
                return stored.status, stored.body, path
            body = reply.body
            if reply.status == 200:
                body = trim(body)
                if reply.etag:
                    answer.responses.append((host.api, path, Stored(reply.etag, 200, body)))
            return reply.status, body, reply.path

        return ask


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))
