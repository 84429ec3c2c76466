"""A real HTTP server (threaded, on a free port) that plays the GitHub, GitLab, Hugging Face and
Codeberg (Forgejo/Gitea API v1) APIs.

One server, four API bases under it: ``/github`` (GitHub Enterprise keeps its API under a path too,
``/api/v3``), ``/gitlab``, ``/hf`` and ``/codeberg/api/v1``. Answers follow the documented shapes and
status codes:

- GitHub REST: ``GET /repos/{owner}/{repo}`` (``full_name``, ``stargazers_count``, ``size``,
  ``archived``, ``license.spdx_id``, ``created_at``, ``pushed_at``, ...), a renamed repository
  answers ``301`` with ``Location: .../repositories/{id}``; ``/contents/`` lists the top level
  (``404 {"message": "This repository is empty."}`` when empty); ``/readme`` gives base64
  ``content``; every answer has ``X-RateLimit-Remaining``/``-Reset``; a spent budget answers ``403``
  with ``X-RateLimit-Remaining: 0``; ``If-None-Match`` with the current ``ETag`` answers ``304``,
  which does not spend the budget.
- GitLab: ``GET /api/v4/projects/{url-encoded path}`` (``path_with_namespace``, ``star_count``,
  ``empty_repo``, ``archived``, ``last_activity_at``, ``license``), ``/repository/tree``,
  ``/repository/files/{file}/raw?ref=``; a moved project answers ``301`` to ``/api/v4/projects/{id}``.
- Hugging Face: ``GET /api/{models,datasets,spaces}/{id}`` (``id``, ``likes``, ``siblings``,
  ``cardData``, ``lastModified``, ``disabled``), ``401`` for a missing repository,
  ``/{id}/resolve/main/README.md`` for the card.
- Codeberg (Forgejo/Gitea API v1): ``GET /repos/{owner}/{repo}`` (``full_name``, ``empty``,
  ``archived``, ``stars_count``, ``created_at``, ``updated_at``, ``default_branch``, ``mirror``,
  ``original_url``, ...); a renamed repository answers ``307`` to its new name (what Gitea's
  ``RedirectToRepo`` does); ``/contents?ref=BRANCH`` lists the top level (``type`` ``file`` or ``dir``)
  and ``/contents/{file}?ref=BRANCH`` gives a file as base64 ``content``; errors are
  ``{"message": ..., "url": ...}``.

`World` holds the repositories; tests add what they need, ``auto=True`` makes one up for any name
(the benchmark's 5,000 repositories). ``world.requests`` logs what arrived (raw path, headers).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class FakeRepo:
    """One repository as the fake APIs know it."""

    name: str  # owner/name (GitHub), group/.../project (GitLab), owner/name (Hub)
    files: list[str] | None = field(default_factory=lambda: ["README.md", "LICENSE", "train.py", "src/"])
    readme: str | None = "# A method\n\nRun `python train.py`.\n"
    size: int = 120
    archived: bool = False
    stars: int = 7
    license: str | None = "MIT"
    created: str = "2023-02-03T04:05:06Z"
    pushed: str = "2024-06-07T08:09:10Z"
    status: int = 200  # anything else: answered forever (404, 451, 403, 500)
    fail_first: int = 0  # answer 502 to the first n requests for the repository itself
    malformed: bool = False
    slow: float = 0.0
    huge: str = ""  # "length": a huge Content-Length; "stream": a huge body with no length
    moved_to: str = ""
    disabled: bool = False
    repo_id: int = 0
    raw: tuple[int, dict[str, str], bytes] | None = None  # answered as is: status, headers, body
    trickle: float = 0.0  # seconds between the bytes of the answer (a server that never times out a read)
    trickle_headers: bool = False  # trickle from the status line on, not only the body
    mirror_of: str = ""  # Codeberg: a pull mirror of this URL (``mirror``, ``original_url``)


@dataclass
class Logged:
    """One request as it arrived."""

    api: str
    raw_path: str
    headers: dict[str, str]
    status: int


class World:
    """The repositories, the rate budget and the log of one fake server."""

    def __init__(self, *, auto: bool = False) -> None:
        self.auto = auto
        self.github: dict[str, FakeRepo] = {}
        self.gitlab: dict[str, FakeRepo] = {}
        self.hub: dict[tuple[str, str], FakeRepo] = {}
        self.codeberg: dict[str, FakeRepo] = {}
        self.by_id: dict[int, FakeRepo] = {}
        self.budget: int | None = None  # GitHub requests left before a 403 rate limit; None: no limit
        self.reset_in = 3600
        self.delay = 0.0  # seconds before every answer (a slow API, to interrupt a run in the middle)
        self.retry_after_once = False  # a secondary rate limit: one 403 with Retry-After: 1
        self.retry_after_always = ""  # a 403 with this Retry-After to every GitHub request
        self.requests: list[Logged] = []
        self.lock = threading.Lock()
        self._failures: dict[str, int] = {}
        self._next_id = 1000

    def add_github(self, repo: FakeRepo) -> FakeRepo:
        """Serve ``repo`` on the GitHub API (and its new name too, when it moved)."""
        self._next_id += 1
        repo.repo_id = self._next_id
        self.github[repo.name.lower()] = repo
        self.by_id[repo.repo_id] = repo
        return repo

    def add_gitlab(self, repo: FakeRepo) -> FakeRepo:
        """Serve ``repo`` on the GitLab API."""
        self._next_id += 1
        repo.repo_id = self._next_id
        self.gitlab[repo.name.lower()] = repo
        self.by_id[repo.repo_id] = repo
        return repo

    def add_hub(self, kind: str, repo: FakeRepo) -> FakeRepo:
        """Serve ``repo`` on the Hub as a ``model``, ``dataset`` or ``space``."""
        self.hub[(kind, repo.name.lower())] = repo
        return repo

    def add_codeberg(self, repo: FakeRepo) -> FakeRepo:
        """Serve ``repo`` on the Codeberg (Forgejo) API."""
        self._next_id += 1
        repo.repo_id = self._next_id
        self.codeberg[repo.name.lower()] = repo
        return repo

    def made_up(self, name: str) -> FakeRepo:
        """A repository for any name (``auto``): mostly live, some of every other state, stable per name."""
        number = int(hashlib.sha256(name.lower().encode()).hexdigest()[:8], 16) % 100
        repo = FakeRepo(name=name, stars=number * 3)
        if number < 6:
            repo.status = 404
        elif number < 9:
            repo.files, repo.size = [], 0
        elif number < 14:
            repo.files, repo.readme, repo.size = ["README.md", "LICENSE"], "# Paper\n\nCode coming soon.\n", 4
        elif number < 17:
            repo.files, repo.readme, repo.size = ["README.md"], "# Paper\n\nSee the paper.\n", 2
        elif number < 20:
            repo.archived = True
        elif number < 30:
            repo.size = 50_000  # large: decided from its metadata alone
        return repo

    def fail_once(self, key: str, times: int) -> bool:
        """True while ``key`` still has failures to give."""
        with self.lock:
            done = self._failures.get(key, 0)
            if done < times:
                self._failures[key] = done + 1
                return True
        return False

    def spend(self) -> tuple[bool, int]:
        """(allowed, remaining after): one request from the GitHub budget."""
        with self.lock:
            if self.budget is None:
                return True, 4999
            if self.budget <= 0:
                return False, 0
            self.budget -= 1
            return True, self.budget

    def log(self, entry: Logged) -> None:
        """Remember a request."""
        with self.lock:
            self.requests.append(entry)


DOCS = "https://docs.github.com/rest"


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    world: World  # set on the subclass made per server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence the default log
        return

    # ------------------------------------------------------------------ answering

    def _send(self, status: int, body: bytes | None, *, extra: dict[str, str] | None = None,
              etag: bool = True, api: str = "") -> None:  # fmt: skip
        headers = dict(extra or {})
        if body is not None and status == 200 and etag:
            tag = _etag(body)
            headers["ETag"] = tag
            if self.headers.get("If-None-Match") == tag:
                status, body = 304, None
        if api == "github":
            if status != 304 and "X-RateLimit-Remaining" not in headers:
                allowed, remaining = self.world.spend()
                if not allowed:
                    status = 403
                    message = {"message": "API rate limit exceeded for 127.0.0.1.", "documentation_url": DOCS}
                    body = json.dumps(message).encode()
                headers["X-RateLimit-Remaining"] = str(remaining)
            headers.setdefault("X-RateLimit-Limit", "5000")
            headers.setdefault("X-RateLimit-Reset", str(int(time.time()) + self.world.reset_in))
        self.world.log(Logged(api, self.path, {k.lower(): v for k, v in self.headers.items()}, status))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        payload = body or b""
        if status != 304:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)) if status != 304 else "0")
        self.end_headers()
        if status != 304:
            with contextlib.suppress(OSError):
                self.wfile.write(payload)

    def _json(self, status: int, value: object, api: str, **options: object) -> None:
        self._send(status, json.dumps(value).encode(), api=api, **options)  # type: ignore[arg-type]

    def _trickle(self, repo: FakeRepo, api: str) -> None:
        """A whole answer a byte at a time, ``repo.trickle`` seconds apart, until the client hangs up."""
        self.world.log(Logged(api, self.path, {}, 200))
        body = json.dumps({"full_name": repo.name, "stargazers_count": 1, "size": 90_000}).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        with contextlib.suppress(OSError):
            if not repo.trickle_headers:
                self.wfile.write(head.encode())
                head = ""
            for byte in head.encode() + body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(repo.trickle)
        self.close_connection = True

    def _special(self, repo: FakeRepo, api: str, key: str) -> bool:
        """Answer the failure modes of a repository; True when answered."""
        if repo.slow:
            time.sleep(repo.slow)
        if repo.raw is not None:
            status, headers, body = repo.raw
            self._send(status, body, extra=headers, api=api)
            return True
        if repo.trickle:
            self._trickle(repo, api)
            return True
        if repo.fail_first and self.world.fail_once(key, repo.fail_first):
            self._json(502, {"message": "Server Error"}, api)
            return True
        if repo.huge == "length":
            self.world.log(Logged(api, self.path, {}, 200))
            self.send_response(200)
            self.send_header("Content-Length", str(50_000_000))
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(50):
                    self.wfile.write(b" " * 1_000_000)
            self.close_connection = True
            return True
        if repo.huge == "stream":
            self.world.log(Logged(api, self.path, {}, 200))
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(b'{"full_name": "')
                for _ in range(50):
                    self.wfile.write(b"x" * 1_000_000)
            self.close_connection = True
            return True
        if repo.malformed:
            self._send(200, b'{"full_name": "oops", "stargazers_count": ', api=api)
            return True
        if repo.status != 200:
            message = {404: "Not Found", 451: "Repository access blocked", 403: "Repository access blocked"}
            self._json(repo.status, {"message": message.get(repo.status, "Server Error")}, api)
            return True
        return False

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        split = urlsplit(self.path)
        raw_parts = split.path.split("/")[1:]
        if not raw_parts:
            self._json(404, {"message": "Not Found"}, "")
            return
        if self.world.delay:
            time.sleep(self.world.delay)
        api, rest = raw_parts[0], [unquote(p) for p in raw_parts[1:]]
        if any(p in (".", "..") for p in rest):
            self._json(400, {"message": "Bad path"}, api)
            return
        if api == "github" and self.world.retry_after_once:
            self.world.retry_after_once = False
            self._json(403, {"message": "You have exceeded a secondary rate limit."}, api,
                       extra={"Retry-After": "1", "X-RateLimit-Remaining": "4000"})  # fmt: skip
            return
        if api == "github" and self.world.retry_after_always:
            self._json(403, {"message": "You have exceeded a secondary rate limit."}, api,
                       extra={"Retry-After": self.world.retry_after_always})  # fmt: skip
            return
        handler = {"github": self._github, "gitlab": self._gitlab, "hf": self._hub,
                   "codeberg": self._codeberg}.get(api)  # fmt: skip
        if handler is None:
            self._json(404, {"message": "Not Found"}, "")
            return
        handler(rest, split.query)

    # ------------------------------------------------------------------ GitHub

    def _github_repo(self, owner: str, name: str) -> FakeRepo | None:
        full = f"{owner}/{name}"
        repo = self.world.github.get(full.lower())
        if repo is None and self.world.auto:
            repo = self.world.made_up(full)
            with self.world.lock:
                self.world.github.setdefault(full.lower(), repo)
        return repo

    def _github(self, parts: list[str], query: str) -> None:
        api = "github"
        if len(parts) >= 2 and parts[0] == "repositories" and parts[1].isdigit():
            repo = self.world.by_id.get(int(parts[1]))
            if repo is None:
                self._json(404, {"message": "Not Found"}, api)
                return
            self._github_answer(repo, parts[2:], moved=True)
            return
        if len(parts) < 3 or parts[0] != "repos":
            self._json(404, {"message": "Not Found"}, api)
            return
        repo = self._github_repo(parts[1], parts[2])
        if repo is None:
            self._json(404, {"message": "Not Found"}, api)
            return
        if repo.moved_to:
            location = f"/github/repositories/{repo.repo_id}" + "".join("/" + p for p in parts[3:])
            self._json(
                301, {"message": "Moved Permanently", "url": location}, api, extra={"Location": location}
            )
            return
        self._github_answer(repo, parts[3:], moved=False)

    def _github_answer(self, repo: FakeRepo, rest: list[str], *, moved: bool) -> None:
        api = "github"
        if not rest:
            if self._special(repo, api, "github:" + repo.name):
                return
            spdx = (
                {"key": repo.license.lower(), "spdx_id": repo.license, "name": repo.license}
                if repo.license
                else None
            )
            self._json(200, {
                "id": repo.repo_id, "name": (repo.moved_to or repo.name).split("/")[1],
                "full_name": repo.moved_to or repo.name, "private": False, "fork": False,
                "description": "A method", "size": repo.size, "stargazers_count": repo.stars,
                "watchers_count": repo.stars, "forks_count": 1, "archived": repo.archived,
                "disabled": False, "license": spdx, "default_branch": "main",
                "created_at": repo.created, "updated_at": repo.pushed, "pushed_at": repo.pushed,
                "html_url": f"https://github.com/{repo.moved_to or repo.name}",
            }, api)  # fmt: skip
            return
        if rest == ["contents", ""] or rest == ["contents"]:
            if not repo.files:
                self._json(404, {"message": "This repository is empty.",
                                 "documentation_url": "https://docs.github.com/rest"}, api)  # fmt: skip
                return
            items = [
                {"name": f.rstrip("/"), "path": f.rstrip("/"), "type": "dir" if f.endswith("/") else "file"}
                for f in repo.files
            ]
            self._json(200, items, api)
            return
        if rest == ["readme"]:
            if (
                repo.readme is None
                or not repo.files
                or not any(f.lower().startswith("readme") for f in repo.files)
            ):
                self._json(404, {"message": "Not Found"}, api)
                return
            content = base64.b64encode(repo.readme.encode()).decode()
            wrapped = "\n".join(content[i : i + 60] for i in range(0, len(content), 60))
            self._json(200, {"type": "file", "encoding": "base64", "name": "README.md", "path": "README.md",
                             "content": wrapped}, api)  # fmt: skip
            return
        self._json(404, {"message": "Not Found"}, api)

    # ------------------------------------------------------------------ GitLab

    def _gitlab(self, parts: list[str], query: str) -> None:
        api = "gitlab"
        if len(parts) < 4 or parts[:3] != ["api", "v4", "projects"]:
            self._json(404, {"message": "404 Not Found"}, api)
            return
        ident, rest = parts[3], parts[4:]
        if ident.isdigit():
            repo = self.world.by_id.get(int(ident))
        else:
            repo = self.world.gitlab.get(ident.lower())
            if repo is not None and repo.moved_to:
                location = f"/gitlab/api/v4/projects/{repo.repo_id}"
                self._json(301, {"message": "301 Moved Permanently"}, api, extra={"Location": location})
                return
        if repo is None:
            self._json(404, {"message": "404 Project Not Found"}, api)
            return
        if not rest:
            if self._special(repo, api, "gitlab:" + repo.name):
                return
            body: dict[str, object] = {
                "id": repo.repo_id, "path_with_namespace": repo.moved_to or repo.name,
                "description": "A method", "default_branch": "main", "star_count": repo.stars,
                "forks_count": 0, "archived": repo.archived, "empty_repo": not repo.files,
                "created_at": repo.created, "last_activity_at": repo.pushed,
                "web_url": f"https://gitlab.com/{repo.name}",
            }  # fmt: skip
            if "license=true" in query:
                body["license"] = (
                    {"key": repo.license.lower(), "name": repo.license} if repo.license else None
                )
            self._json(200, body, api)
            return
        if rest == ["repository", "tree"]:
            tree = [
                {"name": f.rstrip("/"), "type": "tree" if f.endswith("/") else "blob", "path": f.rstrip("/")}
                for f in repo.files or []
            ]
            self._json(200, tree, api)
            return
        if len(rest) == 4 and rest[:2] == ["repository", "files"] and rest[3] == "raw":
            if repo.readme is None or rest[2] not in (repo.files or []):
                self._json(404, {"message": "404 File Not Found"}, api)
                return
            self._send(200, repo.readme.encode(), api=api)
            return
        self._json(404, {"message": "404 Not Found"}, api)

    # ------------------------------------------------------------------ Hugging Face

    def _hub(self, parts: list[str], query: str) -> None:
        api = "hf"
        if len(parts) == 4 and parts[0] == "api" and parts[1] in ("models", "datasets", "spaces"):
            kind = parts[1][:-1]
            repo = self.world.hub.get((kind, f"{parts[2]}/{parts[3]}".lower()))
            if repo is None:
                self._json(
                    401, {"error": "Repository Not Found"}, api, extra={"X-Error-Code": "RepoNotFound"}
                )
                return
            if self._special(repo, api, f"hf:{kind}:{repo.name}"):
                return
            siblings = [{"rfilename": f.rstrip("/") + ("/weights.bin" if f.endswith("/") else "")}
                        for f in repo.files or []]  # fmt: skip
            self._json(200, {
                "_id": "0" * 24, "id": repo.moved_to or repo.name, "author": repo.name.split("/")[0],
                "likes": repo.stars, "downloads": 10, "private": False, "gated": False,
                "disabled": repo.disabled, "createdAt": repo.created, "lastModified": repo.pushed,
                "tags": [f"license:{repo.license.lower()}"] if repo.license else [],
                "cardData": {"license": repo.license.lower()} if repo.license else {},
                "siblings": [{"rfilename": ".gitattributes"}, *siblings],
            }, api)  # fmt: skip
            return
        prefix_kind = {"datasets": "dataset", "spaces": "space"}
        kind = prefix_kind.get(parts[0], "model") if parts else "model"
        names = parts[1:] if kind != "model" else parts
        if len(names) == 5 and names[2:4] == ["resolve", "main"]:
            repo = self.world.hub.get((kind, f"{names[0]}/{names[1]}".lower()))
            if repo is None or repo.readme is None or names[4] not in (repo.files or []):
                self._json(404, {"error": "Entry not found"}, api)
                return
            self._send(200, repo.readme.encode(), api=api)
            return
        self._json(404, {"error": "Not Found"}, api)

    # ------------------------------------------------------------------ Codeberg (Forgejo/Gitea API v1)

    def _codeberg(self, parts: list[str], query: str) -> None:
        api = "codeberg"
        docs = "https://codeberg.org/api/swagger"
        if len(parts) < 5 or parts[:3] != ["api", "v1", "repos"]:
            self._json(404, {"message": "The target couldn't be found.", "url": docs, "errors": []}, api)
            return
        owner, name, rest = parts[3], parts[4], parts[5:]
        repo = self.world.codeberg.get(f"{owner}/{name}".lower())
        if repo is None:
            self._json(404, {"message": "The target couldn't be found.", "url": docs, "errors": []}, api)
            return
        if repo.moved_to:  # Gitea's RedirectToRepo: the same path and query under the new name
            location = "/codeberg/api/v1/repos/" + "/".join([*repo.moved_to.split("/"), *rest])
            location += ("?" + query) if query else ""
            self._send(307, b"", extra={"Location": location}, api=api)
            return
        if not rest:
            if self._special(repo, api, "codeberg:" + repo.name):
                return
            self._json(200, {
                "id": repo.repo_id, "owner": {"id": 1, "login": repo.name.split("/")[0]},
                "name": repo.name.split("/")[1], "full_name": repo.name, "description": "A method",
                "empty": not repo.files, "private": False, "fork": False, "template": False,
                "mirror": bool(repo.mirror_of), "original_url": repo.mirror_of, "size": repo.size,
                "html_url": f"https://codeberg.org/{repo.name}", "stars_count": repo.stars,
                "forks_count": 0, "watchers_count": 1, "open_issues_count": 0,
                "default_branch": "trunk", "archived": repo.archived, "created_at": repo.created,
                "updated_at": repo.pushed, "has_issues": True,
            }, api)  # fmt: skip
            return
        if rest[0] != "contents" or "ref=trunk" not in query.split("&"):
            self._json(404, {"message": "The target couldn't be found.", "url": docs, "errors": []}, api)
            return
        if len(rest) == 1:
            items = [
                {"name": f.rstrip("/"), "path": f.rstrip("/"), "sha": "0" * 40, "size": 0,
                 "type": "dir" if f.endswith("/") else "file", "encoding": None, "content": None}
                for f in repo.files or []
            ]  # fmt: skip
            self._json(200, items, api)
            return
        if len(rest) == 2 and repo.readme is not None and rest[1] in (repo.files or []):
            self._json(200, {
                "name": rest[1], "path": rest[1], "sha": "0" * 40, "type": "file", "size": len(repo.readme),
                "encoding": "base64", "content": base64.b64encode(repo.readme.encode()).decode(),
            }, api)  # fmt: skip
            return
        self._json(404, {"message": "object does not exist", "url": docs, "errors": []}, api)


@contextlib.contextmanager
def serving(world: World) -> Iterator[dict[str, str]]:
    """Run the fake APIs on a free port until the block ends; yields the environment pointing at them."""
    handler = type("Handler", (_Handler,), {"world": world})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield {
            "GITHUB_API_URL": f"{base}/github",
            "GITLAB_API_URL": f"{base}/gitlab",
            "HF_ENDPOINT": f"{base}/hf",
            "CODEBERG_API_URL": f"{base}/codeberg/api/v1",
        }
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
