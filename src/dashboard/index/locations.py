"""Where an index build reads and writes: local paths, or any fsspec URL (``s3://``, ``gs://``, ``file://``).

    paper-dashboard index s3://bucket/abstracts/ --out s3://bucket/papers.index --dask tcp://sched:8786

A URL input is read by whoever runs the read task (a Dask worker, or this process): the file is
copied to a temporary folder under its own name and read from there, so it gets the format, the
``source`` column and the load report a local copy of the same file gets. A URL folder is read one
level deep, sorted, as a local folder is: hidden entries, entries without a supported extension and
README/LICENSE-like files are passed over. ``s3://`` needs the optional ``s3fs`` package (``gs://``:
``gcsfs``); credentials come from the usual places of that package (environment, config files), never
from the command line.

An index is built in a local temporary folder, then published: a local ``--out`` by two renames, a URL
by uploading to ``<out>.partial-<pid>`` (``manifest.json`` last) and moving that into place. A reader
knows an index by its manifest, so an interrupted upload never looks like a complete index.

fsspec is imported only when a URL is given (it comes with the ``[dask]`` extra).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from dashboard import corpus

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_IGNORED = re.compile(r"^(?:readme|license|licence|changelog|notice|copying)\b", re.I)

Input = Path | corpus.FileReport | str  # a local file, a report made already, a URL of one file


def is_url(location: str | Path) -> bool:
    """True for ``scheme://...`` (fsspec URLs); False for local paths (a Path is always local)."""
    return isinstance(location, str) and bool(_URL.match(location))


def _filesystem(url: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with dask; the default install has neither
        raise ImportError(
            f"{url}: reading or writing URLs needs fsspec: pip install 'paper-dashboard[dask]'"
        ) from None
    return fsspec.core.url_to_fs(url)


def _wanted(name: str) -> bool:
    if name.startswith(".") or _IGNORED.match(name):
        return False
    lower = name.lower().removesuffix(".gz")
    return any(lower.endswith(suffix) for suffix in corpus.SUPPORTED_SUFFIXES if suffix != ".gz")


def input_files(paths: Iterable[str | Path]) -> list[Input]:
    """What the build reads, in order: local paths as `corpus.input_files` expands them, URLs by fsspec.

    A missing URL becomes a report saying so (as a missing local path does).
    """
    items: list[Input] = []
    for path in paths:
        if not is_url(path):
            items.extend(corpus.input_files([path]))
            continue
        url = str(path)
        fs, root = _filesystem(url)
        protocol = url.split("://", 1)[0]
        if not fs.exists(root):
            missing = corpus.Problem(url, "", "no such file or folder")
            items.append(corpus.FileReport(url, "missing", None, 0, skipped=[missing]))
        elif fs.isdir(root):
            entries = sorted(entry for entry in fs.ls(root, detail=False) if fs.isfile(entry))
            items.extend(f"{protocol}://{entry}" for entry in entries if _wanted(PurePosixPath(entry).name))
        else:
            items.append(url)
    return items


def digest(items: Sequence[Input]) -> str:
    """SHA-256 of the names and contents of the files read (as `corpus.digest_paths`), streamed."""
    hashed = hashlib.sha256()
    for item in items:
        if isinstance(item, corpus.FileReport):
            continue
        name = PurePosixPath(item).name if isinstance(item, str) else item.name
        hashed.update(name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with _open(item) as handle:
                while chunk := handle.read(1 << 20):
                    hashed.update(chunk)
        except OSError as error:
            hashed.update(f"unreadable:{error.errno}".encode())
        hashed.update(b"\0")
    return hashed.hexdigest()


def _open(item: str | Path) -> Any:
    if isinstance(item, Path):
        return open(item, "rb")  # noqa: SIM115 (the caller's with closes it)
    fs, root = _filesystem(item)
    return fs.open(root, "rb")


@contextlib.contextmanager
def local_copy(source: str) -> Iterator[Path]:
    """A local path holding ``source``: the path itself, or a temporary copy of a URL under its own name."""
    if not is_url(source):
        yield Path(source)
        return
    folder = Path(tempfile.mkdtemp(prefix="paper-dashboard-input-"))
    try:
        target = folder / PurePosixPath(source.split("://", 1)[1]).name
        with _open(source) as remote, open(target, "wb") as local:
            shutil.copyfileobj(remote, local, 1 << 24)
        yield target
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def exists(location: str | Path) -> bool:
    """Whether something is at ``location`` (a local path or URL)."""
    if not is_url(location):
        return Path(location).exists()
    fs, root = _filesystem(str(location))
    return bool(fs.exists(root))


def read_text(location: str | Path, name: str) -> str:
    """The text of the file ``name`` inside the folder ``location`` (a local path or URL)."""
    if not is_url(location):
        return (Path(location) / name).read_text(encoding="utf-8")
    fs, root = _filesystem(str(location))
    with fs.open(f"{root.rstrip('/')}/{name}", "rb") as handle:
        return handle.read().decode("utf-8")


def replace_directory(built: Path, target: Path) -> None:
    """Move the complete folder ``built`` to ``target``, replacing an old index there.

    The old one is first renamed aside, so at every moment ``target`` is either the old complete index,
    nothing, or the new complete index; never a mix or a half-deleted one.
    """
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    built.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def publish(built: Path, target: str, manifest_name: str) -> None:
    """Upload the complete local folder ``built`` to the URL ``target`` (the manifest last), replacing it."""
    fs, root = _filesystem(target)
    root = root.rstrip("/")
    partial = f"{root}.partial-{os.getpid()}"
    if fs.exists(partial):
        fs.rm(partial, recursive=True)
    manifest = built / manifest_name
    for file in sorted(p for p in built.rglob("*") if p.is_file() and p != manifest):
        relative = file.relative_to(built).as_posix()
        fs.makedirs(posixpath.dirname(f"{partial}/{relative}"), exist_ok=True)
        fs.put_file(str(file), f"{partial}/{relative}")
    fs.put_file(str(built / manifest_name), f"{partial}/{manifest_name}")
    if fs.exists(root):
        fs.rm(root, recursive=True)
    fs.mv(partial, root, recursive=True)
