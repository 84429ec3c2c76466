"""Hostile and slow API answers against the local fake APIs (tests/repo_api.py): what each costs a
check, and how it ends (issue 56, items 3 and 4).

    python bench/repocheck_hostile.py                   # this tree's code
    python bench/repocheck_hostile.py --src OLD/src     # another version's, to compare

Prints one line per case: the wall time, and the outcome (the repositories' states and details, the
run's stop reason, or the exception that ended the run). Slow cases are scaled down (a byte every
0.25 s, ``Retry-After: 2``) with a request deadline of 3 s, so the whole script runs in about a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the package to measure")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(args.src))
    from repo_api import FakeRepo, World, serving

    from dashboard.repocheck.checker import Checker
    from dashboard.repocheck.client import Client, Settings
    from dashboard.repocheck.store import Store
    from dashboard.repocheck.targets import Target

    def body(**fields: object) -> bytes:
        return json.dumps({"full_name": "o/x", "stargazers_count": 3, "size": 90_000, **fields}).encode()

    cases: dict[str, dict[str, object]] = {
        "stars 2**70": {"raw": (200, {}, body(stargazers_count=2**70))},
        "100k nested [": {"raw": (200, {}, b"[" * 100_000)},
        "X-RateLimit-Reset: inf": {"raw": (200, {"X-RateLimit-Reset": "inf"}, body())},
        "X-RateLimit-Reset: 1e18": {"raw": (200, {"X-RateLimit-Reset": "1e18"}, body())},
        "Retry-After: 1e999": {"raw": (403, {"Retry-After": "1e999"}, b"{}")},
        "X-RateLimit-Remaining: 1e30": {"raw": (200, {"X-RateLimit-Remaining": "1e30"}, body())},
        "full_name acme": {"raw": (200, {}, body(full_name="acme"))},
        "full_name acme/..": {"raw": (200, {}, body(full_name="acme/.."))},
        "trickle 1 byte / 0.25 s": {"trickle": 0.25},
        "Retry-After: 2 on every answer (3 repos)": {"retry_after": "2"},
    }
    supports_deadline = "deadline" in Settings.__dataclass_fields__
    print(f"code: {args.src}  (request deadline {'3 s' if supports_deadline else 'none'})")
    for name, case in cases.items():
        world = World()
        targets = [Target("github.com", "o/x")]
        if "retry_after" in case:
            world.retry_after_always = str(case["retry_after"])
            targets = [Target("github.com", f"o/r{i}") for i in range(3)]
        else:
            fields = {k: v for k, v in case.items() if k in ("raw", "trickle")}
            world.add_github(FakeRepo("o/x", **fields))  # type: ignore[arg-type]
        with serving(world) as env, tempfile.TemporaryDirectory() as folder:
            options: dict[str, object] = {"timeout": 10.0, "max_in_flight": 1}
            if supports_deadline:
                options["deadline"] = 3.0
            checker = Checker(
                Store.open(Path(folder) / "c.sqlite"), Client(Settings.from_env(env, **options))
            )
            start = time.perf_counter()
            try:
                summary = checker.run(targets)
                with checker.store:
                    rows = checker.store.answers()
                found = "; ".join(
                    f"{s}: {d[:60]}" for s, d in zip(rows["state"], rows["detail"], strict=True)
                )
                outcome = found or f"nothing kept; {summary.left} left ({summary.stopped_because[:60]})"
            except BaseException as error:  # noqa: BLE001 - what ended the run is the figure
                outcome = f"the run ended: {type(error).__name__}"
            print(f"{name:<42} {time.perf_counter() - start:6.2f} s  {outcome}", flush=True)


if __name__ == "__main__":
    main()
